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

from collections.abc import Iterator
from pathlib import Path

import pytest
from dbt.tests.fixtures.project import TestProjInfo
from dbt.tests.util import run_dbt, run_dbt_and_capture

import tests.functional.test_incremental_strategies as strategies
from tests.functional.emulators import services, services_alive

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


class OnDbtSparkWithThePackage:
    """Runs a test class of the adapter on dbt-spark plus the package."""

    @pytest.fixture(scope="class")
    def dbt_profile_target(self, thrift_server: dict) -> dict:
        return spark_output(thrift_server)

    @pytest.fixture(scope="class")
    def packages(self) -> dict:
        return {"packages": [{"local": str(PACKAGE)}]}

    @pytest.fixture(scope="class")
    def project(self, project_setup: TestProjInfo, project_files: None) -> Iterator[TestProjInfo]:
        shim = Path(project_setup.project_root, "macros", "s3tables_spark_shim.sql")
        shim.parent.mkdir(exist_ok=True)
        shim.write_text(SHIM)
        run_dbt(["deps"])
        yield project_setup
        drop_tables(project_setup)


def drop_tables(project: TestProjInfo) -> None:
    """Drops the test schema's tables: dbt-spark drops a schema with CASCADE, which the
    embedded Iceberg catalog refuses for a namespace that holds tables."""
    for row in project.run_sql(f"show tables in {project.test_schema}", fetch="all"):
        if not row[2]:  # a session's temporary view
            project.run_sql(f"drop table if exists {project.test_schema}.`{row[1]}`")


# --- the adapter's strategy tests, unchanged -------------------------------------------


class TestAppend(OnDbtSparkWithThePackage, strategies.TestAppend):
    pass


class TestMerge(OnDbtSparkWithThePackage, strategies.TestMerge):
    pass


class TestDeleteInsert(OnDbtSparkWithThePackage, strategies.TestDeleteInsert):
    pass


class TestInsertOverwrite(OnDbtSparkWithThePackage, strategies.TestInsertOverwrite):
    pass


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


# --- the shim and dbt's legacy flag ----------------------------------------------------

TYPO_MODEL = "{{ config(materialized='incremental', unique_ky='id') }}\nselect 1 as id"


class PackageWithoutTheShim:
    """dbt-spark with the package installed, and no shim in the project."""

    @pytest.fixture(scope="class")
    def dbt_profile_target(self, thrift_server: dict) -> dict:
        return spark_output(thrift_server)

    @pytest.fixture(scope="class")
    def packages(self) -> dict:
        return {"packages": [{"local": str(PACKAGE)}]}

    @pytest.fixture(scope="class")
    def models(self) -> dict:
        return {"typo.sql": TYPO_MODEL}

    @pytest.fixture(scope="class")
    def project(self, project_setup: TestProjInfo, project_files: None) -> Iterator[TestProjInfo]:
        run_dbt(["deps"])
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
