"""The integration project on three engines and both dbt lines, with the same data:
in-process Spark (`local[2]`, dbt-core 1.12: the `integration_builds` fixture's builds,
which test_integration_project.py checks) is the reference; dbt-core 1.11 (`.venv-dbt111`,
`make dbt111`) builds it on the other two engines, each build compared table by table
(schemas and rows) with the reference's: the in-process driver on a standalone cluster (a
master and two workers; the catalog operations, `CATALOG_OPERATIONS` in harness.py, and the
Python model) and a Spark Thrift Server (`method: thrift`; both builds, the second with
the project's data tests). One build per pair of axes: dbt 1.11's differences (dbt-core's
macros and tasks) and the engines' meet in the same builds, and every model kind and
strategy of the adapter runs on 1.11. The cluster and the server are started here from
pyspark's own scripts and jars by `dbt-s3tables-engine start`, and listen on 127.0.0.1
only; threads 8 over thrift with 30+ models loses and duplicates nothing (dbt 1.12).

Over thrift the Python model is left out: it needs `method: session` by design, and a
test below checks that it fails at compile time saying so.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dbt.adapters.s3tables.catalogs.config import ICEBERG_EXTENSIONS
from tests.functional.emulators import listening_addresses, services, services_alive
from tests.functional.harness import (
    CATALOG_OPERATIONS,
    INTEGRATION_PROJECT,
    PYTHON_MODEL,
    PYTHON_MODEL_TABLES,
    WITHOUT_DATA_TESTS,
    WITHOUT_PYTHON_MODEL,
    IntegrationBuilds,
    assert_tables_match,
    conf_probe_project,
    dbt_in,
    iceberg_rows,
    local_catalog,
    node_statuses,
    passed_run_results,
    warehouse_tables,
    write_files,
    write_profiles,
    write_project,
)
from tests.functional.server_keyed_reads import keyed_reads_on_a_server
from tests.functional.test_concurrency import SCHEMA_GROUPS, model_files
from tests.property.walks import machine_on_server, walk_keyed_reads

PROJECT = INTEGRATION_PROJECT


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spark-run")


@pytest.fixture(scope="module")
def cluster(run_dir: Path) -> Iterator[dict]:
    state = services("start", "cluster", run_dir)
    yield state
    services("stop", "cluster", run_dir)
    assert not services_alive(run_dir, "cluster")


@pytest.fixture(scope="module")
def thrift(run_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    warehouse = tmp_path_factory.mktemp("thrift-warehouse")
    state = services("start", "thrift", run_dir, "--warehouse", str(warehouse))
    yield state
    services("stop", "thrift", run_dir)
    assert not services_alive(run_dir, "thrift")


def write_profile(folder: Path, output: dict) -> None:
    write_profiles(folder, "integration_tests", output, target="engine")


def build_phase(folder: Path, phase: int, *extra: str, dbt: Path) -> dict[str, str]:
    """One build by `dbt`, every node passing; the status of each node."""
    result = dbt_in(
        folder, PROJECT, "build", "--vars", f"{{schema_phase: {phase}}}", *extra, dbt=dbt
    )
    results = passed_run_results(result, folder / "target", stderr_tail=2000, prefix=f"{dbt}: ")
    statuses = node_statuses(results)
    assert set(statuses.values()) <= {"success", "pass"}, statuses
    return statuses


def session_output(warehouse: Path, master: str) -> dict:
    return {
        "type": "s3tables",
        "method": "session",
        "master": master,
        "warehouse": str(warehouse),
        "schema": "analytics",
        "threads": 4,
    }


def thrift_output(state: dict, threads: int = 4) -> dict:
    return {
        "type": "s3tables",
        "method": "thrift",
        "host": state["host"],
        "port": state["port"],
        "warehouse": state["warehouse"],
        "schema": "analytics",
        "threads": threads,
        "connect_timeout": 5,
    }


def test_the_integration_project_on_dbt_1_11_on_a_cluster_and_over_thrift(
    tmp_path: Path,
    cluster: dict,
    thrift: dict,
    dbt111_dbt: Path,
    integration_builds: IntegrationBuilds,
) -> None:
    first, second = integration_builds.tables
    assert len(second) >= 15 and any(name.endswith(f".{PYTHON_MODEL}") for name in second)
    # A standalone cluster runs the same driver code as in process, with executors in
    # other JVMs: the first build of the catalog operations and the Python model (every
    # table written by them) is compared.
    cluster_output = session_output(tmp_path / "cluster-warehouse", cluster["master"])
    write_profile(tmp_path / "cluster", cluster_output)
    nodes = build_phase(
        tmp_path / "cluster",
        1,
        *WITHOUT_DATA_TESTS,
        "--select",
        CATALOG_OPERATIONS,
        PYTHON_MODEL,
        dbt=dbt111_dbt,
    )
    names = {node.split(".")[-1] for node in nodes}
    assert PYTHON_MODEL in names and "orders_delete_insert" in names, sorted(names)
    built = warehouse_tables(cluster_output["warehouse"])
    assert_tables_match(
        "the cluster's build",
        built,
        {name: table for name, table in first.items() if name.split(".")[-1] in names},
        "dbt-core 1.11 on a cluster",
        "dbt-core 1.12 in process",
    )
    # Thrift runs every statement in another process: both builds, the second with the
    # project's data tests (the first's: every table they read is compared after it).
    write_profile(tmp_path / "thrift", thrift_output(thrift))
    for phase, extra, reference in ((1, WITHOUT_DATA_TESTS, first), (2, (), second)):
        build_phase(tmp_path / "thrift", phase, *extra, *WITHOUT_PYTHON_MODEL, dbt=dbt111_dbt)
        assert_tables_match(
            f"build {phase} over thrift",
            warehouse_tables(thrift["warehouse"]),
            reference,
            "dbt-core 1.11 over thrift",
            "dbt-core 1.12 in process",
            left_out=PYTHON_MODEL_TABLES,
        )


def test_the_cluster_and_the_thrift_server_listen_on_loopback_only(
    cluster: dict, thrift: dict
) -> None:
    assert cluster["master"] == f"spark://127.0.0.1:{cluster['port']}"
    for port in (cluster["port"], cluster["web_port"], thrift["port"]):
        assert listening_addresses(port) == {"127.0.0.1"}, port


def test_python_model_over_thrift_fails_at_compile_time(tmp_path: Path, thrift: dict) -> None:
    folder = tmp_path / "thrift-python"
    write_profile(folder, thrift_output(thrift))
    result = dbt_in(folder, PROJECT, "compile", "--select", PYTHON_MODEL)
    assert result.returncode != 0
    assert f"Python model `{PYTHON_MODEL}` needs `method: session`" in result.stdout


def test_unreachable_thrift_server_fails_fast_naming_host_and_port(tmp_path: Path) -> None:
    folder = tmp_path / "nowhere"
    write_profile(
        folder,
        {
            **thrift_output({"host": "127.0.0.1", "port": 9, "warehouse": str(tmp_path / "wh")}),
            "connect_timeout": 3,
        },
    )
    result = dbt_in(folder, PROJECT, "run", "--select", "stg_customers")
    assert result.returncode != 0
    assert "Cannot reach the Spark Thrift Server at 127.0.0.1:9 within 3 s" in result.stdout


def test_threads_eight_over_thrift(tmp_path: Path, thrift: dict) -> None:
    project = write_project(
        tmp_path / "many",
        "many",
        profile="integration_tests",
        settings={"config-version": 2},
        files={"seeds/numbers.csv": "id\n" + "\n".join(str(i) for i in range(1, 21)) + "\n"},
    )
    write_files(project / "models", model_files())
    folder = tmp_path / "many-profile"
    write_profile(folder, thrift_output(thrift, threads=8))
    for _ in range(2):
        result = dbt_in(folder, project, "build")
        assert result.returncode == 0, result.stdout[-6000:]
        assert "locked" not in result.stdout
    catalog = local_catalog(thrift["warehouse"])
    for group in SCHEMA_GROUPS:
        namespace = f"analytics_{group}"
        for relation in catalog.list_relations(namespace):
            if relation.kind != "table" or relation.name.startswith("table_"):
                continue
            rows = catalog.catalog.load_table((namespace, relation.name)).scan().to_arrow()
            ids = rows.column("id").to_pylist()
            # 20 ids, each exactly once after two builds: no lost or duplicated rows.
            assert sorted(ids) == list(range(1, 21)), (namespace, relation.name)


def test_spark_conf_reaches_the_thrift_session(tmp_path: Path, thrift: dict) -> None:
    project = conf_probe_project(tmp_path)
    folder = tmp_path / "conf-profile"
    # Two threads, two server sessions: each gets the setting.
    conf = {"spark.sql.shuffle.partitions": 2}
    write_profile(folder, {**thrift_output(thrift, threads=2), "spark_conf": conf})
    result = dbt_in(folder, project, "run")
    assert result.returncode == 0, result.stdout[-4000:]
    rows = iceberg_rows(local_catalog(thrift["warehouse"]), "analytics", "conf_probe")
    assert rows == [{"shuffle_partitions": "2"}]

    # A key Spark reads only at launch is refused, naming it; one the server already has
    # at the asked value (Iceberg's SQL extensions) is in effect and passes.
    launch_only = {"spark.executor.memory": "3g", "spark.sql.extensions": ICEBERG_EXTENSIONS}
    write_profile(folder, {**thrift_output(thrift), "spark_conf": launch_only})
    refused = dbt_in(folder, project, "run")
    assert refused.returncode != 0
    assert (
        "The Spark Thrift Server refused `spark_conf` `spark.executor.memory`: Spark reads it "
        "only when it starts" in refused.stdout
    ), refused.stdout[-4000:]
    assert "spark.sql.extensions`" not in refused.stdout


def test_a_server_on_another_warehouse_is_named_when_dbt_connects(
    tmp_path: Path, thrift: dict
) -> None:
    """A profile whose catalog is not the server's (its warehouse elsewhere): refused when
    dbt connects, naming both warehouses and the fix, before anything is built. Before,
    every table was built on the server and each incremental model's first build then
    failed with "Table does not exist" (dbt's process reads their metadata in the
    profile's catalog)."""
    folder = tmp_path / "elsewhere"
    other = tmp_path / "other-warehouse"
    write_profile(folder, {**thrift_output(thrift), "warehouse": str(other)})
    result = dbt_in(folder, PROJECT, "run", "--select", "stg_customers")
    assert result.returncode != 0
    assert (
        f"writes its tables in its catalog `local`, warehouse `file://{thrift['warehouse']}"
        in result.stdout
    ), result.stdout[-4000:]
    assert f"the profile's catalog `local` is warehouse `file://{other}" in result.stdout
    assert "Fix: point the profile at the server's warehouse" in result.stdout
    assert not other.exists() or not any(other.rglob("*.parquet"))


def test_run_query_of_a_statement_without_a_result_over_thrift(
    tmp_path: Path, thrift: dict
) -> None:
    """`run_query()` of DDL works over thrift as in process (no rows); dbt-spark's PyHive
    fetch failed with "'NoneType' object is not iterable"."""
    folder = tmp_path / "ddl"
    macro = (
        "{% macro rows_of(sql) %}{{ log('rows: ' ~ run_query(sql) | length, info=true) }}"
        "{% endmacro %}"
    )
    project = write_project(
        folder,
        "ddl",
        output=thrift_output(thrift, threads=1),
        files={"macros/rows_of.sql": macro},
    )
    args = '{sql: "create namespace if not exists ddl_probe"}'
    result = dbt_in(folder, project, "run-operation", "rows_of", "--args", args)
    assert result.returncode == 0, result.stdout[-4000:]
    assert "rows: 0" in result.stdout, result.stdout[-4000:]


def test_keyed_upstream_changes_are_read_file_by_file_over_thrift(
    tmp_path: Path, thrift: dict
) -> None:
    """Before, a keyed read over a server compared two whole snapshots of the upstream."""
    keyed_reads_on_a_server(tmp_path, thrift_output(thrift, threads=1), thrift["warehouse"])


def test_the_promises_keyed_walk_holds_over_thrift(thrift: dict, tmp_path: Path) -> None:
    """The promises' state machine (tests/property) over the Thrift server: its keyed walk
    (merge-on-read ranges read file by file across a committing pre-hook, a compaction,
    an undo and a failing run; every reader; a skipped build), every promise checked
    after every step against the warehouse the server writes."""
    server = {"method": "thrift", "host": thrift["host"], "port": thrift["port"]}
    walk_keyed_reads(machine_on_server(thrift["warehouse"], tmp_path, server))
