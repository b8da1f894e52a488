"""The dbt package `s3tables_spark/` (this adapter's semantics for dbt-spark, for dbt Cloud
jobs and dbt v2) runs the adapter's own functional tests: each class below is one of
theirs, unchanged, run on a second target: dbt-spark (`type: spark`, `method: thrift`)
plus the package, on a Spark Thrift Server that `dbt-s3tables-engine start thrift`
starts here, with the root-project shim dbt 1.11 needs (docs/dbt-cloud.md). The same
classes run on the adapter in their own modules: a difference between the two targets
fails one of them.

Also here: the shim, the legacy flag that makes the shim unnecessary, and what the
package refuses.
"""

from __future__ import annotations

import datetime
import decimal
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from dbt.tests.fixtures.project import TestProjInfo
from dbt.tests.util import get_connection, run_dbt, run_dbt_and_capture
from dbt.version import __version__ as dbt_version
from dbt_common.exceptions import DbtDatabaseError
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

import tests.functional.adapter.test_constraints as constraints
import tests.functional.adapter.test_empty as empty
import tests.functional.adapter.test_simple_snapshot as snapshots
import tests.functional.test_column_shapes as shapes
import tests.functional.test_incremental_strategies as strategies
import tests.functional.test_latest_version_pointer as latest_version_pointer
import tests.functional.test_model_state as model_state
import tests.functional.test_no_op_runs as no_op_runs
import tests.functional.test_overlapping_runs as overlapping
import tests.functional.test_run_modes as run_modes
import tests.functional.test_schema_change_modes as replacing_modes
import tests.functional.test_schema_evolution_runs as evolution_runs
import tests.functional.test_seeds as seeds
import tests.property.package_machine as package_promises
from dbt.adapters.s3tables.sql.text import split_statements
from tests.functional.emulators import services, services_alive
from tests.functional.harness import (
    INTEGRATION_PROJECT,
    PHASE_2,
    PYTHON_MODEL,
    WITHOUT_DATA_TESTS,
    WITHOUT_PYTHON_MODEL,
    IntegrationBuilds,
    dbt_command,
    dbt_env,
    dbt_in,
    latest_snapshot_id,
    local_catalog,
    node_statuses,
    passed_run_results,
    read_run_results,
    relation,
    snapshot_count,
    table_contents,
    warehouse_tables,
    write_profiles,
    write_project,
)
from tests.property.package_machine import PackagePromisesMachine
from tests.property.test_promises import BOUNDED

PACKAGE = Path(__file__).resolve().parents[2] / "s3tables_spark"
# What docs/dbt-cloud.md tells a project to add (dbt 1.11 uses a package's override of a
# built-in materialization only when the root project declares it).
SHIM = (PACKAGE / "shim" / "s3tables_spark_shim.sql").read_text()


@pytest.fixture(scope="module")
def thrift_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    run_dir = tmp_path_factory.mktemp("package-thrift")
    warehouse = tmp_path_factory.mktemp("package-warehouse")
    state = services("start", "thrift", run_dir, "--warehouse", str(warehouse))
    yield state
    services("stop", "thrift", run_dir)
    assert not services_alive(run_dir, "thrift")


def spark_output(state: dict) -> dict:
    """dbt-spark's profile output for the Thrift server."""
    return {
        "type": "spark",
        "method": "thrift",
        "host": state["host"],
        "port": state["port"],
        "threads": 4,
        "connect_retries": 0,
    }


class OnDbtSpark:
    """dbt-spark on the Thrift server, with the package listed in packages.yml."""

    @pytest.fixture(scope="class")
    def dbt_profile_target(self, thrift_server: dict) -> dict:
        return spark_output(thrift_server)

    @pytest.fixture(scope="class")
    def packages(self) -> dict:
        return {"packages": [{"local": str(PACKAGE)}]}


def dbt_version_tuple() -> tuple[int, int]:
    return tuple(int(part) for part in dbt_version.split(".")[:2])  # type: ignore[return-value]  # two parts


