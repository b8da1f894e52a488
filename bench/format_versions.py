"""Benchmark: Iceberg format v2 against v3 (deletion vectors) for merges and the reads
after them, with copy-on-write and dbt-spark's merge beside them.

Part 1, a merge of 1% changed rows (half updates spread over the table, half new keys)
into tables of 1M and 5M rows, each contender an incremental model
`select * from bench.changes` with key `id`:
- `v2 merge-on-read`: this adapter's merge, format 2, position-delete files (the default);
- `v3 deletion vectors`: the same with `format_version: 3`;
- `v2 copy-on-write`: `write_mode: copy_on_write` (rewrites the data files it touches);
- `dbt-spark merge`: `type: spark`, `method: session`, same catalog, on a v2
  merge-on-read table.
Measured warm (one process, one SparkSession, dbt in-process, order rotated each round)
and per process (a `dbt run` subprocess each, cold JVM: the model's execution time and
the whole run's wall time); medians. Each warm merge's commit gives the files and bytes it
wrote (its snapshot summary). Every contender is rolled back to its initial snapshot before
each measurement.

Part 2, a full scan (`count(*)`, `sum`, `max` over every row) of a 1M-row table after 1,
10 and 100 such merges (the adapter's merge statement, a different 1% each time, no
maintenance), v2 position deletes against v3 deletion vectors; median of `--scans` scans
after one untimed one, with the table's live data and delete files.

The machine is shared: the 1-minute load average is recorded with every measurement. Run
under `.venv-spark41/bin/python` it writes `*_spark41.csv` (see `bench/spark_lines.py`).

    .venv/bin/python bench/format_versions.py
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
from pathlib import Path

from incremental_scale import (
    CATALOG,
    MASTER,
    SCHEMA,
    bare_merge_sql,
    measurement,
    process_model_time,
    rollback,
    rounds_parser,
    timed,
    warm_model_time,
    write_project,
)
from machine import write_csv

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.jars import JarSources
from dbt.adapters.s3tables.engines.spark_session import get_or_create_session

MERGE_ON_READ = (
    "'write.merge.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
    "'write.delete.mode'='merge-on-read'"
)
COPY_ON_WRITE = (
    "'write.merge.mode'='copy-on-write', 'write.update.mode'='copy-on-write', "
    "'write.delete.mode'='copy-on-write'"
)
KEY = "unique_key='id', watermark_column='version'"
# contender: (model, dbt target, model config, table properties at creation)
CONTENDERS = {
    "v2 merge-on-read": ("v2_mor", "s3tables", KEY, f"'format-version'='2', {MERGE_ON_READ}"),
    "v3 deletion vectors": (
        "v3_dv",
        "s3tables",
        f"{KEY}, format_version=3",
        f"'format-version'='3', {MERGE_ON_READ}",
    ),
    "v2 copy-on-write": (
        "v2_cow",
        "s3tables",
        f"{KEY}, write_mode='copy_on_write'",
        f"'format-version'='2', {COPY_ON_WRITE}",
    ),
    "dbt-spark merge": (
        "spark_mor",
        "spark",
        "unique_key='id', incremental_strategy='merge', file_format='iceberg'",
        f"'format-version'='2', {MERGE_ON_READ}",
    ),
}
SCAN_TABLES = {"v2 merge-on-read": ("scan_v2", 2), "v3 deletion vectors": ("scan_v3", 3)}
# What a commit's summary says it wrote and dropped.
WRITTEN = {
    "data_files": "added-data-files",
    "delete_files": "added-delete-files",
    "dvs": "added-dvs",
    "bytes": "added-files-size",
    "removed_data_files": "deleted-data-files",
    "removed_delete_files": "removed-delete-files",
}
# 7,919 is prime (and divides none of the key counts here), so `pmod(id * 7919 + offset,
# keys)` gives distinct keys spread across the table.
STRIDE = 7919


def changes_sql(rows: int, merge: int) -> str:
    """Merge number `merge`'s 1% of a table first built with `rows` rows: half updates
    spread over every key the table has by then (the earlier merges' new keys too), half
    new keys."""
    half = rows // 200
    keys = rows + max(merge - 1, 0) * half
    return (
        f"SELECT pmod(id * {STRIDE} + {merge * 104729}, {keys}) AS id, 'changed' AS name, "
        f"id * 2.5 AS amount, {merge + 2} AS version FROM range({half}) "
        f"UNION ALL SELECT {keys} + id AS id, 'new' AS name, "
        f"id * 2.5 AS amount, {merge + 2} AS version FROM range({half})"
    )


def create_table(spark, table: str, properties: str, rows: int) -> int:
    """A fresh table of `rows` rows with these properties; its first snapshot's id."""
    # Dropped first: a replaced table keeps the previous size's snapshots in its history.
    spark.sql(f"DROP TABLE IF EXISTS {SCHEMA}.{table} PURGE")
    spark.sql(
        f"CREATE TABLE {SCHEMA}.{table} USING iceberg TBLPROPERTIES ({properties}) AS "
        f"SELECT id, CAST(id % 1000 AS STRING) AS name, id * 1.5 AS amount, 1 AS version "
        f"FROM range({rows})"
    )
    return spark.sql(f"SELECT snapshot_id FROM {SCHEMA}.{table}.snapshots").collect()[0][0]


def snapshot_summaries(spark, table: str) -> dict[int, dict[str, str]]:
    return {
        row.snapshot_id: dict(row.summary or {})
        for row in spark.sql(
            f"SELECT snapshot_id, summary FROM {SCHEMA}.{table}.snapshots"
        ).collect()
    }


def written(before: dict[int, dict[str, str]], after: dict[int, dict[str, str]]) -> dict:
    """Files and bytes the commits between two snapshot lists wrote, summed."""
    new = [summary for snapshot, summary in after.items() if snapshot not in before]
    return {name: sum(int(summary.get(key, 0)) for summary in new) for name, key in WRITTEN.items()}


def live_files(spark, table: str) -> dict[str, int]:
    """The current snapshot's live data and delete files and bytes."""
    summary = dict(
        spark.sql(
            f"SELECT summary FROM {SCHEMA}.{table}.snapshots ORDER BY committed_at DESC LIMIT 1"
        ).collect()[0][0]
    )
    return {
        "live_data_files": int(summary.get("total-data-files", 0)),
        "live_delete_files": int(summary.get("total-delete-files", 0)),
        "live_position_deletes": int(summary.get("total-position-deletes", 0)),
        "live_bytes": int(summary.get("total-files-size", 0)),
    }


def bench_merges(
    spark, root: Path, size: int, warm_runs: int, process_runs: int, rows: list[dict]
) -> None:
    """Every contender at one table size, warm then per process; appends to `rows`."""
    spark.sql(f"CREATE OR REPLACE TABLE {SCHEMA}.changes USING iceberg AS {changes_sql(size, 0)}")
    initial = {
        model: create_table(spark, model, properties, size)
        for model, _, _, properties in CONTENDERS.values()
    }

    def reset(model: str) -> None:
        rollback(spark, model, initial[model])

    def record(mode: str, label: str, run: int, model_s: float, wall_s: float | None, files):
        written_files = {name: files.get(name, "") for name in WRITTEN}
        rows.append(measurement(size, mode, label, run, model_s, wall_s, written_files))

    order = list(CONTENDERS)
    for label in order:  # untimed: dbt's first parse and Spark's first plans of each
        model, target, _, _ = CONTENDERS[label]
        reset(model)
        warm_model_time(root, target, model)
    for run in range(warm_runs):
        shift = run % len(order)
        for label in order[shift:] + order[:shift]:
            model, target, _, _ = CONTENDERS[label]
            reset(model)
            before = snapshot_summaries(spark, model)
            seconds = warm_model_time(root, target, model)
            record(
                "warm", label, run, seconds, None, written(before, snapshot_summaries(spark, model))
            )
    for run in range(process_runs):
        shift = run % len(order)
        for label in order[shift:] + order[:shift]:
            model, target, _, _ = CONTENDERS[label]
            reset(model)
            record("process", label, run, *process_model_time(root, target, model), {})


def bench_scans(spark, size: int, checkpoints: list[int], scans: int, rows: list[dict]) -> None:
    """v2 and v3 tables merged into `max(checkpoints)` times, scanned at each checkpoint."""
    for table, version in SCAN_TABLES.values():
        create_table(spark, table, f"'format-version'='{version}', {MERGE_ON_READ}", size)
    merges_done = 0
    for checkpoint in checkpoints:
        merge_seconds: dict[str, list[float]] = {label: [] for label in SCAN_TABLES}
        for merge in range(merges_done + 1, checkpoint + 1):
            for label, (table, _) in SCAN_TABLES.items():
                statement = bare_merge_sql(table, changes_sql(size, merge))
                merge_seconds[label].append(timed(lambda s=statement: spark.sql(s)))
        merges_done = checkpoint
        for label, (table, _) in SCAN_TABLES.items():
            query = f"SELECT count(*), sum(amount), max(version) FROM {SCHEMA}.{table}"
            spark.sql(query).collect()  # untimed: the first read after the merges
            times = [timed(lambda q=query: spark.sql(q).collect()) for _ in range(scans)]
            before = snapshot_summaries(spark, table)
            rows.append(
                {
                    "rows": size,
                    "contender": label,
                    "merges": checkpoint,
                    "scan_s": round(statistics.median(times), 4),
                    "scans": scans,
                    "last_merges_s": round(statistics.median(merge_seconds[label]), 4)
                    if merge_seconds[label]
                    else "",
                    "snapshots": len(before),
                    **live_files(spark, table),
                    "load_1m": os.getloadavg()[0],
                }
            )


def median(measured: list[dict], column: str, **match: object) -> float:
    values = [
        float(r[column])
        for r in measured
        if all(r[k] == v for k, v in match.items()) and r[column] != ""
    ]
    return statistics.median(values)


def describe_merges(rows: list[dict], size: int) -> list[str]:
    loads = [float(r["load_1m"]) for r in rows if r["rows"] == size]
    warm_runs = len([r for r in rows if r["rows"] == size and r["mode"] == "warm"]) // len(
        CONTENDERS
    )
    process_runs = len([r for r in rows if r["rows"] == size and r["mode"] == "process"]) // len(
        CONTENDERS
    )
    lines = [
        f"{size:,} rows, {size // 100:,} changed; warm: median of {warm_runs}, per process: "
        f"median of {process_runs}; load average {min(loads):.1f}-{max(loads):.1f}"
    ]
    peer = median(rows, "model_s", rows=size, mode="warm", contender="dbt-spark merge")
    for label in CONTENDERS:
        warm = median(rows, "model_s", rows=size, mode="warm", contender=label)
        sample = next(r for r in rows if r["rows"] == size and r["contender"] == label)
        lines.append(
            f"  warm     {label:22s} {warm:6.2f} s ({warm / peer:4.2f}x dbt-spark); wrote "
            f"{sample['data_files']} data, {sample['delete_files']} delete files "
            f"({sample['dvs']} deletion vectors), {int(sample['bytes']) / 1e6:.2f} MB; dropped "
            f"{sample['removed_data_files']} data files"
        )
    if process_runs:
        peer = median(rows, "model_s", rows=size, mode="process", contender="dbt-spark merge")
        peer_wall = median(rows, "wall_s", rows=size, mode="process", contender="dbt-spark merge")
        for label in CONTENDERS:
            model = median(rows, "model_s", rows=size, mode="process", contender=label)
            wall = median(rows, "wall_s", rows=size, mode="process", contender=label)
            lines.append(
                f"  process  {label:22s} {model:6.2f} s ({model / peer:4.2f}x dbt-spark), "
                f"wall {wall:6.2f} s ({wall / peer_wall:4.2f}x)"
            )
    return lines


