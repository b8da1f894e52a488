"""Benchmark: load a 100k-row CSV seed through `dbt seed` on the embedded catalog.

Prints the seed's execution time as dbt reports it (run_results.json; Spark is already
running by then) and the wall time of the whole `dbt seed` process (which includes
starting Spark), median of several runs.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

DBT = str(Path(sys.executable).parent / "dbt")


def write_csv(path: Path, rows: int) -> None:
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


def make_project(root: Path, rows: int) -> None:
    (root / "seeds").mkdir(parents=True)
    write_csv(root / "seeds" / "big_seed.csv", rows)
    (root / "dbt_project.yml").write_text(
        "name: bench_seed\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n"
        # Start Spark before the seed, so the seed's own time excludes the JVM start.
        "on-run-start: ['select 1']\n"
        "seeds:\n  bench_seed:\n    big_seed:\n      +column_types: {amount: 'decimal(12,2)'}\n"
    )
    (root / "profiles.yml").write_text(
        "bench:\n  target: local\n  outputs:\n    local:\n      type: s3tables\n"
        "      schema: bench\n      warehouse: ./warehouse\n      master: 'local[2]'\n"
    )


def run_once(root: Path) -> tuple[float, float, int]:
    started = time.perf_counter()
    subprocess.run(
        [DBT, "seed", "--profiles-dir", str(root), "--project-dir", str(root)],
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - started
    results = json.loads((root / "target" / "run_results.json").read_text())
    node = next(r for r in results["results"] if r["unique_id"].startswith("seed."))
    return node["execution_time"], wall, node["adapter_response"].get("rows_affected", 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_seed_"))
    try:
        make_project(root, args.rows)
        runs = [run_once(root) for _ in range(args.runs)]
        seed_times = [r[0] for r in runs]
        wall_times = [r[1] for r in runs]
        print(f"seed load, {args.rows:,} rows x 6 columns, {args.runs} runs")
        print(
            f"  dbt seed execution time: median {statistics.median(seed_times):.2f} s "
            f"(runs: {', '.join(f'{t:.2f}' for t in seed_times)})"
        )
        print(
            f"  whole `dbt seed` process incl. Spark start: median "
            f"{statistics.median(wall_times):.2f} s"
        )
        print(f"  rows reported: {runs[-1][2]:,}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