def install_package(project_root: Path) -> None:
    """The shim in the project's macros/, and the package where `dbt deps` puts a local
    one (without running it: in a test process it unregisters the adapter the tests' first
    queries need), named in packages.yml when the project has none (dbt 1.12 refuses
    installed packages that packages.yml does not list)."""
    packages = project_root / "packages.yml"
    if not packages.exists():
        packages.write_text(f"packages:\n  - local: {PACKAGE}\n")
    shim = project_root / "macros" / "s3tables_spark_shim.sql"
    shim.parent.mkdir(exist_ok=True)
    shim.write_text(SHIM)
    installed = project_root / "dbt_packages" / "s3tables_spark"
    installed.parent.mkdir(exist_ok=True)
    installed.symlink_to(PACKAGE, target_is_directory=True)


class OnDbtSparkWithThePackage(OnDbtSpark):
    """Runs a test class of the adapter on dbt-spark plus the package."""

    @pytest.fixture(scope="class")
    def project(self, project_setup: TestProjInfo, project_files: None) -> Iterator[TestProjInfo]:
        install_package(Path(project_setup.project_root))
        without_s3tables_rules(Path(project_setup.project_root))
        project_setup.run_sql = typed_queries(project_setup)  # type: ignore[method-assign]  # this project only
        yield project_setup
        drop_tables(project_setup)


def without_s3tables_rules(project_root: Path) -> None:
    """The package's var `s3tables_rules: false`, as the adapter's tests run on its
    embedded catalog (where the profile's `s3tables_rules` is off): the server's catalog
    here is the embedded one, which has views. The rules themselves are tested on their
    own (TestS3TablesRules)."""
    project_file = project_root / "dbt_project.yml"
    project = yaml.safe_load(project_file.read_text())
    project.setdefault("vars", {}).setdefault("s3tables_rules", False)
    project_file.write_text(yaml.safe_dump(project))


# PyHive hands these types over as text; Spark in process, as Python values.
PARSED_TYPES: dict[str, Callable[[str], Any]] = {
    "DATE_TYPE": datetime.date.fromisoformat,
    "TIMESTAMP_TYPE": datetime.datetime.fromisoformat,
    "DECIMAL_TYPE": decimal.Decimal,
}


def typed_queries(project: TestProjInfo) -> Callable[..., Any]:
    """`project.run_sql`, statement by statement, whose rows hold dates, timestamps and
    decimals as Python values, as the adapter's tests read them from Spark in process
    (PyHive gives their text): the upstream tests' expected rows then apply unchanged."""

    def run_sql(sql: str, fetch: str | None = None) -> Any:
        adapter = project.adapter
        sql = sql.format(schema=project.test_schema, database=adapter.quote(project.database))
        with get_connection(adapter) as connection:
            cursor = connection.handle.cursor()
            # A script (the snapshot suite's fixtures) runs statement by statement, as
            # the adapter runs it: the Thrift server runs one statement a call.
            for statement in split_statements(sql):
                cursor.execute(statement)
            if fetch is None:
                return None
            parsers = [PARSED_TYPES.get(column[1]) for column in cursor.description or []]
            rows = [
                tuple(
                    parse(value) if parse and isinstance(value, str) else value
                    for parse, value in zip(parsers, row, strict=True)
                )
                for row in cursor.fetchall()
            ]
            if fetch == "one":
                return rows[0] if rows else None
            return rows

    return run_sql


def drop_tables(project: TestProjInfo) -> None:
    """Drops the test schema's tables and the project's views: dbt-spark drops a schema with
    CASCADE, which the embedded Iceberg catalog refuses for a namespace that holds any
    (SHOW TABLES lists no Iceberg view, so each model's name is tried as a view)."""
    tables = {
        row[1]
        for row in project.run_sql(f"show tables in {project.test_schema}", fetch="all")
        if not row[2]  # a session's temporary view
    }
    models = {path.stem for path in Path(project.project_root, "models").glob("*.sql")}
    for name in sorted(tables | models):
        relation = f"{project.test_schema}.`{name}`"
        if name in tables:
            project.run_sql(f"drop table if exists {relation}")
        else:
            try:
                project.run_sql(f"drop view if exists {relation}")
            except DbtDatabaseError:  # a model that built nothing, or a table
                continue


