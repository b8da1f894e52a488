"""Benchmark: what table maintenance buys a merge-on-read table after many small merges.

A 10,000-row incremental model is built by `dbt run`, then takes 100 merges of about 1% of
its rows each (updates of rows chosen by a hash: spread over the whole table, a different
set each merge): the merge statement the adapter generates for the model, run in the same
warm SparkSession.
Then `dbt run-operation s3tables_maintain` (every operation, `snapshots_older_than_days:
0`, the default `retain_last: 5`) runs in the same process.

Before and after maintenance: the median time of a full scan (`select count(*),
sum(amount)`, which Iceberg cannot answer from metadata) over several reads after one
warm-up, and the table's data files, delete files, snapshots and bytes (its current
snapshot's totals, as the maintenance log reports them). The rows must be the same. Raw
numbers go to `bench/results/maintenance.csv`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from dataclasses import asdict, fields
from pathlib import Path

from dbt.cli.main import dbtRunner
from machine import write_csv

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.jars import JarSources
from dbt.adapters.s3tables.catalogs.snapshots import TableHealth
from dbt.adapters.s3tables.engines.spark_session import get_or_create_session
from dbt.adapters.s3tables.incremental.strategies import IncrementalWrite, merge_sql

SCHEMA = "bench"
TABLE = "events"
MASTER = "local[2]"
COLUMNS = ["id", "kind", "amount"]
MODEL = """{{ config(materialized='incremental', unique_key='id') }}
select id, 'first' as kind, cast(id as double) as amount from range({{ var('rows') }})
"""
SCAN = f"select count(*), sum(amount) from {SCHEMA}.{TABLE}"


def write_project(root: Path, catalog: CatalogConfig) -> None:
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        "name: bench_maintenance\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n"
    )
    profile = {
        "type": "s3tables",
        "schema": SCHEMA,
        "warehouse": catalog.warehouse,
        "master": MASTER,
    }
    (root / "profiles.yml").write_text(
        json.dumps({"bench": {"target": "dev", "outputs": {"dev": {**profile, "threads": 1}}}})
    )
    (root / "models" / f"{TABLE}.sql").write_text(MODEL)


def dbt(root: Path, *arguments: str) -> None:
    command = [*arguments, "--profiles-dir", str(root), "--project-dir", str(root)]
    result = dbtRunner().invoke(command)
    if not result.success:
        raise RuntimeError(f"dbt {' '.join(arguments)} failed: {result.exception}")


def changes_sql(rows: int, merge: int) -> str:
    """About 1% of the rows, chosen by a hash: spread over the table, a different set each
    merge, some of them rows an earlier merge rewrote."""
    return (
        f"select id, 'merge {merge}' as kind, cast(id + {merge} as double) as amount "
        f"from range({rows}) where pmod(hash(id, {merge}), 100) = 0"
    )


def scan_times(spark, reads: int) -> tuple[list[float], tuple]:
    """Seconds of each full scan (after one warm-up read), and the scan's result."""
    result = tuple(spark.sql(SCAN).first())
    times = []
    for _ in range(reads):
        started = time.perf_counter()
        spark.sql(SCAN).collect()
        times.append(time.perf_counter() - started)
    return times, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--merges", type=int, default=100)
    parser.add_argument("--reads", type=int, default=7)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_maintenance_"))
    catalog = CatalogConfig(name="local", catalog_type="local", warehouse=str(root / "wh"))
    try:
        iceberg = IcebergCatalog(catalog)
        iceberg.ensure_initialized()
        write_project(root, catalog)
        spark = get_or_create_session(catalog, MASTER, {}, JarSources())
        dbt(root, "run", "--vars", json.dumps({"rows": args.rows}))
        started = time.perf_counter()
        for merge in range(1, args.merges + 1):
            spark.sql(
                merge_sql(
                    IncrementalWrite(
                        target=f"{SCHEMA}.{TABLE}",
                        source_sql=changes_sql(args.rows, merge),
                        target_columns=COLUMNS,
                        source_columns=COLUMNS,
                        unique_key=["id"],
                    )
                )
            )
        merging = time.perf_counter() - started

        before_times, before_result = scan_times(spark, args.reads)
        before = iceberg.table_health(SCHEMA, TABLE)
        started = time.perf_counter()
        dbt(
            root,
            "run-operation",
            "s3tables_maintain",
            "--args",
            json.dumps({"models": [TABLE], "snapshots_older_than_days": 0}),
        )
        maintaining = time.perf_counter() - started
        after_times, after_result = scan_times(spark, args.reads)
        after = iceberg.table_health(SCHEMA, TABLE)
        if after_result != before_result:
            raise RuntimeError(f"maintenance changed the rows: {before_result} -> {after_result}")

        print(
            f"{args.rows:,}-row merge-on-read table after {args.merges} merges of about 1% "
            f"({merging:.0f} s), then s3tables_maintain ({maintaining:.1f} s); full scan "
            f"median of {args.reads} reads, master {MASTER}"
        )
        report = [
            ("full scan (s)", statistics.median(before_times), statistics.median(after_times)),
            *(
                (f.name.replace("_", " "), getattr(before, f.name), getattr(after, f.name))
                for f in fields(TableHealth)
            ),
        ]
        print(f"{'':16s}{'before':>12s}{'after':>12s}{'after/before':>14s}")
        for label, was, now in report:
            shape = ",.3f" if isinstance(was, float) else ","
            ratio = f"{now / was:.3f}" if was else "-"
            print(f"{label:16s}{was:>12{shape}}{now:>12{shape}}{ratio:>14s}")

        def rows(state: str, times: list[float], health: TableHealth) -> list[dict]:
            return [
                {
                    "state": state,
                    "read": read + 1,
                    "scan_seconds": round(seconds, 4),
                    **asdict(health),
                    "rows": args.rows,
                    "merges": args.merges,
                    "merge_seconds": round(merging, 1),
                    "maintenance_seconds": round(maintaining, 2) if state == "after" else "",
                }
                for read, seconds in enumerate(times)
            ]

        path = write_csv(
            "maintenance", rows("before", before_times, before) + rows("after", after_times, after)
        )
        print(f"raw numbers: {path}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
