"""Benchmark: the cheapest exact dedup of a merge source, one row per key keeping the
greatest `version` (the merge's `watermark_column`), over 0.1M, 1M and 5M rows of which 1%
repeat a key:
- `window`: ROW_NUMBER() OVER (PARTITION BY key ORDER BY version DESC NULLS LAST) = 1
  (what strategies.py builds);
- `max struct`: GROUP BY key, max(struct(version, struct(<columns>))) (ties broken by the
  other columns; a map column cannot be compared, so it would need the window anyway);
- `max_by`: GROUP BY key, max_by(struct(<columns>), version) (ties arbitrary).
Each query is forced whole (count and a hash of every column) and all three must give
the same result. Medians, order rotated each round, one warm SparkSession; the machine
is shared: the 1-minute load average is recorded with every measurement.

    .venv/bin/python bench/merge_dedup.py
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from machine import write_csv

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.jars import JarSources
from dbt.adapters.s3tables.engines.spark_session import get_or_create_session

COLUMNS = "id, name, amount, version"
DEDUPS = {
    "window": f"SELECT {COLUMNS} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id "
    "ORDER BY version DESC NULLS LAST) AS rn FROM bench.src) WHERE rn = 1",
    "max struct": "SELECT best.row.* FROM (SELECT max(struct(version AS o, "
    f"struct({COLUMNS}) AS row)) AS best FROM bench.src GROUP BY id)",
    "max_by": f"SELECT best.* FROM (SELECT max_by(struct({COLUMNS}), version) AS best "
    "FROM bench.src GROUP BY id)",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100000,1000000,5000000")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_dedup_"))
    catalog = CatalogConfig(name="local", catalog_type="local", warehouse=str(root / "wh"))
    rows: list[dict[str, object]] = []
    try:
        IcebergCatalog(catalog).ensure_initialized()
        spark = get_or_create_session(catalog, "local[2]", {}, JarSources())
        spark.sql("CREATE NAMESPACE IF NOT EXISTS bench")
        for size in [int(s) for s in args.sizes.split(",")]:
            repeated = size // 100
            spark.sql(
                "CREATE OR REPLACE TABLE bench.src USING iceberg AS SELECT id, "
                "CAST(id % 1000 AS STRING) AS name, id * 1.5 AS amount, 2 AS version "
                f"FROM range({size - repeated}) UNION ALL SELECT id * 7 AS id, 'old' AS name, "
                f"id * 2.5 AS amount, 1 AS version FROM range({repeated})"
            )
            forced = {
                k: f"SELECT count(*), sum(hash({COLUMNS})) FROM ({q})" for k, q in DEDUPS.items()
            }
            results = {k: tuple(spark.sql(q).collect()[0]) for k, q in forced.items()}
            assert len(set(results.values())) == 1, results
            names = list(forced)
            for run in range(args.runs):
                shift = run % len(names)
                for name in names[shift:] + names[:shift]:
                    started = time.perf_counter()
                    spark.sql(forced[name]).collect()
                    seconds = time.perf_counter() - started
                    rows.append(
                        {
                            "rows": size,
                            "dedup": name,
                            "round": run,
                            "seconds": round(seconds, 4),
                            "load_1m": os.getloadavg()[0],
                        }
                    )
            medians = {
                name: statistics.median(
                    float(r["seconds"]) for r in rows if r["rows"] == size and r["dedup"] == name
                )
                for name in names
            }
            window = medians["window"]
            print(
                f"{size:,} rows, 1% repeated keys, median of {args.runs}: "
                + ", ".join(
                    f"{n} {s:.3f} s ({s / window:.2f}x window)" for n, s in medians.items()
                ),
                flush=True,
            )
        write_csv("merge_dedup", rows)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