# The probe's INSERT through `statement` instead of `run_query`: dbt-spark over thrift
# fails to fetch the result of a statement that returns no rows ("'NoneType' object is not
# iterable"). The probe records the same setting; the test's assertions are unchanged.
PROBE_MACRO_FOR_DBT_SPARK = strategies.PROBE_MACRO.replace(
    """{% do run_query("insert into " ~ target.schema ~ ".mode_probe values ('"
        ~ label ~ "', '" ~ value ~ "')") %}""",
    """{% call statement('probe') %}insert into {{ target.schema }}.mode_probe values
        ('{{ label }}', '{{ value }}'){% endcall %}""",
)
assert PROBE_MACRO_FOR_DBT_SPARK != strategies.PROBE_MACRO


class TestAppend(OnDbtSparkWithThePackage, strategies.TestAppend):
    pass


class TestMerge(OnDbtSparkWithThePackage, strategies.TestMerge):
    def test_the_statement_reads_only_the_target_rows_in_the_key_span(self, project, outcomes):
        """A listed deviation (docs/dbt-cloud.md): the package has no key span, since
        dbt-spark reads the model through an uncached view; the rows are the same."""
        merge = next((Path(project.project_root) / "target" / "run").rglob("merge_key_span.sql"))
        assert merge.read_text().startswith("MERGE INTO")
        assert "BETWEEN" not in merge.read_text()


class TestDeleteInsert(OnDbtSparkWithThePackage, strategies.TestDeleteInsert):
    pass


class TestInsertOverwrite(OnDbtSparkWithThePackage, strategies.TestInsertOverwrite):
    @pytest.fixture(scope="class")
    def macros(self) -> dict:
        return {"probe.sql": PROBE_MACRO_FOR_DBT_SPARK}


class TestInsertOverwriteNeedsPartitionBy(
    OnDbtSparkWithThePackage, strategies.TestInsertOverwriteNeedsPartitionBy
):
    pass


class TestScd2(OnDbtSparkWithThePackage, strategies.TestScd2):
    pass


class TestFailedRunWritesNothing(OnDbtSparkWithThePackage, strategies.TestFailedRunWritesNothing):
    pass


class TestBadConfigWritesNothing(OnDbtSparkWithThePackage, strategies.TestBadConfigWritesNothing):
    pass


# --- the adapter's schema evolution and state tests, unchanged -----------------------


class TestReplacingModes(OnDbtSparkWithThePackage, replacing_modes.TestReplacingModes):
    pass


class TestModesRefusedOnFirstRun(
    OnDbtSparkWithThePackage, replacing_modes.TestModesRefusedOnFirstRun
):
    pass


class TestFullRefreshAfterAStoppedRebuild(
    OnDbtSparkWithThePackage, evolution_runs.TestFullRefreshAfterAStoppedRebuild
):
    pass


class TestChunkedRebuildOfScd2(OnDbtSparkWithThePackage, evolution_runs.TestChunkedRebuildOfScd2):
    pass


class TestModelState(OnDbtSparkWithThePackage, model_state.TestModelState):
    pass


class TestLastProcessedValueNeverGoesBack(
    OnDbtSparkWithThePackage, model_state.TestLastProcessedValueNeverGoesBack
):
    pass


class TestWriteMode(OnDbtSparkWithThePackage, model_state.TestWriteMode):
    pass


class TestAnUnchangedRunCommitsNoMetadata(
    OnDbtSparkWithThePackage, no_op_runs.TestAnUnchangedRunCommitsNoMetadata
):
    pass


# --- columns of every shape, run after run ---------------------------------------------