def describe_scans(rows: list[dict]) -> list[str]:
    loads = [float(r["load_1m"]) for r in rows]
    lines = [
        f"full scan of {rows[0]['rows']:,} rows after N merges of 1%, no maintenance; median "
        f"of {rows[0]['scans']}; load average {min(loads):.1f}-{max(loads):.1f}"
    ]
    for row in rows:
        lines.append(
            f"  {row['merges']:4d} merges  {row['contender']:22s} scan {row['scan_s']:6.2f} s; "
            f"live {row['live_data_files']} data, {row['live_delete_files']} delete files, "
            f"{row['live_bytes'] / 1e6:.1f} MB; merges to here: median {row['last_merges_s']} s"
        )
    return lines


def main() -> None:
    parser = rounds_parser(__doc__, "1000000,5000000")
    parser.add_argument("--scan-rows", type=int, default=1_000_000)
    parser.add_argument(
        "--scan-after", default="1,10,100", help="merge counts to scan at; empty: no scans"
    )
    parser.add_argument("--scans", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_format_versions_"))
    catalog = CatalogConfig(name=CATALOG, catalog_type="local", warehouse=str(root / "warehouse"))
    merge_rows: list[dict] = []
    scan_rows: list[dict] = []
    summary: list[str] = []
    try:
        IcebergCatalog(catalog).ensure_initialized()
        write_project(root, catalog, [(m, c) for m, _, c, _ in CONTENDERS.values()])
        spark = get_or_create_session(catalog, MASTER, {}, JarSources())
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {SCHEMA}")
        for size in [int(s) for s in args.sizes.split(",") if s]:
            big = size >= args.big
            bench_merges(
                spark,
                root,
                size,
                args.warm_runs - 2 if big else args.warm_runs,
                args.process_runs - 1 if big else args.process_runs,
                merge_rows,
            )
            write_csv("format_versions_merge", merge_rows)
            lines = describe_merges(merge_rows, size)
            print("\n".join(lines), flush=True)
            summary += lines
        checkpoints = sorted(int(n) for n in args.scan_after.split(",") if n)
        if checkpoints:
            bench_scans(spark, args.scan_rows, checkpoints, args.scans, scan_rows)
            write_csv("format_versions_scan", scan_rows)
            summary += describe_scans(scan_rows)
        print("\n".join(summary))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
