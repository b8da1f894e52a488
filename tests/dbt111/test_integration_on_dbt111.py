"""integration_tests/ on dbt-core 1.11 builds the same tables as on dbt-core 1.12 (the line
the whole suite runs on).

The project is built twice by dbt 1.11 (`.venv-dbt111`: dbt-core 1.11, dbt-spark 1.11,
Spark 3.5; `make dbt111`), as the `integration_builds` fixture (tests/conftest.py) builds it
on dbt 1.12: from an empty warehouse, then an incremental build with `schema_phase: 2` and
the S3 Tables rules on, each line into its own warehouse. After each build, every table's
schema and rows, read with PyIceberg, must be the same on both lines; the second build runs
the project's data tests on dbt 1.11 too.
"""

from __future__ import annotations

from pathlib import Path

from dbt.version import __version__ as dbt_version

from tests.functional.harness import IntegrationBuilds, assert_integration_tables_match


def test_integration_project_gives_the_same_tables_on_dbt_1_11_and_1_12(
    tmp_path: Path, dbt111_dbt: Path, integration_builds: IntegrationBuilds
) -> None:
    assert dbt_version.startswith("1.12."), f"the reference is dbt-core {dbt_version}"
    assert_integration_tables_match(
        tmp_path, dbt111_dbt, integration_builds, "dbt-core 1.11", "dbt-core 1.12"
    )