class TestNestedTypesAreNoChange(OnDbtSparkWithThePackage, shapes.TestNestedTypesAreNoChange):
    pass


class TestAStructOfMoreThan25Fields(OnDbtSparkWithThePackage, shapes.TestAStructOfMoreThan25Fields):
    pass


class TestPartitionByAliases(OnDbtSparkWithThePackage, shapes.TestPartitionByAliases):
    pass


class TestASqlHeaderOfSeveralStatements(
    OnDbtSparkWithThePackage, shapes.TestASqlHeaderOfSeveralStatements
):
    pass


class TestAContractedTableOfNestedColumnsIsRebuilt(
    OnDbtSparkWithThePackage, shapes.TestAContractedTableOfNestedColumnsIsRebuilt
):
    pass


class TestContractTypesAreExact(OnDbtSparkWithThePackage, shapes.TestContractTypesAreExact):
    pass


# --- seeds, snapshots, contracts and --empty ---------------------------------------------


class TestSeedValuesAndTypes(OnDbtSparkWithThePackage, seeds.TestSeedValuesAndTypes):
    pass


class TestReseed(OnDbtSparkWithThePackage, seeds.TestReseed):
    pass


class TestEmptySeed(OnDbtSparkWithThePackage, seeds.TestEmptySeed):
    pass


class TestSeedBadValue(OnDbtSparkWithThePackage, seeds.TestSeedBadValue):
    pass


class TestSimpleSnapshot(OnDbtSparkWithThePackage, snapshots.TestSimpleSnapshot):
    pass


class TestSnapshotCheck(OnDbtSparkWithThePackage, snapshots.TestSnapshotCheck):
    pass


class TestSnapshotNewRecordTimestampMode(
    OnDbtSparkWithThePackage, snapshots.TestSnapshotNewRecordTimestampMode
):
    pass


class TestSnapshotMultiUniqueKey(OnDbtSparkWithThePackage, snapshots.TestSnapshotMultiUniqueKey):
    pass


class TestTableConstraintsColumnsEqual(
    OnDbtSparkWithThePackage, constraints.TestTableConstraintsColumnsEqual
):
    pass


class TestTableContractSqlHeader(OnDbtSparkWithThePackage, constraints.TestTableContractSqlHeader):
    pass


class TestTableConstraintsRollback(
    OnDbtSparkWithThePackage, constraints.TestTableConstraintsRollback
):
    pass


class TestEmpty(OnDbtSparkWithThePackage, empty.TestEmpty):
    pass


class TestAnEmptyRebuildForgetsWhatItReplaced(
    OnDbtSparkWithThePackage, run_modes.TestAnEmptyRebuildForgetsWhatItReplaced
):
    pass


@empty.NEEDS_SEED_EMPTY_OPTION
class TestEmptySeedFlag(OnDbtSparkWithThePackage, empty.TestEmptySeedFlag):
    pass


class TestFullIncrementalRefreshResumes(
    OnDbtSparkWithThePackage, evolution_runs.TestFullIncrementalRefreshResumes
):
    """A listed deviation (docs/dbt-cloud.md): the package's log lines. Jinja cannot catch
    the failing chunk's error to say where the rebuild stopped, so each chunk's line is
    logged before it runs; its response names the chunks, not the rows (dbt-spark's
    responses carry no row counts). The rows and the commits are asserted unchanged."""

    STOPPED_LINES = ("events: chunk 3/4 [2024-01-03 00:00:00, 2024-01-05 00:00:00)",)
    RESUMED_LINES = (
        "resuming full_incremental_refresh at 2024-01-03 00:00:00",
        "FULL INCREMENTAL REFRESH resumed in 2 chunks",
    )


# --- the shim and dbt's legacy flag ----------------------------------------------------

TYPO_MODEL = "{{ config(materialized='incremental', unique_ky='id') }}\nselect 1 as id"


