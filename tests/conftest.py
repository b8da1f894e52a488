"""Shared pytest setup: one warehouse (and so one SparkSession) per test process."""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest

pytest_plugins = ["dbt.tests.fixtures.project"]
# The functional tests' shared modules: their asserts report as a test file's do.
pytest.register_assert_rewrite("tests.functional.harness", "tests.functional.emulators")

SOURCE_PACKAGE = Path(__file__).parent.parent / "dbt"


def pytest_configure(config: pytest.Config) -> None:
    """The tests run the installed adapter (`make setup` installs it as a wheel): stop at
    once when that copy differs from the source tree."""
    import dbt.adapters.s3tables
    import dbt.include.s3tables

    stale = []
    for package, relative in (
        (dbt.adapters.s3tables, "adapters/s3tables"),
        (dbt.include.s3tables, "include/s3tables"),
    ):
        installed = Path(package.__file__).parent
        source = SOURCE_PACKAGE / relative
        for path in source.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                copy = installed / path.relative_to(source)
                if not copy.is_file() or not filecmp.cmp(path, copy, shallow=False):
                    stale.append(str(path.relative_to(SOURCE_PACKAGE.parent)))
    if stale:
        raise pytest.UsageError(
            f"The installed dbt-s3tables differs from the source tree ({', '.join(stale[:3])}"
            f"{' ...' if len(stale) > 3 else ''}): run `make setup` first."
        )


@pytest.fixture(scope="session")
def warehouse_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("warehouse"))


@pytest.fixture(scope="class")
def dbt_profile_target(warehouse_dir: str) -> dict:
    # A process runs one JVM with one SparkSession, started by the first test with this
    # catalog: every test of the process must use the same warehouse.
    return {
        "type": "s3tables",
        "method": "session",
        "master": "local[2]",
        "warehouse": warehouse_dir,
        "threads": 4,
    }
