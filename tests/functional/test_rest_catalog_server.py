"""`catalog_type: rest` against Apache Iceberg's own REST catalog test server
(`org.apache.iceberg.rest.RESTCatalogServer` 1.11.0, from iceberg-open-api's test
fixtures; `make emulators` installs it), started by this module on a free port:

- the integration project's catalog operations (`CATALOG_OPERATIONS` in harness.py, with
  their data tests) built twice through Spark, the second time with `schema_phase: 2`
  (schemas evolve, incremental models converge), every result success or pass both times,
  the data tests on snapshots (`.history`) and `tblproperties` included: this server keeps
  them, as a real catalog does;
- the adapter's own PyIceberg catalog object (`catalog_config_for` + `IcebergCatalog`,
  from the same kind of profile) on the built catalog: the tables listed, the column
  phase 2 adds to `customers_evolving`, and the snapshots of the append-only
  incremental `orders_appended` (more than one).

The server is a real Iceberg catalog (Iceberg's `JdbcCatalog` behind Iceberg's REST
adapter): no gap needed a workaround in the build. Test-only settings, written down:
- its catalog database is H2 in memory (the server's default is SQLite, whose driver is
  14 MB of native libraries), kept while the server runs;
- tables live in a local folder (`file:` URIs, HadoopFileIO on the server, Spark and
  PyIceberg read and write the same files); the profile's `warehouse` is that folder's
  URI, which this server does not need (it ignores the `warehouse` of `GET /v1/config`);
- it listens on every interface (Jetty's default; it has no host setting) on a port
  picked free on 127.0.0.1, and only 127.0.0.1 is used.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyiceberg.manifest import FileFormat

from dbt.adapters.s3tables.catalogs.config import catalog_config_for
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.credentials import S3TablesCredentials
from tests.functional.emulators import iceberg_rest_server
from tests.functional.harness import (
    CATALOG_OPERATIONS_ONLY,
    INTEGRATION_PROJECT,
    PHASE_2,
    dbt_in,
    delete_file_formats,
    node_statuses,
    passed_run_results,
    write_profiles,
    write_project,
)
from tests.functional.test_iceberg_v3 import EVENTS, SCHEMA_YML

PROJECT = INTEGRATION_PROJECT
SCHEMA = "analytics"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(catalog URI, warehouse URI) of a fresh server."""
    root = tmp_path_factory.mktemp("iceberg-rest")
    warehouse = root / "warehouse"
    with iceberg_rest_server(warehouse, root / "server.log") as uri:
        yield uri, warehouse.as_uri()


def _profile_keys(uri: str, warehouse: str) -> dict:
    return {
        "type": "s3tables",
        "method": "session",
        "master": "local[2]",
        "schema": SCHEMA,
        "threads": 2,
        "catalog_type": "rest",
        "catalog_uri": uri,
        "warehouse": warehouse,
    }


def _build(folder: Path, *extra: str) -> dict:
    result = dbt_in(folder, PROJECT, "build", *extra, timeout=900)
    return passed_run_results(result, folder / "target")


