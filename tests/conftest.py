"""Shared pytest setup: one warehouse (and so one SparkSession) per test process."""

from __future__ import annotations

import pytest

pytest_plugins = ["dbt.tests.fixtures.project"]


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
