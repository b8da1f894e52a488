"""Benchmark: the edit-run loop. `dbt run -s one_model` (a 1,000-row table) as a fresh
process each time, wall clock, median of several runs, on three engines side by side:

- cold: this adapter in-process (`method: session`, the default): every run starts Spark;
- warm: this adapter on a warm local Spark Connect server (`method: connect`, started here
  with `dbt-s3tables-engine start connect`);
- dbt-spark: `method: session`, the same catalog settings, cold like ours.

Then, against the warm engine, where the time of one run goes (`--breakdown` child runs:
timestamps inside the process): interpreter start, dbt's imports, the adapter's imports,
dbt's start-up and parse, PyIceberg catalog opens, Spark statements, the rest.

Each target keeps its own `--target-path`, so dbt's partial parsing stays on across runs.
dbt's anonymous usage tracking is off for every run (`DO_NOT_TRACK=1`): its network calls
at the end of a run are the network's time, not an engine's.
The machine is shared: the 1-minute load average is recorded with every measurement.
Raw numbers go to `bench/results/edit_run_loop.csv`.
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
from pathlib import Path

from engines import engine
from machine import write_csv
from profiles import project_arguments, write_profiles

from dbt.adapters.s3tables.catalogs.config import CatalogConfig

DBT = str(Path(sys.executable).parent / "dbt")
MASTER = "local[2]"
SCHEMA = "loop"
TARGETS = ("s3tables", "warm", "spark")
DBT_ENV = {**os.environ, "DO_NOT_TRACK": "1"}
LABELS = {"s3tables": "cold in-process", "warm": "warm Connect", "spark": "dbt-spark cold"}

# Runs in a fresh interpreter: one `dbt run` with timestamps of its phases, as JSON.
BREAKDOWN_CHILD = r"""
import json, sys, time
marks = {"start": time.time()}
import dbt.cli.main
marks["dbt_imported"] = time.time()
import dbt.adapters.s3tables.impl
marks["adapter_imported"] = time.time()
# What the adapter imports when a run first opens the catalog (PyIceberg with pydantic,
# SQLAlchemy, pyarrow), imported here at the same point so its cost is its own phase.
import pyiceberg.catalog, pyiceberg.catalog.sql, pyiceberg.io.pyarrow
marks["catalog_libraries_imported"] = time.time()
spent = {"catalog_open": 0.0, "statements": 0.0}
load_catalog = pyiceberg.catalog.load_catalog
def timed_load_catalog(*args, **kwargs):
    started = time.time()
    try:
        return load_catalog(*args, **kwargs)
    finally:
        spent["catalog_open"] += time.time() - started
pyiceberg.catalog.load_catalog = timed_load_catalog
def on_event(event):
    name = event.info.name
    if name == "NodeStart" and "node_start" not in marks:
        marks["node_start"] = time.time()
    elif name == "SQLQueryStatus":
        spent["statements"] += float(event.data.elapsed)