class PackageWithoutTheShim(OnDbtSpark):
    """dbt-spark with the package installed, and no shim in the project."""

    @pytest.fixture(scope="class")
    def models(self) -> dict:
        return {"typo.sql": TYPO_MODEL}

    @pytest.fixture(scope="class")
    def project(self, project_setup: TestProjInfo, project_files: None) -> Iterator[TestProjInfo]:
        run_dbt(["deps"])
        run_dbt(["parse"])
        yield project_setup
        drop_tables(project_setup)


class TestWithoutTheShimDbtSparkRuns(PackageWithoutTheShim):
    """Without the shim (and without the legacy flag), dbt 1.11 runs dbt-spark's own
    materialization, not the package's: the reason the shim exists."""

    def test_the_package_is_not_used(self, project: TestProjInfo) -> None:
        _, output = run_dbt_and_capture(["run"])
        assert "unique_ky" not in output, output


class TestLegacyFlagUsesThePackageWithoutTheShim(PackageWithoutTheShim):
    """`require_explicit_package_overrides_for_builtin_materializations: false` makes dbt
    1.11 use the package's materializations without the shim (dbt warns it is
    deprecated)."""

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return {"flags": {"require_explicit_package_overrides_for_builtin_materializations": False}}

    def test_the_package_is_used(self, project: TestProjInfo) -> None:
        _, output = run_dbt_and_capture(["run"])
        assert "config `unique_ky`: neither dbt nor s3tables reads this key" in output, output
        assert "did you mean `unique_key`?" in output, output


# --- what the package refuses where the adapter does more -----------------------------

PARTITIONED_SQL = """
{{ config(materialized='incremental', incremental_strategy='append',
          partition_by=var('partition_by', ['grp'])) }}
select 1 as id, 'a' as grp
"""


class TestAChangedPartitioningIsRefused(OnDbtSparkWithThePackage):
    """The adapter evolves a table's partition spec in place; the package cannot, so a
    changed `partition_by` is refused before anything is written (never ignored), and
    `--full-refresh`, the fix it names, rebuilds the table with the new spec."""

    @pytest.fixture(scope="class")
    def models(self) -> dict:
        return {"parted.sql": PARTITIONED_SQL}

    def test_refused_then_rebuilt_by_full_refresh(self, project: TestProjInfo) -> None:
        table = relation(project, "parted")
        run_dbt(["run"])
        before = latest_snapshot_id(project, table)
        changed = ["--vars", "{partition_by: ['id']}"]
        result = run_dbt(["run", *changed], expect_pass=False)
        message = result.results[0].message
        assert (
            "Model `parted`, config `partition_by`: the table is partitioned by [grp] and "
            "the model says [id]"
        ) in message, message
        assert "dbt run -s parted --full-refresh" in message, message
        assert latest_snapshot_id(project, table) == before
        run_dbt(["run", "--full-refresh", *changed])
        run_dbt(["run", *changed])
        assert snapshot_count(project, table) == 3


# --- S3 Tables' rules (var `s3tables_rules`, on by default) ---------------------------------

RULES_VERSIONS = latest_version_pointer.VERSIONS_YML


