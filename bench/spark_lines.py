"""Benchmark: Spark 3.5 against Spark 4.1 (Iceberg 1.12 on both), in one sitting.

Runs, one after the other, `format_versions.py` (1M and 5M merges, the scans after 100
merges) on Spark 3.5 (`.venv`) and its 1M merges on Spark 4.1 (`.venv-spark41`), then
`edit_run_loop.py` on each line; then prints the edit-run loop and the 1M merge of both
lines side by side, from the results files those runs wrote, with the load they ran at.

    .venv/bin/python bench/spark_lines.py            # measure, then compare
    .venv/bin/python bench/spark_lines.py --compare  # compare the last results only
"""

from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
from pathlib import Path

from machine import RESULTS

REPO = Path(__file__).resolve().parents[1]
# Spark line: (its virtualenv's Python, the suffix of its results files).
LINES = {
    "3.5": (REPO / ".venv" / "bin" / "python", ""),
    "4.1": (REPO / ".venv-spark41" / "bin" / "python", "_spark41"),
}
EDIT_RUN_TARGETS = {"s3tables": "cold in-process", "warm": "warm Connect", "spark": "dbt-spark"}
MERGE_ROWS = "1000000"


def run(python: Path, script: str, *arguments: str) -> None:
    subprocess.run([str(python), script, *arguments], cwd=REPO / "bench", check=True)


def measure() -> None:
    python35, _ = LINES["3.5"]
    python41, _ = LINES["4.1"]
    run(python35, "format_versions.py")
    run(python41, "format_versions.py", "--sizes", MERGE_ROWS, "--scan-after", "")
    run(python35, "edit_run_loop.py")
    run(python41, "edit_run_loop.py")


def read(name: str, suffix: str) -> list[dict[str, str]]:
    with (RESULTS / f"{name}{suffix}.csv").open() as handle:
        return list(csv.DictReader(handle))


def load_range(rows: list[dict[str, str]], column: str) -> str:
    loads = [float(r[column]) for r in rows]
    return f"{min(loads):.1f}-{max(loads):.1f}"


def compare() -> list[str]:
    lines = ["Spark 3.5 vs 4.1 (Iceberg 1.12.0), medians, seconds"]
    loops = {line: read("edit_run_loop", suffix) for line, (_, suffix) in LINES.items()}
    lines.append(
        "  edit-run loop (`dbt run -s one_model`, fresh process; load "
        + ", ".join(f"{line}: {load_range(rows, 'load_1min')}" for line, rows in loops.items())
        + ")"
    )
    for target, label in EDIT_RUN_TARGETS.items():
        times = {
            line: statistics.median(
                float(r["seconds"])
                for r in rows
                if r["measure"] == "wall" and r["target"] == target
            )
            for line, rows in loops.items()
        }
        lines.append(
            f"    {label:22s} 3.5 {times['3.5']:6.2f}   4.1 {times['4.1']:6.2f}   "
            f"4.1/3.5 {times['4.1'] / times['3.5']:4.2f}"
        )
    merges = {
        line: [r for r in read("format_versions_merge", suffix) if r["rows"] == MERGE_ROWS]
        for line, (_, suffix) in LINES.items()
    }
    lines.append(
        "  1% merge into 1M rows (load "
        + ", ".join(f"{line}: {load_range(rows, 'load_1m')}" for line, rows in merges.items())
        + ")"
    )
    contenders = list(dict.fromkeys(r["contender"] for r in merges["3.5"]))
    for mode, column in [("warm", "model_s"), ("process", "model_s"), ("process", "wall_s")]:
        for contender in contenders:
            times = {
                line: statistics.median(
                    float(r[column])
                    for r in rows
                    if r["mode"] == mode and r["contender"] == contender
                )
                for line, rows in merges.items()
            }
            what = f"{mode} {'wall' if column == 'wall_s' else 'model'}"
            lines.append(
                f"    {what:13s} {contender:22s} 3.5 {times['3.5']:6.2f}   4.1 "
                f"{times['4.1']:6.2f}   4.1/3.5 {times['4.1'] / times['3.5']:4.2f}"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--compare", action="store_true", help="only compare the last results")
    if not parser.parse_args().compare:
        measure()
    print("\n".join(compare()))


if __name__ == "__main__":
    main()
