"""Benchmark: merge and delete+insert of 1% changed rows (half updates, half new keys)
into merge-on-read Iceberg tables of 0.1M, 1M and 5M rows, against dbt-spark.

Contenders (every one an incremental model `select * from bench.changes`, key `id`):
- `merge`: this adapter's merge, source deduplicated per key (`watermark_column`);
- `merge unique`: the same with `unique_key_is_unique: true` (no dedup);
- `delete+insert` and `delete+insert unique` likewise;
- `dbt-spark merge`: `type: spark`, `method: session`, same catalog settings;
- warm only: the adapter's dedup merge statement run bare in the same session, and the
  same preceded by caching the source (`CACHE TABLE`, emptiness check, `DROP VIEW`), as
  the adapter runs it: the two explain why the model beat its statement run bare.

Two ways of measuring:
- warm: one process, one warm SparkSession shared by every contender (dbt in-process),
  order rotated each round, medians;
- per process: one `dbt run` subprocess per measurement (a cold JVM each), the model's
  execution time from run_results.json and the subprocess's wall time, medians.
Each contender has its own target table; before each measurement it is rolled back to its
initial snapshot (a metadata operation, so a reset costs nothing at 5M rows). Fewer rounds
at 5M keep the whole run near 15 minutes. The machine is shared: the 1-minute load
average is recorded with every measurement.

    .venv/bin/python bench/incremental_scale.py
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from dbt.cli.main import dbtRunner
from machine import write_csv
from profiles import write_profiles

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.jars import JarSources
from dbt.adapters.s3tables.engines.spark_session import get_or_create_session
from dbt.adapters.s3tables.incremental.strategies import IncrementalWrite, merge_sql

SCHEMA = "bench"
MASTER = "local[2]"
CATALOG = "local"
DBT = str(Path(sys.executable).parent / "dbt")
SOURCE = f"select * from {SCHEMA}.changes"
COLUMNS = ["id", "name", "amount", "version"]

# contender: (model, dbt target, model config)
MODELS = {
    "merge": ("merge_dedup", "s3tables", "unique_key='id', watermark_column='version'"),
    "merge unique": (
        "merge_unique",
        "s3tables",
        "unique_key='id', watermark_column='version', unique_key_is_unique=true",
    ),
    "delete+insert": (
        "delete_insert",
        "s3tables",
        "incremental_strategy='delete+insert', unique_key='id'",
    ),
    "delete+insert unique": (
        "delete_insert_unique",
        "s3tables",
        "incremental_strategy='delete+insert', unique_key='id', unique_key_is_unique=true",
    ),
    "dbt-spark merge": (
        "merge_spark",
        "spark",
        "unique_key='id', incremental_strategy='merge', file_format='iceberg'",
    ),
}
BARE = {"bare merge": "bare_merge", "bare merge, cached source": "bare_cached"}
# Per process: the contenders the targets name.
PER_PROCESS = ["merge", "merge unique", "delete+insert unique", "dbt-spark merge"]


def write_project(
    root: Path, catalog: CatalogConfig, models: Iterable[tuple[str, str]] | None = None
) -> None:
    """The bench project: one incremental model per (name, config), selecting SOURCE
    (default: this benchmark's contenders)."""
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        "name: bench_incremental\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n"
        # Spark starts before the models: their times exclude the JVM start.
        "on-run-start: ['select 1']\n"
    )
    write_profiles(root, catalog, MASTER, SCHEMA, threads=1)
    for model, config in models or [(m, c) for m, _, c in MODELS.values()]:
        (root / "models" / f"{model}.sql").write_text(
            f"{{{{ config(materialized='incremental', {config}) }}}}\n{SOURCE}"
        )