class TestS3TablesRules(OnDbtSpark):
    """Under S3 Tables' rules (the package's default), what S3 Tables would refuse is
    refused before anything is written, in the adapter's sentences: a view, a latest
    version pointer (dbt 1.12 creates a view after the version is built: the version is
    refused before it is), a name outside the rules."""

    @pytest.fixture(scope="class")
    def models(self) -> dict:
        models = {
            "a_view.sql": "{{ config(materialized='view') }} select 1 as id",
            "BadName.sql": "{{ config(materialized='table') }} select 1 as id",
            "dim_v1.sql": "{{ config(materialized='table') }} select 1 as id",
            "dim_v2.sql": "{{ config(materialized='table') }} select 2 as id",
        }
        if dbt_version_tuple() >= (1, 12):
            models["schema.yml"] = RULES_VERSIONS
        return models

    @pytest.fixture(scope="class")
    def project(self, project_setup: TestProjInfo, project_files: None) -> Iterator[TestProjInfo]:
        install_package(Path(project_setup.project_root))
        yield project_setup
        drop_tables(project_setup)

    def test_refused_before_anything_is_written(self, project: TestProjInfo) -> None:
        results = {
            r.node.name + (f"_v{r.node.version}" if r.node.version else ""): r
            for r in run_dbt(["run"], expect_pass=False)
        }
        assert results["a_view"].message.startswith(
            "Compilation Error in model a_view"
        ) and "Model `a_view`: S3 Tables has no views. Fix: materialize it as `table`" in (
            results["a_view"].message
        )
        assert "table name `BadName` breaks the S3 Tables rules" in results["BadName"].message
        tables = {
            row[1] for row in project.run_sql(f"show tables in {project.test_schema}", fetch="all")
        }
        assert not {"a_view", "badname"} & tables
        if dbt_version_tuple() >= (1, 12):
            assert "its `latest_version_pointer` is a view dbt would create" in (
                results["dim_v2"].message
            )
            assert "dim_v2" not in tables and "dim_v1" in tables


INCREMENTAL_BY_ID = "{{ config(materialized='incremental', unique_key='id') }}"


class TestDbtsOwnKeysUnderTheFailFlagAndWarnError(OnDbtSparkWithThePackage):
    """Every key dbt sets on a node itself (dbt 1.12 adds `latest_version_pointer` and
    `on_error` to every model's config) is known: under the package's
    `s3tables_fail_on_unknown_config_keys` and dbt's `--warn-error` (which makes every
    warning an error), a model, a versioned model, a seed and a snapshot build."""

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return {"vars": {"s3tables_fail_on_unknown_config_keys": True}}

    @pytest.fixture(scope="class")
    def models(self) -> dict:
        return {
            "plain.sql": "{{ config(materialized='table') }} select 1 as id",
            "dim_v1.sql": f"{INCREMENTAL_BY_ID} select 1 as id",
            "dim_v2.sql": f"{INCREMENTAL_BY_ID} select 2 as id",
            "versions.yml": "models:\n  - name: dim\n    latest_version: 2\n"
            "    versions:\n      - v: 1\n      - v: 2\n",
        }

    @pytest.fixture(scope="class")
    def seeds(self) -> dict:
        return {"people.csv": "id,name\n1,ann\n"}

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict:
        return {
            "people_history.sql": "{% snapshot people_history %}"
            "{{ config(unique_key='id', strategy='check', check_cols='all') }}"
            "select * from {{ ref('people') }}{% endsnapshot %}"
        }

    def test_every_node_builds(self, project: TestProjInfo) -> None:
        results = run_dbt(["--warn-error", "build"])
        assert len(results) == 5


# --- two dbt Cloud jobs running one model at once -----------------------------------------

# The upstream: batch n appends ids 3n-2 to 3n.
OVERLAP_EVENTS = overlapping.EVENTS
OVERLAP_READERS = {
    name: overlapping.READERS[name].replace("4000", "2000") for name in ("by_max", "by_watermark")
}
# A chunked rebuild both jobs run at once (batch 2 adds a column: every row rebuilt, in
# one chunk per day).
OVERLAP_REBUILT = f"""
{{{{ config(materialized='incremental', unique_key='id',
    on_schema_change='full_incremental_refresh',
    full_incremental_refresh={{'event_time': 'ts', 'chunk': 'day'}}) }}}}
select id, timestamp'2024-01-01 00:00:00' + make_interval(0, 0, 0, cast(id as int)) as ts
{{% if var('batch', 1) | int >= 2 %}}, id * 10 as w{{% endif %}}
from {{{{ ref('events') }}}} where {overlapping.PAUSE.replace("4000", "2000")}
{{% if is_incremental() %}} and id > (select max(id) from {{{{ this }}}}) {{% endif %}}
"""


