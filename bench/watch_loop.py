"""Benchmark: the watch loop. Save-to-result time of a one-model run in `dbt-s3tables-watch
-s one_model` (a 1,000-row table, `method: session`, Spark in the watch's process), from
the model file's write to the run's result line, median of several saves; against a fresh
`dbt ls -s one_model` process (partial parse warm, no Spark) timed in the same sitting, the
cheapest dbt command a user could run instead of a watched save. Target: the watch's save
at most 0.5x the `dbt ls` process, and under 1 s.

Two result lines are timed per save: dbt's node result (`1 of 1 OK created ...`), when the
table is there, and the watch's own line after dbt's run has ended (`models/one_model.sql
saved: ... OK in ...`), when the next save can run. The saves and the `dbt ls` processes
alternate, each save a second after the last result (the watch polls every 0.2 s: a save
waits half a poll on average).

dbt's anonymous usage tracking is off for every run (`DO_NOT_TRACK=1`). The machine is
shared: the 1-minute load average is recorded with every measurement. Raw numbers go to
`bench/results/watch_loop.csv`.
"""

from __future__ import annotations

import argparse
import os
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO

from machine import write_csv
from parse_ls import timed
from profiles import write_profiles

from dbt.adapters.s3tables.catalogs.config import CatalogConfig

BIN = Path(sys.executable).parent
WATCH = str(BIN / "dbt-s3tables-watch")
SCHEMA = "watch_loop"
TARGET = "s3tables"
# A fresh `dbt ls` of the watched model: the process the watch is compared with.
LS = ["ls", "-s", "one_model"]
DBT_ENV = {**os.environ, "DO_NOT_TRACK": "1", "PYTHONUNBUFFERED": "1"}
# What each result line starts with, after dbt's or the watch's time stamp.
NODE_RESULT = "1 of 1 OK created sql table model"
WATCH_RESULT = "models/one_model.sql saved: `dbt run -s one_model` OK in"
FIRST_RUN = "First run: `dbt run -s one_model` OK in"


def model_text(version: int) -> str:
    return (
        "{{ config(materialized='table') }}\n"
        f"select id, cast(id * 2 as bigint) as doubled, {version} as version\n"
        "from range(1000)\n"
    )


def write_project(root: Path) -> None:
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        "name: watch_loop\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n"
    )
    (root / "models" / "one_model.sql").write_text(model_text(0))


class Console:
    """The watch's output, line by line, each with the time it was read."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        self.text: list[str] = []
        assert process.stdout is not None
        stdout = process.stdout
        threading.Thread(target=self._read, args=(stdout,), daemon=True).start()

    def _read(self, stdout: IO[str]) -> None:
        for line in stdout:
            self.lines.put((time.perf_counter(), line))

    def wait_for(self, text: str, limit: float) -> float:
        """When the first line from now on with `text` was read."""
        deadline = time.monotonic() + limit
        while True:
            try:
                read, line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                output = "".join(self.text)[-4000:]
                raise SystemExit(f"no `{text}` within {limit} s:\n{output}") from None
            self.text.append(line)
            if "failed in" in line:
                raise SystemExit(f"the watch's run failed:\n{''.join(self.text)[-4000:]}")
            if text in line:
                return read


def timed_save(root: Path, console: Console, version: int) -> tuple[float, float]:
    """Seconds from the model's write to dbt's node result line, and to the watch's line."""
    model = root / "models" / "one_model.sql"
    model.write_text(model_text(version))
    written = time.perf_counter()
    node = console.wait_for(NODE_RESULT, 120)
    done = console.wait_for(WATCH_RESULT, 120)
    return node - written, done - written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--saves", type=int, default=7)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_watch_loop_"))
    catalog = CatalogConfig(name="local", catalog_type="local", warehouse=str(root / "wh"))
    watch = None
    try:
        write_project(root)
        write_profiles(root, catalog, "local[2]", SCHEMA, threads=1)
        # Untimed: compiles Python's bytecode, writes the partial-parse file.
        timed(root, TARGET, LS)
        command = [WATCH, "-s", "one_model", "--project-dir", str(root)]
        command += ["--profiles-dir", str(root), "--target", TARGET]
        watch = subprocess.Popen(
            command,
            cwd=root,
            env=DBT_ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        console = Console(watch)
        console.wait_for(FIRST_RUN, 600)
        rows: list[dict[str, object]] = []
        times: dict[str, list[float]] = {"watch result": [], "watch line": [], "dbt ls": []}
        # One save untimed: the first run after Spark's start warms its code paths.
        time.sleep(1)
        timed_save(root, console, 1)
        for run in range(args.saves):
            # Alternate the order so a load spike does not land on one side only.
            for side in ("save", "ls") if run % 2 == 0 else ("ls", "save"):
                time.sleep(1)
                load = os.getloadavg()[0]
                if side == "ls":
                    measured = {"dbt ls": timed(root, TARGET, LS)}
                else:
                    node, line = timed_save(root, console, run + 2)
                    measured = {"watch result": node, "watch line": line}
                for name, seconds in measured.items():
                    times[name].append(seconds)
                    rows.append(
                        {
                            "measure": name,
                            "run": run + 1,
                            "seconds": round(seconds, 3),
                            "load_1min": round(load, 2),
                        }
                    )
        watch.send_signal(signal.SIGINT)
        if watch.wait(timeout=120) != 0:
            raise SystemExit(f"the watch exited with {watch.returncode}")
        loads = [float(str(r["load_1min"])) for r in rows]
        medians = {name: statistics.median(values) for name, values in times.items()}
        print(
            f"One model (1,000 rows), median of {args.saves}; 1-minute load "
            f"{min(loads):.1f}-{max(loads):.1f} (shared machine)"
        )
        print(f"  watch: save to dbt's result line     {medians['watch result']:6.2f} s")
        print(f"  watch: save to the watch's run line  {medians['watch line']:6.2f} s")
        print(f"  a fresh `dbt ls -s one_model`        {medians['dbt ls']:6.2f} s")
        result_ratio = medians["watch result"] / medians["dbt ls"]
        line_ratio = medians["watch line"] / medians["dbt ls"]
        print(f"  watch result / dbt ls (<= 0.5):       {result_ratio:.2f}")
        print(f"  watch line / dbt ls:                  {line_ratio:.2f}")
        print(f"raw numbers: {write_csv('watch_loop', rows)}")
    finally:
        if watch is not None and watch.poll() is None:
            watch.kill()
            watch.wait()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
