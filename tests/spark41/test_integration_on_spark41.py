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
from typing import Any

import pyspark

from tests.functional.harness import (
    PHASE_2,
    IntegrationBuilds,
    build_integration_project,
    warehouse_tables,
)

# Values that depend on the moment of the build, not on the engine: the events of
# `recent_events` (and `orders_microbatch`) are dated relative to the build's day, and a
# snapshot and the `scd2` strategy stamp their rows with the build's time (a snapshot hashes
# it into `dbt_scd_id`). Only whether they are set is compared.
BUILD_TIME_COLUMNS = frozenset(
    {
        "event_ts",
        "dbt_valid_from",
        "dbt_valid_to",
        "dbt_updated_at",
        "dbt_scd_id",
        "valid_from",
        "valid_to",
    }
)
# The builds of `IntegrationBuilds`, in order: their dbt arguments and S3 Tables rules. The
# first build's data tests are left out (every table they read is compared after it); the
# second build runs them on Spark 4.1.
BUILDS = {
    "build": (("--exclude-resource-type", "test"), False),
    "incremental build": (PHASE_2, True),
}


def comparable(value: object, column: str) -> object:
    if column in BUILD_TIME_COLUMNS:
        return value is not None
    return repr(value)


def comparable_tables(
    tables: dict[str, tuple[str, list[dict[str, Any]]]],
) -> dict[str, tuple[str, list[tuple]]]:
    """Each table (`warehouse_tables`): its schema and its rows, sorted."""
    return {
        name: (schema, sorted(tuple(comparable(row[c], c) for c in sorted(row)) for row in rows))
        for name, (schema, rows) in tables.items()
    }


def test_integration_project_gives_the_same_tables_on_spark_4_1_and_3_5(
    tmp_path: Path, spark41_dbt: Path, integration_builds: IntegrationBuilds
) -> None:
    assert pyspark.__version__.startswith("3.5."), f"the reference is pyspark {pyspark.__version__}"
    for (step, (extra, s3tables_rules)), reference in zip(
        BUILDS.items(), integration_builds.tables, strict=True
    ):
        build_integration_project(tmp_path, *extra, s3tables_rules=s3tables_rules, dbt=spark41_dbt)
        on_spark41 = comparable_tables(warehouse_tables(tmp_path / "warehouse"))
        on_spark35 = comparable_tables(reference)
        assert on_spark41, f"{step}: no tables"
        assert sorted(on_spark41) == sorted(on_spark35), step
        differing = [name for name in on_spark41 if on_spark41[name] != on_spark35[name]]
        assert not differing, f"{step}: tables differ between Spark 4.1 and 3.5: {differing}"
