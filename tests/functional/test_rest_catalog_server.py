"""`catalog_type: rest` against Apache Iceberg's own REST catalog test server
(`org.apache.iceberg.rest.RESTCatalogServer` 1.11.0, from iceberg-open-api's test
fixtures; `make emulators` installs it), started by this module on a free port: format-v3
tables commit through it. The integration project is built on such a server by Spark 4.1
(tests/spark41/test_integration_on_spark41.py: one build per pair of axes, the Spark line
and the catalog), every table compared with the in-process builds'.

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
    dbt_in,
    delete_file_formats,
    passed_run_results,
    write_project,
)
from tests.functional.test_iceberg_v3 import EVENTS, SCHEMA_YML

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
