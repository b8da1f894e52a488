"""integration_tests/ on Spark 4.1 builds the same tables as on Spark 3.5 (the default).

The project is built twice by Spark 4.1's dbt (`.venv-spark41`, pyspark 4.1: `make spark41`),
as the `integration_builds` fixture (tests/conftest.py) builds it on Spark 3.5 for
test_integration_project.py: from an empty warehouse, then an incremental build with
`schema_phase: 2` and the S3 Tables rules on, each line into its own warehouse. After each
build, every table's schema and rows, read with PyIceberg, must be the same on both lines;
the second build runs the project's data tests on Spark 4.1 too.

pytest runs in `.venv` (Spark 3.5) like the rest of the suite (`make test`, or this file alone
with `make test-spark41`): the Spark 3.5 builds are `.venv`'s dbt, the Spark 4.1 ones
`.venv-spark41`'s; each build is a dbt subprocess with its own JVM.
"""

from __future__ import annotations

from pathlib import Path

import pyspark

from tests.functional.harness import IntegrationBuilds, assert_integration_tables_match


def test_integration_project_gives_the_same_tables_on_spark_4_1_and_3_5(
    tmp_path: Path, spark41_dbt: Path, integration_builds: IntegrationBuilds
) -> None:
    assert pyspark.__version__.startswith("3.5."), f"the reference is pyspark {pyspark.__version__}"
    assert_integration_tables_match(
        tmp_path, spark41_dbt, integration_builds, "Spark 4.1", "Spark 3.5"
    )
