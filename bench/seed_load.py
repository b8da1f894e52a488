"""Benchmark: `dbt seed` of 100,000 and 500,000-row, 6-column CSVs on the embedded catalog.

Side by side in one run, each a median of several runs:
- this adapter's seed node (its execution time in run_results.json; Spark is already
  running by then, started by an `on-run-start` query) and the peak RSS of the dbt process
  (the Python process, not its JVM: the CSV is streamed, so it stays flat as rows grow);
- the peer: dbt-spark (`type: spark`, `method: session`, the same catalog settings) seeding
  the same file, measured the same way;
- the floor: no dbt, pyarrow reading the same file and Spark writing it to an Iceberg table
  (through a Parquet file Spark reads, as the adapter does), in a process of its own.
The machine is shared: the 1-minute load average is recorded with every measurement. Raw
numbers go to `bench/results/seed_load.csv`.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from datetime import date, timedelta
from pathlib import Path

from machine import write_csv
from profiles import write_profiles

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog

DBT = str(Path(sys.executable).parent / "dbt")
MASTER = "local[2]"
SCHEMA = "bench"

FLOOR_SCRIPT = """
import sys, tempfile, time
import pyarrow.csv as pa_csv, pyarrow.parquet as pq
from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.engines.spark_session import get_or_create_session
from dbt.adapters.s3tables.catalogs.jars import JarSources
path, warehouse, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
catalog = CatalogConfig(name="local", catalog_type="local", warehouse=warehouse)
IcebergCatalog(catalog).ensure_initialized()
spark = get_or_create_session(catalog, "local[2]", {}, JarSources())
spark.sql("CREATE NAMESPACE IF NOT EXISTS floor")
for _ in range(runs):
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as directory:
        pq.write_table(pa_csv.read_csv(path), f"{directory}/rows.parquet")
        spark.read.parquet(f"{directory}/rows.parquet").writeTo("floor.big_seed").using(
            "iceberg"
        ).createOrReplace()
    print("floor_seconds", time.perf_counter() - started, flush=True)
"""


def write_seed_csv(path: Path, rows: int) -> None:
    rng = random.Random(42)
    start = date(2020, 1, 1)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "customer", "signup_date", "amount", "active", "note"])
        for i in range(rows):
            writer.writerow(
                [
                    i,
                    f'customer "{i}", Zoë',
                    (start + timedelta(days=i % 1500)).isoformat(),
                    f"{rng.randint(0, 10**6) / 100:.2f}",
                    "true" if i % 3 else "false",
                    "" if i % 7 == 0 else f"note {i}",
                ]
            )


def make_project(root: Path, catalog: CatalogConfig) -> None:
    (root / "seeds").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        "name: bench_seed\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n"
        # Start Spark before the seed, so the seed's own time excludes the JVM start.
        "on-run-start: ['select 1']\n"
        "seeds:\n  bench_seed:\n    big_seed:\n      +column_types: {amount: 'decimal(12,2)'}\n"
        "      +file_format: iceberg\n"
    )
    write_profiles(root, catalog, MASTER, SCHEMA, threads=1)


def seed_once(root: Path, target: str) -> tuple[float, float, int]:
    """The seed node's execution time, the dbt process's peak RSS (MiB), rows reported."""
    process = subprocess.Popen(
        [DBT, "seed", "--target", target, "--profiles-dir", str(root), "--project-dir", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    output = process.stdout.read() if process.stdout else b""
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise RuntimeError(f"dbt seed on {target} failed:\n{output.decode()[-3000:]}")
    results = json.loads((root / "target" / "run_results.json").read_text())
    node = next(r for r in results["results"] if r["unique_id"].startswith("seed."))
    rows = node["adapter_response"].get("rows_affected", 0)
    return node["execution_time"], usage.ru_maxrss / 1024, rows


def floor_times(path: Path, warehouse: Path, runs: int) -> list[float]:
    finished = subprocess.run(
        [sys.executable, "-c", FLOOR_SCRIPT, str(path), str(warehouse), str(runs)],
        check=True,
        capture_output=True,
        text=True,
    )
    lines = [line.split() for line in finished.stdout.splitlines()]
    return [float(parts[1]) for parts in lines if parts[:1] == ["floor_seconds"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 500_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--peer-runs", type=int, default=1, help="dbt-spark is slow: fewer")
    parser.add_argument(
        "--peer-max-rows", type=int, default=100_000, help="dbt-spark only up to this size"
    )
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_seed_"))
    catalog = CatalogConfig(name="local", catalog_type="local", warehouse=str(root / "warehouse"))
    raw: list[dict[str, object]] = []
    try:
        IcebergCatalog(catalog).ensure_initialized()
        make_project(root, catalog)
        print(f"seed load, 6 columns, master {MASTER}; shared machine: load average recorded")
        for rows in args.rows:
            path = root / "seeds" / "big_seed.csv"
            write_seed_csv(path, rows)
            medians: dict[str, float] = {}
            peer_runs = args.peer_runs if rows <= args.peer_max_rows else 0
            for label, target, runs in (
                ("dbt-s3tables", "s3tables", args.runs),
                ("dbt-spark", "spark", peer_runs),
            ):
                if not runs:
                    print(f"{rows:>9,} rows {label:13s} not run (--peer-max-rows)")
                    continue
                measured = []
                for run in range(runs):
                    seconds, rss, loaded = seed_once(root, target)
                    if loaded != rows:
                        raise RuntimeError(f"{label} reported {loaded} rows, not {rows}")
                    load = os.getloadavg()[0]
                    measured.append((seconds, rss, load))
                    raw.append(
                        {
                            "rows": rows,
                            "what": label,
                            "run": run + 1,
                            "seconds": round(seconds, 3),
                            "peak_rss_mib": round(rss),
                            "load_1min": round(load, 2),
                        }
                    )
                medians[label] = statistics.median(s for s, _, _ in measured)
                print(
                    f"{rows:>9,} rows {label:13s} seed node median {medians[label]:6.2f} s "
                    f"(runs {', '.join(f'{s:.2f}' for s, _, _ in measured)}), dbt process "
                    f"peak RSS {max(r for _, r, _ in measured):.0f} MiB, "
                    f"load {', '.join(f'{x:.1f}' for _, _, x in measured)}"
                )
            floors = floor_times(path, root / "floor_warehouse", args.runs)
            load = os.getloadavg()[0]
            raw.extend(
                {
                    "rows": rows,
                    "what": "floor",
                    "run": run + 1,
                    "seconds": round(seconds, 3),
                    "peak_rss_mib": "",
                    "load_1min": round(load, 2),
                }
                for run, seconds in enumerate(floors)
            )
            medians["floor"] = statistics.median(floors)
            print(
                f"{rows:>9,} rows {'floor':13s} pyarrow read + Spark Iceberg write median "
                f"{medians['floor']:6.2f} s (runs {', '.join(f'{s:.2f}' for s in floors)}), "
                f"load {load:.1f}"
            )
            ours = medians["dbt-s3tables"]
            if "dbt-spark" in medians:
                ratio = medians["dbt-spark"] / ours
                print(f"{rows:>9,} rows dbt-spark / dbt-s3tables {ratio:.1f}x")
            print(f"{rows:>9,} rows dbt-s3tables / floor {ours / medians['floor']:.1f}x")
        print(f"raw numbers: {write_csv('seed_load', raw)}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
