"""Benchmark: an incremental model reading its upstream's new rows through
`upstream_changes()` against the same model with a timestamp watermark (`is_incremental()`
and `max()`), this adapter and dbt-spark.

An upstream table of N rows (`id`, `ts` = id seconds, a payload) receives 1% new rows per
round (appended, with later timestamps); then each contender, an incremental `append`
model copying the upstream, runs once (warm: one process, one SparkSession, dbt
in-process, order rotated each round):
- `upstream_changes()`: reads the commits since its last build (Iceberg's incremental
  append scan of the new data files);
- `watermark`: `where ts > (select max(ts) from {{ this }})` over the whole upstream
  (Iceberg prunes data files by their `ts` bounds);
- `dbt-spark watermark`: the same model on dbt-spark (`method: session`, same catalog).
Measured per run: the model's execution time, and the rows Spark read (the input records
of every stage the run's jobs ran, from Spark's status store), medians. The machine is
shared: the 1-minute load average is recorded with every measurement. Raw numbers go to
`bench/results/upstream_changes.csv`.

(Updates and deletes upstream are not measured: `upstream_changes()` refuses ranges that
hold them for now; see docs/incremental.md.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

from dbt.cli.main import dbtRunner
from machine import write_csv
from profiles import write_profiles

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.jars import JarSources
from dbt.adapters.s3tables.engines.spark_session import get_or_create_session

MASTER = "local[2]"
SCHEMA = "bench_changes"
UPSTREAM = f"{SCHEMA}.events"
COPY = "select id, ts, payload from {source}"
WATERMARK = (
    COPY + "\n{{% if is_incremental() %}}where ts > (select max(ts) from {{{{ this }}}})"
    "{{% endif %}}"
)
# Each contender: its model, target, and model SQL (`{source}`: the upstream's source()).
CONTENDERS = {
    "upstream_changes()": (
        "by_changes",
        "s3tables",
        COPY.format(source="{{ upstream_changes(source('bench', 'events')) }}"),
    ),
    "watermark": (
        "by_watermark",
        "s3tables",
        WATERMARK.format(source="{{ source('bench', 'events') }}"),
    ),
    "dbt-spark watermark": (
        "by_watermark_spark",
        "spark",
        WATERMARK.format(source="{{ source('bench', 'events') }}"),
    ),
}


def write_project(root: Path, catalog: CatalogConfig) -> None:
    models = root / "models"
    models.mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        "name: bench_changes\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n"
    )
    write_profiles(root, catalog, MASTER, SCHEMA, threads=1)
    (models / "sources.yml").write_text(
        f"version: 2\nsources:\n  - name: bench\n    schema: {SCHEMA}\n    tables:\n"
        "      - name: events\n"
    )
    for model, target, sql in CONTENDERS.values():
        file_format = ", file_format='iceberg'" if target == "spark" else ""
        (models / f"{model}.sql").write_text(
            "{{ config(materialized='incremental', incremental_strategy='append'"
            f"{file_format}) }}}}\n{sql}\n"
        )


def append_rows(spark: Any, start: int, count: int) -> None:
    spark.sql(
        f"INSERT INTO {UPSTREAM} SELECT id, timestamp_seconds(id) AS ts, "
        f"concat('payload ', id) AS payload FROM range({start}, {start + count})"
    )


def stage_inputs(spark: Any) -> dict[int, int]:
    """Input records of every stage Spark's status store holds, by stage id."""
    store = spark.sparkContext._jsc.sc().statusStore()
    gateway = spark.sparkContext._gateway
    # Scala's default arguments are not there for py4j: every one is given.
    quantiles = gateway.new_array(gateway.jvm.double, 0)
    stages = store.stageList(None, False, False, quantiles, gateway.jvm.java.util.ArrayList())
    return {
        int(stages.apply(i).stageId()): int(stages.apply(i).inputRecords())
        for i in range(stages.size())
    }


def measured_run(spark: Any, root: Path, target: str, model: str) -> tuple[float, int]:
    """One warm `dbt run -s model`: the model's execution time, and the rows Spark read."""
    before = stage_inputs(spark)
    arguments = ["run", "--target", target, "--select", model, "--quiet"]
    arguments += ["--profiles-dir", str(root), "--project-dir", str(root)]
    result = dbtRunner().invoke(arguments)
    if not result.success:
        raise RuntimeError(f"dbt run of {model} on {target} failed: {result.exception}")
    after = stage_inputs(spark)
    read = sum(count for stage, count in after.items() if stage not in before)
    seconds = next(r for r in result.result.results if r.node.name == model).execution_time
    return seconds, read


def copied_rows(spark: Any, model: str) -> int:
    return int(spark.sql(f"SELECT count(*) FROM {SCHEMA}.{model}").collect()[0][0])


def bench_size(spark: Any, root: Path, size: int, rounds: int, rows: list[dict]) -> None:
    for table in [UPSTREAM, *(f"{SCHEMA}.{model}" for model, _, _ in CONTENDERS.values())]:
        spark.sql(f"DROP TABLE IF EXISTS {table}")
    spark.sql(f"CREATE TABLE {UPSTREAM} (id bigint, ts timestamp, payload string) USING iceberg")
    append_rows(spark, 0, size)
    for model, target, _ in CONTENDERS.values():  # the first builds: untimed
        measured_run(spark, root, target, model)
    labels = list(CONTENDERS)
    step = size // 100
    for run in range(rounds):
        append_rows(spark, size + run * step, step)
        order = labels[run % len(labels) :] + labels[: run % len(labels)]
        for label in order:
            model, target, _ = CONTENDERS[label]
            load = os.getloadavg()[0]
            seconds, read = measured_run(spark, root, target, model)
            rows.append(
                {
                    "rows": size,
                    "contender": label,
                    "round": run + 1,
                    "model_s": round(seconds, 4),
                    "rows_read": read,
                    "load_1m": load,
                }
            )
    expected = size + rounds * step
    for label, (model, _, _) in CONTENDERS.items():
        copied = copied_rows(spark, model)
        if copied != expected:
            raise RuntimeError(f"{label} copied {copied} rows, not {expected}")


def describe(rows: list[dict], size: int) -> list[str]:
    def median(label: str, column: str) -> float:
        return statistics.median(
            float(r[column]) for r in rows if r["rows"] == size and r["contender"] == label
        )

    lines = [f"{size:,} rows, 1% appended per run ({size // 100:,} rows):"]
    base_seconds = median("upstream_changes()", "model_s")
    base_read = max(median("upstream_changes()", "rows_read"), 1)
    for label in CONTENDERS:
        seconds, read = median(label, "model_s"), median(label, "rows_read")
        lines.append(
            f"  {label:22s} {seconds:6.2f} s ({seconds / base_seconds:.2f}x)  "
            f"rows read {read:12,.0f} ({read / base_read:.1f}x)"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_upstream_changes_"))
    catalog = CatalogConfig(name="local", catalog_type="local", warehouse=str(root / "wh"))
    try:
        write_project(root, catalog)
        # PyIceberg creates the embedded catalog's tables; Spark's JDBC catalog does not.
        IcebergCatalog(catalog).ensure_initialized()
        spark = get_or_create_session(catalog, MASTER, {}, JarSources())
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {SCHEMA}")
        rows: list[dict] = []
        sizes = [int(s) for s in args.sizes.split(",")]
        for size in sizes:
            bench_size(spark, root, size, args.rounds, rows)
        for size in sizes:
            print("\n".join(describe(rows, size)))
        print(f"raw numbers: {write_csv('upstream_changes', rows)}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
