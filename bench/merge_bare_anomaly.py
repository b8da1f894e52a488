"""Why the adapter's merge model measured faster than its own statement run bare
(bench/incremental_merge.py, before bench/incremental_scale.py replaced it): the same
dedup MERGE of 1% changed rows into a 1M-row merge-on-read table, run bare in
- the session that resets the table (`same session`),
- one other session kept across rounds, as the old benchmark's bare contender was
  (`kept other session`),
- a new session per run, as each dbt connection gets (`new session`),
- the same session after caching the source (`CACHE TABLE` + emptiness check + `DROP
  VIEW`, all timed), as the adapter runs it (`cached source`),
and as the adapter's model through dbt in this process (`dbt model`). Every run starts
from the same 1M rows recreated with CREATE OR REPLACE in the resetting session, as in
the old benchmark. Medians, order rotated each round; the 1-minute load average is kept
with every measurement (the machine is shared).

    .venv/bin/python bench/merge_bare_anomaly.py
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from incremental_scale import SCHEMA, SOURCE, bare_merge_sql, warm_model_time, write_project
from machine import write_csv

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.jars import JarSources
from dbt.adapters.s3tables.engines.spark_session import get_or_create_session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_anomaly_"))
    catalog = CatalogConfig(name="local", catalog_type="local", warehouse=str(root / "wh"))
    rows: list[dict[str, object]] = []
    try:
        IcebergCatalog(catalog).ensure_initialized()
        write_project(root, catalog)
        spark = get_or_create_session(catalog, "local[2]", {}, JarSources())
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {SCHEMA}")
        changed = args.rows // 100
        spark.sql(
            f"CREATE OR REPLACE TABLE {SCHEMA}.base USING iceberg AS SELECT id, "
            f"CAST(id % 1000 AS STRING) AS name, id * 1.5 AS amount, 1 AS version "
            f"FROM range({args.rows})"
        )
        spark.sql(
            f"CREATE OR REPLACE TABLE {SCHEMA}.changes USING iceberg AS "
            f"SELECT id * 2 + {args.rows - changed} AS id, 'changed' AS name, "
            f"id * 2.5 AS amount, 2 AS version FROM range({changed})"
        )
        kept = spark.newSession()

        def cached() -> None:
            view = f"dbt_source_{uuid.uuid4().hex}"
            spark.sql(f"CACHE TABLE {view} AS {SOURCE}")
            spark.sql(f"SELECT 1 FROM {view} LIMIT 1").collect()
            spark.sql(bare_merge_sql("cached", f"SELECT * FROM {view}"))
            spark.sql(f"DROP VIEW IF EXISTS {view}")

        def timed(run: Callable[[], object]) -> Callable[[], float]:
            def measure() -> float:
                started = time.perf_counter()
                run()
                return time.perf_counter() - started

            return measure

        contenders: list[tuple[str, str, Callable[[], float]]] = [
            ("same session", "same", timed(lambda: spark.sql(bare_merge_sql("same", SOURCE)))),
            ("kept other session", "kept", timed(lambda: kept.sql(bare_merge_sql("kept", SOURCE)))),
            (
                "new session",
                "fresh",
                timed(lambda: spark.newSession().sql(bare_merge_sql("fresh", SOURCE))),
            ),
            ("cached source", "cached", timed(cached)),
            ("dbt model", "merge_dedup", lambda: warm_model_time(root, "s3tables", "merge_dedup")),
        ]
        for run in range(args.runs):
            shift = run % len(contenders)
            for label, table, measure in contenders[shift:] + contenders[:shift]:
                spark.sql(
                    f"CREATE OR REPLACE TABLE {SCHEMA}.{table} USING iceberg TBLPROPERTIES "
                    "('write.merge.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
                    f"'write.delete.mode'='merge-on-read') AS SELECT * FROM {SCHEMA}.base"
                )
                seconds = measure()
                rows.append(
                    {
                        "contender": label,
                        "round": run,
                        "seconds": round(seconds, 4),
                        "load_1m": os.getloadavg()[0],
                    }
                )
        write_csv("merge_bare_anomaly", rows)
        loads = [float(r["load_1m"]) for r in rows]  # type: ignore[arg-type]
        print(
            f"{args.rows:,} rows, {changed:,} changed, median of {args.runs}, "
            f"load average {min(loads):.1f}-{max(loads):.1f}"
        )
        for label, _, _ in contenders:
            values = [float(r["seconds"]) for r in rows if r["contender"] == label]  # type: ignore[arg-type]
            print(f"  {label:20s} {statistics.median(values):6.2f} s  (all: {sorted(values)})")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