@pytest.fixture(scope="module")
def builds(server: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    """run_results of the two builds of the integration project on the server."""
    folder = tmp_path_factory.mktemp("dbt")
    write_profiles(folder, "integration_tests", _profile_keys(*server), target="rest")
    first = _build(folder, *CATALOG_OPERATIONS_ONLY)
    # The incremental runs' commits through the server; the data tests ran on the first
    # build (the same tests pass on the in-process builds after both).
    second = _build(folder, *CATALOG_OPERATIONS_ONLY, *PHASE_2, "--exclude-resource-type", "test")
    return first, second


def test_integration_project_builds_twice(builds: tuple[dict, dict]) -> None:
    for results in builds:
        statuses = node_statuses(results)
        assert statuses, "dbt build ran nothing"
        assert set(statuses.values()) <= {"success", "pass"}, statuses
    first, _ = builds
    kinds = {r["unique_id"].split(".")[0] for r in first["results"]}
    assert {"seed", "model", "test", "snapshot"} <= kinds
    # The data tests reading what only a real catalog keeps ran (and passed above).
    ran = {
        r["unique_id"].split(".")[2] for r in first["results"] if r["unique_id"].startswith("test.")
    }
    assert {
        "orders_partitioned_properties",
        "customer_tiers_upserted",
        "orders_appended_batches",
    } <= ran


def test_adapter_catalog_sees_the_built_tables(
    builds: tuple[dict, dict], server: tuple[str, str]
) -> None:
    uri, warehouse = server
    credentials = S3TablesCredentials.from_dict(
        {"schema": SCHEMA, "catalog_type": "rest", "catalog_uri": uri, "warehouse": warehouse}
    )
    config = catalog_config_for(credentials)
    assert config.catalog_type == "rest"
    iceberg = IcebergCatalog(config)

    assert SCHEMA in iceberg.list_namespaces()
    tables = {r.name for r in iceberg.list_relations(SCHEMA) if r.kind == "table"}
    assert {"customers", "orders", "orders_appended", "customers_evolving"} <= tables

    # Phase 2 adds `name_length` to customers_evolving (append_new_columns).
    columns = [c.name for c in iceberg.columns(SCHEMA, "customers_evolving", "table")]
    assert "name_length" in columns, columns

    # orders_appended: created by the first build with the first orders, the rest
    # appended by the second (INSERT INTO: a snapshot of its own).
    table = iceberg.load_table(SCHEMA, "orders_appended")
    assert len(table.snapshots()) > 1, table.snapshots()
    current = table.current_snapshot()
    assert current is not None and current.summary is not None
    assert current.summary.operation.value == "append", current.summary
    orders = len((PROJECT / "seeds" / "orders.csv").read_text().splitlines()) - 1
    assert int(current.summary["total-records"]) == orders, current.summary


def test_format_v3_tables_commit_through_the_server(
    server: tuple[str, str], tmp_path: Path
) -> None:
    """On a REST catalog the server writes the metadata, so PyIceberg's commits to v3 tables
    (the incremental state, schema and partition evolution, docs) work as on v2; the
    upgrade of a v2 table goes through Spark SQL, as everywhere."""
    keys = {**_profile_keys(*server), "schema": "v3"}
    project = write_project(
        tmp_path / "project",
        "v3",
        output=keys,
        profiles_dir=tmp_path,
        files={
            "models/events.sql": EVENTS,
            "models/schema.yml": SCHEMA_YML,
            "models/plain.sql": "{{ config(materialized='table') }} select 1 as id",
        },
    )
    for phase in (1, 2, 3):
        result = dbt_in(tmp_path, project, "run", "--vars", f"{{phase: {phase}}}")
        passed_run_results(result, tmp_path / "target", prefix=f"phase {phase}: ")
    upgrade = ("run-operation", "s3tables_upgrade_format_version", "--args", "{table: v3.plain}")
    result = dbt_in(tmp_path, project, *upgrade)
    assert "upgraded `v3.plain` from Iceberg format v2 to v3" in result.stdout, result.stdout

    uri, warehouse = server
    credentials = S3TablesCredentials.from_dict(
        {"schema": "v3", "catalog_type": "rest", "catalog_uri": uri, "warehouse": warehouse}
    )
    iceberg = IcebergCatalog(catalog_config_for(credentials))
    events = iceberg.load_table("v3", "events")
    assert events.format_version == 3
    assert [f.name for f in events.schema().fields] == ["id", "label", "score"]
    assert events.schema().find_field("id").doc == "the event's key"
    assert [f.name for f in events.spec().fields] == ["label"]
    assert FileFormat.PUFFIN in delete_file_formats(events)
    assert len(events.scan().to_arrow()) == 100
    assert iceberg.load_table("v3", "plain").format_version == 3