result = dbt.cli.main.dbtRunner(callbacks=[on_event]).invoke(sys.argv[1:])
marks["end"] = time.time()
print(json.dumps({"ok": bool(result.success), "marks": marks, "spent": spent}))
"""


def write_project(root: Path) -> None:
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        "name: edit_run_loop\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n"
    )
    (root / "models" / "one_model.sql").write_text(
        "{{ config(materialized='table', file_format='iceberg') }}\n"
        "select id, cast(id * 2 as bigint) as doubled, concat('row ', id) as label\n"
        "from range(1000)"
    )


def add_warm_target(root: Path, host: str, port: int, warehouse: str) -> None:
    path = root / "profiles.yml"
    profiles = json.loads(path.read_text())
    profiles["bench"]["outputs"]["warm"] = {
        "type": "s3tables",
        "method": "connect",
        "host": host,
        "port": port,
        "warehouse": warehouse,
        "schema": SCHEMA,
        "threads": 1,
    }
    path.write_text(json.dumps(profiles))


def dbt_arguments(root: Path, target: str) -> list[str]:
    return ["run", "-s", "one_model", *project_arguments(root, target)]


def timed_run(root: Path, target: str) -> float:
    """Wall seconds of one `dbt run -s one_model` in a fresh process."""
    started = time.perf_counter()
    result = subprocess.run(
        [DBT, *dbt_arguments(root, target)], capture_output=True, text=True, cwd=root, env=DBT_ENV
    )
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"dbt run on {target} failed:\n{result.stdout[-3000:]}")
    return seconds


def breakdown_run(root: Path, target: str) -> dict[str, float]:
    """Where the time of one run goes, in seconds per phase."""
    spawned = time.time()
    result = subprocess.run(
        [sys.executable, "-c", BREAKDOWN_CHILD, *dbt_arguments(root, target)],
        capture_output=True,
        text=True,
        cwd=root,
        env=DBT_ENV,
    )
    ended = time.time()
    report = json.loads(result.stdout.strip().splitlines()[-1])
    if not report["ok"]:
        raise SystemExit(f"breakdown run on {target} failed:\n{result.stdout[-3000:]}")
    marks, spent = report["marks"], report["spent"]
    node_start = marks.get("node_start", marks["end"])
    phases = {
        "interpreter start": marks["start"] - spawned,
        "dbt imports": marks["dbt_imported"] - marks["start"],
        "adapter imports": marks["adapter_imported"] - marks["dbt_imported"],
        "catalog library imports (PyIceberg, SQLAlchemy, pyarrow)": marks[
            "catalog_libraries_imported"
        ]
        - marks["adapter_imported"],
        "dbt start-up and parse (to the model's start)": node_start
        - marks["catalog_libraries_imported"],
        "the model (node start to end)": marks["end"] - node_start,
        "interpreter exit": ended - marks["end"],
    }
    phases["of which PyIceberg catalog opens"] = spent["catalog_open"]
    phases["of which Spark statements"] = spent["statements"]
    phases["total"] = ended - spawned
    return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--breakdowns", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_edit_run_loop_"))
    run_dir = root / "spark-run"
    run_dir.mkdir()
    catalog = CatalogConfig(name="local", catalog_type="local", warehouse=str(root / "cold-wh"))
    warm_warehouse = str(root / "warm-wh")
    try:
        write_project(root)
        write_profiles(root, catalog, MASTER, SCHEMA, threads=1)
        server = engine("start", "connect", run_dir, "--warehouse", warm_warehouse)
        add_warm_target(root, server["host"], server["port"], warm_warehouse)
        for target in TARGETS:  # untimed: creates the schema and the partial-parse file
            timed_run(root, target)
        rows: list[dict[str, object]] = []
        times: dict[str, list[float]] = {t: [] for t in TARGETS}
        for run in range(args.runs):
            # Alternate the order so a load spike does not land on one engine only.
            for target in TARGETS if run % 2 == 0 else tuple(reversed(TARGETS)):
                load = os.getloadavg()[0]
                seconds = timed_run(root, target)
                times[target].append(seconds)
                rows.append(
                    {
                        "measure": "wall",
                        "target": target,
                        "run": run + 1,
                        "seconds": round(seconds, 3),
                        "load_1min": round(load, 2),
                    }
                )
        phases: list[dict[str, float]] = []
        for run in range(args.breakdowns):
            load = os.getloadavg()[0]
            phases.append(breakdown_run(root, "warm"))
            rows += [
                {
                    "measure": f"warm breakdown: {name}",
                    "target": "warm",
                    "run": run + 1,
                    "seconds": round(seconds, 3),
                    "load_1min": round(load, 2),
                }
                for name, seconds in phases[-1].items()
            ]
        loads = [float(r["load_1min"]) for r in rows]  # type: ignore[arg-type]
        print(
            f"`dbt run -s one_model` (1,000 rows), a fresh process each time, median of "
            f"{args.runs}; 1-minute load {min(loads):.1f}-{max(loads):.1f} (shared machine)"
        )
        medians = {t: statistics.median(v) for t, v in times.items()}
        for target in TARGETS:
            print(f"  {LABELS[target]:16s} {medians[target]:6.2f} s")
        print(f"  warm / target 2.0 s:        {medians['warm'] / 2.0:.2f}")
        print(f"  cold / dbt-spark (<= 0.6):  {medians['s3tables'] / medians['spark']:.2f}")
        print(f"  warm / dbt-spark:           {medians['warm'] / medians['spark']:.2f}")
        print(f"where a warm run's time goes (median of {args.breakdowns}):")
        for name in phases[0]:
            print(f"  {name:48s} {statistics.median(p[name] for p in phases):6.2f} s")
        print(f"raw numbers: {write_csv('edit_run_loop', rows)}")
    finally:
        engine("stop", "connect", run_dir)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
