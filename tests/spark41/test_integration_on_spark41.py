"""integration_tests/ on Spark 4.1 builds the same tables as on Spark 3.5 (the default).

The project is built twice by each Spark line's dbt, as tests/functional/
test_integration_project.py does it (from an empty warehouse, then an incremental build with
`schema_phase: 2` and the S3 Tables rules on), each into its own warehouse. After each build,
every table's schema and rows, read with PyIceberg, must be the same on both lines.

This file runs in `.venv-spark41` (pyspark 4.1, `make test-spark41`); the Spark 3.5 builds use
`.venv`'s dbt (`make setup`). Each build is a dbt subprocess with its own JVM.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pyspark
import pytest

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from tests.functional.test_integration_project import build

ROOT = Path(__file__).resolve().parents[2]
SPARK41_DBT = Path(sys.executable).parent / "dbt"
SPARK35_DBT = ROOT / ".venv" / "bin" / "dbt"
# Values that depend on the moment of the build, not on the engine: the events of
# `recent_events` (and `orders_microbatch`) are dated relative to the build's clock, and a
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
BUILDS = {
    "build": ((), False),
    "incremental build": (("--vars", "{schema_phase: 2}"), True),
}


def comparable(value: object, column: str) -> object:
    if column in BUILD_TIME_COLUMNS:
        return value is not None
    return repr(value)


def tables(warehouse: Path) -> dict[str, tuple[str, list[tuple]]]:
    """Every table of the warehouse: its schema and its rows, sorted."""
    catalog = IcebergCatalog(
        CatalogConfig(name="local", catalog_type="local", warehouse=str(warehouse))
    )
    found = {}
    for namespace in catalog.list_namespaces():
        for relation in catalog.list_relations(namespace):
            if relation.kind != "table":
                continue
            table = catalog.load_table(namespace, relation.name)
            rows = [
                tuple(comparable(row[c], c) for c in sorted(row))
                for row in table.scan().to_arrow().to_pylist()
            ]
            found[f"{namespace}.{relation.name}"] = (str(table.schema()), sorted(rows))
    return found


@pytest.fixture(scope="module")
def spark35_dbt() -> Path:
    if not os.access(SPARK35_DBT, os.X_OK):
        pytest.fail(f"{SPARK35_DBT} is missing: run `make setup` (the Spark 3.5 reference).")
    return SPARK35_DBT


def test_integration_project_gives_the_same_tables_on_spark_4_1_and_3_5(
    tmp_path: Path, spark35_dbt: Path
) -> None:
    assert pyspark.__version__.startswith("4.1."), f"run by pyspark {pyspark.__version__}"
    for step, (extra, s3tables_rules) in BUILDS.items():
        build(tmp_path / "spark41", *extra, s3tables_rules=s3tables_rules, dbt=str(SPARK41_DBT))
        build(tmp_path / "spark35", *extra, s3tables_rules=s3tables_rules, dbt=str(spark35_dbt))
        on_spark41 = tables(tmp_path / "spark41" / "warehouse")
        on_spark35 = tables(tmp_path / "spark35" / "warehouse")
        assert on_spark41, f"{step}: no tables"
        assert sorted(on_spark41) == sorted(on_spark35), step
        differing = [name for name in on_spark41 if on_spark41[name] != on_spark35[name]]
        assert not differing, f"{step}: tables differ between Spark 4.1 and 3.5: {differing}"
