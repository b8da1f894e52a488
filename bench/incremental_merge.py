"""Benchmark: merge and delete+insert of 1% changed rows into a 1M-row Iceberg table.

For each, the median over several runs of:
- the model's execution time under this adapter (`dbt run`);
- the statement the adapter generates, run bare in the same warm SparkSession;
- dbt-spark (`type: spark`, `method: session`) with the same Iceberg catalog settings
  passed through `server_side_parameters` (merge only: dbt-spark has no delete+insert).
Before every run the target is reset to the same 1M rows.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from functools import partial
from pathlib import Path

from dbt.cli.main import dbtRunner
from profiles import write_profiles

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.engines.spark_session import get_or_create_session
from dbt.adapters.s3tables.incremental.strategies import (
    IncrementalWrite,
    delete_insert_sql,
    merge_sql,
)
from dbt.adapters.s3tables.jars import JarSources

SCHEMA = "bench"
MASTER = "local[2]"


def write_project(root: Path, catalog: CatalogConfig) -> None:
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        "name: bench_merge\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n"
        # Spark starts before the models: their times exclude the JVM start.
        "on-run-start: ['select 1']\n"
    )
    write_profiles(root, catalog, MASTER, SCHEMA, threads=1)
    source = f"select * from {SCHEMA}.changes"
    (root / "models" / "merge_s3tables.sql").write_text(
        "{{ config(materialized='incremental', unique_key='id', watermark_column='version') }}\n"
        + source
    )
    (root / "models" / "delete_insert_s3tables.sql").write_text(
        "{{ config(materialized='incremental', incremental_strategy='delete+insert', "
        "unique_key='id') }}\n" + source
    )
    (root / "models" / "merge_spark.sql").write_text(
        "{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge', "
        "file_format='iceberg') }}\n" + source
    )


def reset_target(spark, table: str) -> None:
    spark.sql(
        f"CREATE OR REPLACE TABLE {SCHEMA}.{table} USING iceberg AS SELECT * FROM {SCHEMA}.base"
    )


def dbt_model_time(root: Path, target: str, model: str) -> float:
    """The model's execution time in a dbt run inside this process, so that every
    contender drives the same warm SparkSession (dbt-spark's `getOrCreate` and this
    adapter both pick up the running session, which has the same catalog settings)."""
    result = dbtRunner().invoke(
        [
            "run",
            "--target",
            target,
            "--select",
            model,
            "--profiles-dir",
            str(root),
            "--project-dir",
            str(root),
            "--quiet",
        ]
    )
    if not result.success:
        raise RuntimeError(f"dbt run of {model} on {target} failed: {result.exception}")
    return next(r for r in result.result.results if r.node.name == model).execution_time


def timed(spark, sql: str) -> float:
    started = time.perf_counter()
    spark.sql(sql)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_merge_"))
    warehouse = root / "warehouse"
    catalog = CatalogConfig(name="local", catalog_type="local", warehouse=str(warehouse))
    try:
        IcebergCatalog(catalog).ensure_initialized()
        write_project(root, catalog)
        spark = get_or_create_session(catalog, MASTER, {}, JarSources())
        changed = args.rows // 100
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {SCHEMA}")
        spark.sql(
            f"CREATE OR REPLACE TABLE {SCHEMA}.base USING iceberg AS "
            f"SELECT id, CAST(id % 1000 AS STRING) AS name, id * 1.5 AS amount, 1 AS version "
            f"FROM range({args.rows})"
        )
        # Half the changes update existing ids, half insert new ones.
        spark.sql(
            f"CREATE OR REPLACE TABLE {SCHEMA}.changes USING iceberg AS "
            f"SELECT id * 2 + {args.rows - changed} AS id, 'changed' AS name, "
            f"id * 2.5 AS amount, 2 AS version FROM range({changed})"
        )
        columns = ["id", "name", "amount", "version"]
        bare_session = spark.newSession()

        def bare(builder, **options) -> str:
            """The statement the adapter itself generates, aimed at the `bare` table."""
            return builder(
                IncrementalWrite(
                    target=f"{SCHEMA}.bare",
                    source_sql=f"select * from {SCHEMA}.changes",
                    target_columns=columns,
                    source_columns=columns,
                    unique_key=["id"],
                    **options,
                )
            )

        cases = {
            "merge": ("merge_s3tables", "merge_spark", bare(merge_sql, watermark_column="version")),
            "delete+insert": ("delete_insert_s3tables", None, bare(delete_insert_sql)),
        }
        print(
            f"{args.rows:,}-row target, {changed:,} changed rows (1%), "
            f"median of {args.runs} runs, {os.cpu_count()} cores, master {MASTER}"
        )
        for case, (adapter_model, spark_model, bare_sql) in cases.items():
            times: dict[str, list[float]] = {"adapter": [], "bare": [], "dbt-spark": []}
            contenders = [
                (
                    "adapter",
                    adapter_model,
                    partial(dbt_model_time, root, "s3tables", adapter_model),
                ),
                # A session of its own, as each dbt connection gets (see engines/session.py).
                ("bare", "bare", partial(timed, bare_session, bare_sql)),
            ]
            if spark_model:
                contenders.append(
                    ("dbt-spark", spark_model, partial(dbt_model_time, root, "spark", spark_model))
                )
            for run in range(args.runs):
                # Rotate the order each round so no contender always runs first.
                shift = run % len(contenders)
                for label, table, measure in contenders[shift:] + contenders[:shift]:
                    reset_target(spark, table)
                    times[label].append(measure())
            adapter_times, bare_times, spark_times = (
                times["adapter"],
                times["bare"],
                times["dbt-spark"],
            )
            adapter = statistics.median(adapter_times)
            bare = statistics.median(bare_times)
            line = (
                f"{case:14s} dbt-s3tables {adapter:6.2f} s | bare Spark {bare:6.2f} s "
                f"(adapter/bare {adapter / bare:4.2f})"
            )
            if spark_times:
                spark_time = statistics.median(spark_times)
                line += (
                    f" | dbt-spark {spark_time:6.2f} s "
                    f"(adapter/dbt-spark {adapter / spark_time:4.2f})"
                )
            else:
                line += " | dbt-spark: no delete+insert strategy"
            print(line)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