# Iceberg refusing a loser's write or publish outright: a change of the table's refs (the
# run's branch, or main taking it) made while the other job's commit changed them, which
# Iceberg does not retry; a chunk written to a branch the other job's rebuild replaced the
# table's metadata under (a REPLACE commits its whole metadata); main moved by the other
# job between the run's check of main and its `fast_forward` (Iceberg's own check refuses).
ICEBERG_REFUSALS = (
    "CommitFailedException: Table metadata refresh is required",
    "Cannot use branch (does not exist)",
    "Cannot fast-forward: main is not an ancestor of",
)


def test_overlapping_jobs_write_each_row_once(tmp_path: Path, thrift_server: dict) -> None:
    """Two jobs running the same models at once, each planning from the same table state
    (the models' queries sleep): every row is written once, one job of each pair fails in
    one sentence saying nothing was written, and the next run completes it, as on the
    adapter (test_overlapping_runs.py). Before the run branch, both jobs appended the
    same rows, and both rebuilds appended the same chunks."""
    schema = "overlap"
    project = write_project(
        tmp_path / "project",
        "overlap",
        output={**spark_output(thrift_server), "schema": schema},
        files={
            "models/events.sql": OVERLAP_EVENTS,
            "models/rebuilt.sql": OVERLAP_REBUILT,
            **{f"models/{name}.sql": sql for name, sql in OVERLAP_READERS.items()},
        },
        settings={"vars": {"s3tables_rules": False}},
    )
    install_package(project)

    def dbt(*args: str, log: str = "logs") -> subprocess.Popen[str]:
        return subprocess.Popen(
            dbt_command(
                args,
                project_dir=project,
                profiles_dir=project,
                target_path=project / f"target-{log}",
                log_path=project / log,
            ),
            env=dbt_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def waited(*args: str) -> str:
        job = dbt(*args)
        output = job.communicate(timeout=600)[0]
        assert job.returncode == 0, output[-4000:]
        return output

    waited("run")
    models = [*OVERLAP_READERS, "rebuilt"]
    losers = Counter[str]()
    # One overlap after the first build (the package machine's walk runs again after it).
    for batch in (2,):
        waited("run", "-s", "events", "--vars", f"{{batch: {batch}}}")
        jobs = [
            dbt(
                "run",
                "--exclude",
                "events",
                "--vars",
                f"{{batch: {batch}}}",
                log=f"logs-{batch}-{n}",
            )
            for n in (1, 2)
        ]
        for n, job in enumerate(jobs, start=1):
            output = job.communicate(timeout=600)[0]
            assert "Traceback" not in output, output
            for result in read_run_results(project / f"target-logs-{batch}-{n}")["results"]:
                if result["status"] == "success":
                    continue
                # A loser's sentence, or Iceberg refusing it: nothing was published.
                message = result["message"]
                refusals = ["nothing was written", *ICEBERG_REFUSALS]
                assert any(refusal in message for refusal in refusals), message
                losers[result["unique_id"].split(".")[-1]] += 1
    waited("run", "--exclude", "events", "--vars", "{batch: 2}")
    catalog = local_catalog(thrift_server["warehouse"])
    for name in models:
        ids = catalog.load_table(schema, name).scan().to_arrow().column("id").to_pylist()
        assert sorted(ids) == list(range(1, 7)), f"{name}: {sorted(ids)} ({dict(losers)})"
    # The jobs overlapped: a job lost (else this test shows nothing).
    assert sum(losers.values()) >= 1, losers


# --- the promises' state machine on the package ------------------------------------------

# The adapter's bounded run's settings, fewer examples of fewer steps (each step is a dbt
# invocation over the Thrift server).
PACKAGE_PROMISES = settings(BOUNDED, max_examples=3, stateful_step_count=6)


def test_the_promises_hold_on_the_package(tmp_path: Path, thrift_server: dict) -> None:
    """The promises' state machine (tests/property/package_machine.py) in a bounded run
    over the Thrift server: upstreams appended, merged, rebuilt and reloaded, with
    `--full-refresh`; readers of every strategy and reading style, with `--full-refresh`
    and `--empty`; every table checked against the oracle after every step. The seed is
    fixed (derandomized), as the adapter's bounded run's."""
    PackagePromisesMachine.server = thrift_server
    PackagePromisesMachine.workspace = tmp_path
    PackagePromisesMachine.install = staticmethod(install_package)
    PackagePromisesMachine.output = staticmethod(spark_output)
    run_state_machine_as_test(PackagePromisesMachine, settings=PACKAGE_PROMISES)


def test_a_walk_of_the_package_promises(tmp_path: Path, thrift_server: dict) -> None:
    """A walk the bounded run's few examples do not take: every reader run, rebuilt with
    `--full-refresh --empty` (its rows gone, and with them what it had read up to: a
    `last_processed_value` kept from the replaced rows skipped every event up to it), an
    upstream rebuilt with lower values, then run again. Every promise is checked after
    every step, as in the random runs."""
    PackagePromisesMachine.server = thrift_server
    PackagePromisesMachine.workspace = tmp_path
    PackagePromisesMachine.install = staticmethod(install_package)
    PackagePromisesMachine.output = staticmethod(spark_output)
    machine = PackagePromisesMachine()
    every = set(package_promises.READERS)

    def step(rule: str, **arguments: object) -> None:
        getattr(machine, rule)(**arguments)
        machine.every_table_holds_what_the_oracle_says()

    step("build_everything")
    step("append_events", rows=[(1, 4), (2, 5)], full_refresh=False)
    step("change_customers", changes={1: "ann", 2: "bob"})
    step("rebuild_dim", rows={3: "cy"})
    step("reload_people", rows={4: "ann"})
    step("run_readers", readers=every, full_refresh=False, empty=False)
    step("run_readers", readers=every, full_refresh=True, empty=True)
    step("append_events", rows=[(3, 6)], full_refresh=False)
    step("change_customers", changes={1: "cy", 3: "ann"})
    step("run_readers", readers=every, full_refresh=False, empty=False)
    step("append_events", rows=[(1, 1)], full_refresh=True)
    step("run_readers", readers=every, full_refresh=False, empty=True)
    step("run_readers", readers=every, full_refresh=False, empty=False)


# --- integration_tests/ through the package -----------------------------------------------


def test_integration_project_gives_the_adapters_tables(
    tmp_path: Path, thrift_server: dict, integration_builds: IntegrationBuilds
) -> None:
    """integration_tests/, unchanged, built twice by dbt-spark plus the package (and the
    shim) on the Thrift server, as the adapter builds it in process (`integration_builds`):
    after each build every table holds the same rows as the adapter's. The second build
    runs the project's data tests too (the first build's are the adapter's to run: the
    rows they check are compared here)."""
    project = tmp_path / "project"
    shutil.copytree(
        INTEGRATION_PROJECT,
        project,
        ignore=shutil.ignore_patterns(
            "target", "logs", "warehouse", "dbt_packages", "profiles.yml"
        ),
    )
    install_package(project)
    write_profiles(
        tmp_path, "integration_tests", {**spark_output(thrift_server), "schema": "analytics"}
    )
    builds = [WITHOUT_DATA_TESTS, PHASE_2]
    for step, (extra, reference) in enumerate(zip(builds, integration_builds.tables, strict=True)):
        result = dbt_in(tmp_path, project, "build", *extra, *WITHOUT_PYTHON_MODEL)
        statuses = node_statuses(passed_run_results(result, tmp_path / "target"))
        assert statuses and set(statuses.values()) <= {"success", "pass"}, statuses
        expected = {k: v for k, v in table_contents(reference).items() if k != PYTHON_MODEL}
        built = table_contents(warehouse_tables(thrift_server["warehouse"]))
        assert sorted(built) == sorted(expected), f"build {step + 1}"
        differing = [name for name in expected if built[name] != expected[name]]
        assert not differing, f"build {step + 1}: tables differ from the adapter's: {differing}"
