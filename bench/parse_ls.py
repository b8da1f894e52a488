"""Benchmark: the commands that never start Spark. `dbt parse` (a full parse, and a partial
parse of an unchanged project) and `dbt ls`, each a fresh process, wall clock, median of
several runs, this adapter and dbt-spark side by side on the same project.

The project: 100 models in chains of ten (each selecting from the one before it, by
`ref`), every model documented in YAML with a `not_null` and a `unique` test on its key.
What separates the two adapters here is what loading the plugin imports and what it does
at start-up: neither opens a catalog or a Spark session for these commands.

dbt's anonymous usage tracking is off for every run (`DO_NOT_TRACK=1`). The machine is
shared: the 1-minute load average is recorded with every measurement. Raw numbers go to
`bench/results/parse_ls.csv`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import write_csv
from profiles import project_arguments, write_profiles

from dbt.adapters.s3tables.catalogs.config import CatalogConfig

DBT = str(Path(sys.executable).parent / "dbt")
SCHEMA = "parse_ls"
TARGETS = ("s3tables", "spark")
LABELS = {"s3tables": "dbt-s3tables", "spark": "dbt-spark"}
DBT_ENV = {**os.environ, "DO_NOT_TRACK": "1"}
CHAINS = 10
CHAIN_LENGTH = 10
# Each command: its arguments after `dbt`, and whether it keeps the partial-parse file.
COMMANDS = {
    "parse (full)": ["parse", "--no-partial-parse"],
    "parse (partial, unchanged)": ["parse"],
    "ls": ["ls", "--resource-type", "model", "--quiet"],
}


def write_project(root: Path) -> None:
    models = root / "models"
    models.mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        "name: parse_ls\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n"
        "models:\n  parse_ls:\n    +materialized: table\n"
    )
    documented = []
    for chain in range(CHAINS):
        for step in range(CHAIN_LENGTH):
            name = f"chain_{chain}_step_{step}"
            upstream = f"{{{{ ref('chain_{chain}_step_{step - 1}') }}}}"
            source = (
                f"select id, cast(id * {step + 1} as bigint) as amount from range(100)"
                if step == 0
                else f"select id, amount + 1 as amount from {upstream}"
            )
            (models / f"{name}.sql").write_text(source + "\n")
            documented.append(
                f"  - name: {name}\n"
                f"    description: step {step} of chain {chain}\n"
                "    columns:\n"
                "      - name: id\n"
                "        data_tests: [not_null, unique]\n"
                "      - name: amount\n"
                "        description: the running amount\n"
            )
    (models / "schema.yml").write_text("version: 2\nmodels:\n" + "".join(documented))


def timed(root: Path, target: str, arguments: list[str]) -> float:
    """Wall seconds of one dbt command in a fresh process."""
    command = [DBT, *arguments, *project_arguments(root, target)]
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=root, env=DBT_ENV)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"dbt {' '.join(arguments)} on {target} failed:\n{result.stdout[-3000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_parse_ls_"))
    catalog = CatalogConfig(name="local", catalog_type="local", warehouse=str(root / "wh"))
    try:
        write_project(root)
        write_profiles(root, catalog, "local[2]", SCHEMA, threads=1)
        for target in TARGETS:  # untimed: compiles Python's bytecode, writes the parse file
            timed(root, target, COMMANDS["parse (partial, unchanged)"])
        rows: list[dict[str, object]] = []
        times: dict[tuple[str, str], list[float]] = {}
        for run in range(args.runs):
            # Alternate the order so a load spike does not land on one adapter only.
            order = TARGETS if run % 2 == 0 else tuple(reversed(TARGETS))
            for name, arguments in COMMANDS.items():
                for target in order:
                    load = os.getloadavg()[0]
                    seconds = timed(root, target, arguments)
                    times.setdefault((name, target), []).append(seconds)
                    rows.append(
                        {
                            "command": name,
                            "target": target,
                            "run": run + 1,
                            "seconds": round(seconds, 3),
                            "load_1min": round(load, 2),
                        }
                    )
        loads = [float(str(r["load_1min"])) for r in rows]
        print(
            f"{CHAINS * CHAIN_LENGTH} models with 2 tests each, a fresh process per command, "
            f"median of {args.runs}; 1-minute load {min(loads):.1f}-{max(loads):.1f}"
        )
        print(f"  {'':32s} {LABELS['s3tables']:>12s} {LABELS['spark']:>10s}  ratio")
        for name in COMMANDS:
            ours = statistics.median(times[(name, "s3tables")])
            theirs = statistics.median(times[(name, "spark")])
            print(f"  dbt {name:28s} {ours:10.2f} s {theirs:8.2f} s  {ours / theirs:.2f}")
        print(f"raw numbers: {write_csv('parse_ls', rows)}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