def dbt_args(root: Path, target: str, model: str) -> list[str]:
    return [
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


def warm_model_time(root: Path, target: str, model: str) -> float:
    """The model's execution time in a dbt run in this process (the warm session)."""
    result = dbtRunner().invoke(dbt_args(root, target, model))
    if not result.success:
        raise RuntimeError(f"dbt run of {model} on {target} failed: {result.exception}")
    return next(r for r in result.result.results if r.node.name == model).execution_time


def process_model_time(root: Path, target: str, model: str) -> tuple[float, float]:
    """A `dbt run` subprocess: the model's execution time (run_results.json), wall time."""
    started = time.perf_counter()
    done = subprocess.run(
        [DBT, *dbt_args(root, target, model)], cwd=root, capture_output=True, text=True
    )
    wall = time.perf_counter() - started
    if done.returncode:
        raise RuntimeError(f"dbt run of {model} on {target} failed:\n{done.stdout[-3000:]}")
    results = json.loads((root / "target" / "run_results.json").read_text())["results"]
    model_time = next(r for r in results if r["unique_id"] == f"model.bench_incremental.{model}")
    return model_time["execution_time"], wall


def bare_merge_sql(table: str, source: str) -> str:
    """The adapter's dedup merge of `source` into the bench table `table`, as a statement."""
    return merge_sql(
        IncrementalWrite(
            target=f"{SCHEMA}.{table}",
            source_sql=source,
            target_columns=COLUMNS,
            source_columns=COLUMNS,
            unique_key=["id"],
            watermark_column="version",
        )
    )


def rollback(spark, table: str, snapshot_id: int) -> None:
    """The bench table `table` set back to a snapshot (a metadata operation)."""
    spark.sql(f"CALL {CATALOG}.system.rollback_to_snapshot('{SCHEMA}.{table}', {snapshot_id})")


def measurement(
    size: int,
    mode: str,
    label: str,
    run: int,
    model_s: float,
    wall_s: float | None,
    extra: Mapping[str, object] | None = None,
) -> dict[str, object]:
    """One raw number of a merge benchmark, with a benchmark's `extra` columns and, last,
    the load it was measured at."""
    return {
        "rows": size,
        "mode": mode,
        "contender": label,
        "round": run,
        "model_s": round(model_s, 4),
        "wall_s": "" if wall_s is None else round(wall_s, 4),
        **(extra or {}),
        "load_1m": os.getloadavg()[0],
    }


def timed(run: Callable[[], None]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def rounds_parser(description: str | None, sizes: str) -> argparse.ArgumentParser:
    """The table sizes and rounds of a merge benchmark, as options."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--sizes", default=sizes)
    parser.add_argument("--warm-runs", type=int, default=5)
    parser.add_argument("--process-runs", type=int, default=3)
    parser.add_argument(
        "--big",
        type=int,
        default=5_000_000,
        help="from this size on: 2 warm rounds and 1 process round fewer",
    )
    return parser


def main() -> None:
    args = rounds_parser(__doc__, "100000,1000000,5000000").parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_incremental_"))
    catalog = CatalogConfig(name=CATALOG, catalog_type="local", warehouse=str(root / "warehouse"))
    rows: list[dict[str, object]] = []
    summary: list[str] = []
    try:
        IcebergCatalog(catalog).ensure_initialized()
        write_project(root, catalog)
        spark = get_or_create_session(catalog, MASTER, {}, JarSources())
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {SCHEMA}")
        for size in [int(s) for s in args.sizes.split(",")]:
            big = size >= args.big
            warm_runs = args.warm_runs - 2 if big else args.warm_runs
            process_runs = args.process_runs - 1 if big else args.process_runs
            bench_size(spark, root, size, warm_runs, process_runs, rows)
            write_csv("incremental_scale", rows)
            lines = describe(rows, size, warm_runs, process_runs)
            print("\n".join(lines), flush=True)
            summary += lines
        print("\n".join(summary))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def bench_size(
    spark, root: Path, size: int, warm_runs: int, process_runs: int, rows: list[dict[str, object]]
) -> None:
    """Every contender at one table size, warm then per process; appends to `rows`."""
    changed = size // 100
    spark.sql(
        f"CREATE OR REPLACE TABLE {SCHEMA}.base USING iceberg AS "
        f"SELECT id, CAST(id % 1000 AS STRING) AS name, id * 1.5 AS amount, "
        f"1 AS version FROM range({size})"
    )
    spark.sql(
        f"CREATE OR REPLACE TABLE {SCHEMA}.changes USING iceberg AS "
        f"SELECT id * 2 + {size - changed} AS id, 'changed' AS name, "
        f"id * 2.5 AS amount, 2 AS version FROM range({changed})"
    )
    initial: dict[str, int] = {}
    for table in [*(m for m, _, _ in MODELS.values()), *BARE.values()]:
        # Dropped first: a replaced table keeps the previous size's snapshots in its
        # history, and its first snapshot is not an ancestor of the new one.
        spark.sql(f"DROP TABLE IF EXISTS {SCHEMA}.{table} PURGE")
        spark.sql(
            f"CREATE TABLE {SCHEMA}.{table} USING iceberg "
            "TBLPROPERTIES ('write.merge.mode'='merge-on-read', "
            "'write.update.mode'='merge-on-read', 'write.delete.mode'='merge-on-read') "
            f"AS SELECT * FROM {SCHEMA}.base"
        )
        initial[table] = spark.sql(f"SELECT snapshot_id FROM {SCHEMA}.{table}.snapshots").collect()[
            0
        ][0]

    def reset(table: str) -> None:
        rollback(spark, table, initial[table])

    def bare(table: str, cached: bool) -> Callable[[], None]:
        def run() -> None:
            source = SOURCE
            view = f"dbt_source_{uuid.uuid4().hex}"
            if cached:
                spark.sql(f"CACHE TABLE {view} AS {SOURCE}")
                spark.sql(f"SELECT 1 FROM {view} LIMIT 1").collect()
                source = f"SELECT * FROM {view}"
            spark.sql(bare_merge_sql(table, source))
            if cached:
                spark.sql(f"DROP VIEW IF EXISTS {view}")

        return run

    def record(mode: str, label: str, run: int, model_s: float, wall_s: float | None):
        rows.append(measurement(size, mode, label, run, model_s, wall_s))

    # Warm: every contender on this process's session.
    warm: list[tuple[str, str, Callable[[], float]]] = [
        (label, model, lambda m=model, t=target: warm_model_time(root, t, m))
        for label, (model, target, _) in MODELS.items()
    ] + [
        (label, table, lambda t=table: timed(bare(t, cached="cached" in t)))
        for label, table in BARE.items()
    ]
    for run in range(warm_runs):
        shift = run % len(warm)
        for label, table, measure in warm[shift:] + warm[:shift]:
            reset(table)
            record("warm", label, run, measure(), None)
    # Per process: a fresh `dbt run` (and JVM) per measurement.
    for run in range(process_runs):
        shift = run % len(PER_PROCESS)
        for label in PER_PROCESS[shift:] + PER_PROCESS[:shift]:
            model, target, _ = MODELS[label]
            reset(model)
            record("process", label, run, *process_model_time(root, target, model))


def describe(
    rows: list[dict[str, object]], size: int, warm_runs: int, process_runs: int
) -> list[str]:
    """Medians per contender, and the ratio to dbt-spark's merge."""

    def median(mode: str, label: str, column: str = "model_s") -> float | None:
        values = [
            float(r[column])  # type: ignore[arg-type]
            for r in rows
            if r["rows"] == size and r["mode"] == mode and r["contender"] == label
        ]
        return statistics.median(values) if values else None

    loads = [float(r["load_1m"]) for r in rows if r["rows"] == size]  # type: ignore[arg-type]
    lines = [
        f"{size:,} rows, {size // 100:,} changed; warm: median of {warm_runs}, "
        f"per process: median of {process_runs}; load average {min(loads):.1f}-{max(loads):.1f}"
    ]
    peer = median("warm", "dbt-spark merge")
    for label in [*MODELS, *BARE]:
        value = median("warm", label)
        assert value is not None and peer is not None
        lines.append(f"  warm     {label:26s} {value:6.2f} s  ({value / peer:4.2f}x dbt-spark)")
    peer = median("process", "dbt-spark merge")
    peer_wall = median("process", "dbt-spark merge", "wall_s")
    for label in PER_PROCESS:
        value, wall = median("process", label), median("process", label, "wall_s")
        assert value is not None and wall is not None and peer and peer_wall
        lines.append(
            f"  process  {label:26s} {value:6.2f} s  ({value / peer:4.2f}x dbt-spark), "
            f"wall {wall:6.2f} s ({wall / peer_wall:4.2f}x)"
        )
    return lines


if __name__ == "__main__":
    main()
