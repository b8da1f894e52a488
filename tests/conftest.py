"""Shared pytest setup: one warehouse (and so one SparkSession) per test process, and the
integration project's builds that several test files read, made once per run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.functional.harness import IntegrationBuilds

pytest_plugins = ["dbt.tests.fixtures.project"]
# The functional tests' shared modules: their asserts report as a test file's do.
pytest.register_assert_rewrite(
    "tests.functional.harness", "tests.functional.emulators", "tests.functional.docs_site"
)


def pytest_configure(config: pytest.Config) -> None:
    """The tests run the installed adapter (`make setup` installs it as a wheel): stop at
    once when that copy differs from the source tree."""
    import dbt.adapters.s3tables
    from tests.functional.harness import TEST_JVM_OPTIONS
    from tests.installed_copy import stale_files, summary

    # <site-packages>/dbt/adapters/s3tables/__init__.py
    stale = stale_files(Path(dbt.adapters.s3tables.__file__).parents[3])
    if stale:
        raise pytest.UsageError(
            f"The installed dbt-s3tables differs from the source tree ({summary(stale)}): "
            "run `make setup` first."
        )
    # The JVM options of every JVM the tests start, this process's own included (harness.py
    # says why); options set in the shell that runs the tests are kept instead.
    os.environ.setdefault("SPARK_SUBMIT_OPTS", TEST_JVM_OPTIONS)


# Files in the order the test processes take them: pytest-xdist (`make test`) hands a
# process the next file when it is done with its own, so the slow files (servers, dbt
# processes, whole projects) go first and the quick ones fill the end, when the other
# process may still be busy with its last file. The property test is not first: in a
# process whose JVM has not warmed up yet it took 240 s instead of 100.
def run_rank(path: Path, root: Path) -> int:
    """Where a test file goes: Spark 4.1's first, then this repository's
    functional and property tests, then the conformance suite, then the unit tests."""
    relative = path.relative_to(root).as_posix()
    if relative.startswith("tests/spark41/"):
        return 0
    if relative.startswith("tests/functional/adapter/"):
        return 2
    if relative.startswith("tests/unit/"):
        return 3
    return 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # A stable sort: within a rank, files and tests keep pytest's order.
    items.sort(key=lambda item: run_rank(item.path, config.rootpath))


@pytest.fixture(scope="session")
def warehouse_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("warehouse"))


@pytest.fixture(scope="class")
def dbt_profile_target(warehouse_dir: str) -> dict:
    from tests.functional.harness import TEST_SPARK_SQL_SETTINGS

    # A process runs one JVM with one SparkSession, started by the first test with this
    # catalog (and its settings): every test of the process must use the same warehouse.
    return {
        "type": "s3tables",
        "method": "session",
        "master": "local[2]",
        "warehouse": warehouse_dir,
        "threads": 4,
        "spark_conf": dict(TEST_SPARK_SQL_SETTINGS),
    }


@pytest.fixture(scope="session")
def integration_builds(tmp_path_factory: pytest.TempPathFactory) -> IntegrationBuilds:
    """integration_tests/ built twice in process (harness.IntegrationBuilds), once per
    pytest run: test_integration_project.py checks the builds, and test_engines.py (dbt
    1.11 over thrift and on a cluster) and tests/spark41 compare other engines', dbt 1.11's
    and Spark 4.1's builds with them."""
    # Imported here: the adapter it imports is checked (pytest_configure) before.
    from tests.functional.harness import IntegrationBuilds, once_per_run

    return once_per_run(tmp_path_factory, "integration-builds", IntegrationBuilds.make)


@pytest.fixture(scope="session")
def dbt111_dbt() -> Path:
    """`.venv-dbt111`'s dbt (`make dbt111`: dbt-core 1.11, dbt-spark 1.11, Spark 3.5), once
    its dbt-core is 1.11 and its adapter the source tree's. `make test` also runs the
    conformance classes and the dbt Cloud package's tests with its pytest."""
    from tests.installed_copy import other_install

    return other_install(
        Path(__file__).parents[1] / ".venv-dbt111", "dbt.version", "1.11.", "dbt111"
    )
