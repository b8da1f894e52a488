"""Soak: run `dbt run` round after round under a fault (`--fault`: kill, overlap or
disk-full), and check that no table is ever caught between two states.

Each round runs incremental models (merge, delete+insert, scd2, insert_overwrite, and
one whose schema grows every fifth round) on that round's input. The strategies are
idempotent for a given input, so "after a clean rerun of the round" is "after the round".

kill (the default): SIGKILL to `dbt run` (its process group: dbt and the JVM) at a random
moment while the models run, then:

1. reads every target table through PyIceberg (the catalog must open);
2. reruns `dbt run` normally (it must succeed and converge);
3. checks that each table, as the kill left it, holds exactly the rows it held before the
   round or exactly the rows after the rerun (row sets, not counts), and that no unique
   key appears twice (in the scd2 table: among its open rows).

   A kill between the schema commit and the data commit of the evolving model leaves the
   new column added and empty: its rows are compared on the columns it had before, and
   such rounds are counted.

overlap: two `dbt run` on the same project, tables and round input at once (round 0 too:
both may create the tables), each with its own log and target folders; then a clean run.
Every table a run built must hold exactly the rows after the clean run (one that no run
built: its rows before the round, or those), no unique key may appear twice, and every
snapshot a successful run reported must stay in its table's history. A run may fail only
with a message that names a concurrent writer or a table created by another run; any
other failure, or a stack trace in its output, is a violation. Retries after a write
conflict are counted from each run's dbt.log.

disk-full (needs root: the warehouse lives on a tmpfs this script mounts): after a normal
build, a filler file leaves a few MB free and the round runs with a model that writes
more than that, so the run must fail. Every model that failed (or was skipped) must have
left its table exactly as before the round, every one that succeeded as after the
rerun, and each failure message must be one readable sentence saying the disk is full
(no Java stack lines). Then the filler goes, the round is rerun (it must succeed and
converge), and files that no snapshot of their table references are counted (leftovers).

    python bench/soak.py --rounds 50 --threads 1
    python bench/soak.py --fault overlap --rounds 10
    python bench/soak.py --fault disk-full --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import urlparse

from machine import write_csv
from pyiceberg.table import Table
from pyiceberg.table.snapshots import ancestors_of

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog

DBT = str(Path(sys.executable).parent / "dbt")
SCHEMA = "soak"
# Unique keys; the scd2 table's holds among its open rows.
KEYED = {
    "merged": "id",
    "delete_inserted": "id",
    "partitions_replaced": "id",
    "evolving": "id",
    "history": "id",
}
SOURCE = """{{ config(materialized='table') }}
select id, cast(id % 5 as int) as grp, date_add(date'2024-01-01', cast(id % 4 as int)) as day,
       concat('v', cast((id * {{ var('round', 0) }}) % 97 as string)) as payload
from range(1, 301) as r(id)
"""
MODELS = {
    "merged.sql": (
        "{{ config(materialized='incremental', unique_key='id') }}\n"
        "select id, grp, payload from {{ ref('source') }}\n"
        "where id % 3 = {{ var('round', 0) }} % 3 or not {{ is_incremental() }}\n"
    ),
    "delete_inserted.sql": (
        "{{ config(materialized='incremental', incremental_strategy='delete+insert', "
        "unique_key='id') }}\n"
        "select id, grp, payload from {{ ref('source') }}\n"
        "where grp = {{ var('round', 0) }} % 5 or not {{ is_incremental() }}\n"
    ),
    "history.sql": (
        "{{ config(materialized='incremental', incremental_strategy='scd2', unique_key='id') }}\n"
        "select id, payload from {{ ref('source') }} where id <= 60\n"
    ),
    "partitions_replaced.sql": (
        "{{ config(materialized='incremental', incremental_strategy='insert_overwrite', "
        "partition_by=['day']) }}\n"
        "select id, day, payload from {{ ref('source') }}\n"
        "where day = date_add(date'2024-01-01', {{ var('round', 0) }} % 4) "
        "or not {{ is_incremental() }}\n"
    ),
    "evolving.sql": (
        "{{ config(materialized='incremental', unique_key='id', "
        "on_schema_change='append_new_columns') }}\n"
        "select id, payload"
        "{% for n in range(1, var('round', 0) // 5 + 1) %}, id * {{ n }} as extra_{{ n }}"
        "{% endfor %}\n"
        "from {{ ref('source') }} where id <= 50\n"
    ),
}
TABLES = [name.removesuffix(".sql") for name in MODELS]
# disk-full only: 100,000 rows of hashes (incompressible hex, new every round), about 14 MB
# of Parquet per write: several times what the filler leaves free. It runs last: the other
# models write on the nearly full disk first.
BULKY = {
    "bulky.sql": "{{ config(materialized='table') }}\n"
    + "".join(f"-- depends_on: {{{{ ref('{table}') }}}}\n" for table in TABLES)
    + (
        "select id, concat(sha2(cast(id + {{ var('round', 0) }} * 1000003 as string), 512),\n"
        "                  sha2(cast(id * 7 + {{ var('round', 0) }} as string), 512)) as payload\n"
        "from range(1, 100001) as r(id)\n"
    )
}
BULKY_MB = 14
# scd2 rows carry the time they were written: compare them without it, and keep of
# valid_to only whether the row is closed.
CLOCK_COLUMNS = {"valid_from"}
CLOSED = "valid_to"

# overlap: the texts that explain a failed run, and the adapter's log line per retry.
CONFLICT_EXPLANATIONS = ("concurrent", "created by another run")
RETRY_LOG_TEXT = "write conflict; retry"
# disk-full: what the failure must say; the free space the filler leaves, log-uniform from
# 16 KB (the small models' writes fail too) to 4 MB (only the bulky one's does); the tmpfs
# holds the project's tables, and every round adds one bulky snapshot to it.
DISK_FULL_TEXT = "disk is full"
FREE_BYTES = (2**14, 2**22)
TMPFS_BASE_MB = 64
# What a readable failure never shows: Python tracebacks, Java stack lines.
STACK_TRACE = re.compile(r"Traceback \(most recent call last\)|^\s*at [\w$.]+\(", re.MULTILINE)

State = tuple[list[str], list[tuple]]
Summary = dict[str, object]


@dataclass
class Outcome:
    """What one run left: exit code, console output, run_results.json entries by model
    name, and the write conflicts it retried (from its dbt.log)."""

    exit_code: int
    console: str
    results: dict[str, dict]
    retries: int

    def errors(self) -> dict[str, str]:
        """The failed models' messages, by model name."""
        return {
            name: result["message"] or ""
            for name, result in self.results.items()
            if result["status"] == "error"
        }

    def built(self, model: str) -> bool:
        return self.results.get(model, {}).get("status") == "success"


def open_catalog(warehouse: Path) -> IcebergCatalog:
    return IcebergCatalog(
        CatalogConfig(name="local", catalog_type="local", warehouse=str(warehouse))
    )


def write_project(root: Path, warehouse: Path, threads: int, models: dict[str, str]) -> None:
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        "name: soak\nversion: '1.0'\nconfig-version: 2\nprofile: soak\n"
    )
    profile = {
        "type": "s3tables",
        "schema": SCHEMA,
        "warehouse": str(warehouse),
        "master": "local[2]",
        "threads": threads,
    }
    (root / "profiles.yml").write_text(
        json.dumps({"soak": {"target": "dev", "outputs": {"dev": profile}}})
    )
    (root / "models" / "source.sql").write_text(SOURCE)
    for name, sql in models.items():
        (root / "models" / name).write_text(sql)


def dbt_command(root: Path, round_number: int, run_dir: Path | None) -> list[str]:
    command = [
        DBT,
        "run",
        "--vars",
        json.dumps({"round": round_number}),
        "--project-dir",
        str(root),
        "--profiles-dir",
        str(root),
    ]
    if run_dir:
        command += ["--log-path", str(run_dir / "logs"), "--target-path", str(run_dir / "target")]
    return command


def start_run(root: Path, round_number: int, run_dir: Path | None = None) -> subprocess.Popen:
    """Starts `dbt run` in its own process group. With `run_dir`, the run keeps its logs,
    artifacts and console output there (runs side by side must not mix them); without,
    its output is piped here line by line."""
    if run_dir:
        run_dir.mkdir(parents=True)
    with ExitStack() as stack:
        console = stack.enter_context((run_dir / "console.txt").open("w")) if run_dir else None
        return subprocess.Popen(
            dbt_command(root, round_number, run_dir),
            stdout=console or subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            # Lines must arrive as dbt prints them, to time the kill.
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )


def kill(process: subprocess.Popen) -> None:
    """SIGKILL to the run's process group: dbt and its JVM."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


@contextmanager
def running(*processes: subprocess.Popen) -> Iterator[None]:
    """Kills the runs still alive on the way out: an interrupted soak leaves no JVM
    writing to the warehouse (or holding its tmpfs)."""
    try:
        yield
    finally:
        for process in processes:
            if process.poll() is None:
                kill(process)


def wait_for_source(process: subprocess.Popen) -> list[str]:
    """Read the run's output until the source table is built: Spark is up and the
    incremental models (the tables under test) run next."""
    lines = []
    for line in process.stdout:  # type: ignore[union-attr]
        lines.append(line)
        if " OK created sql table model " in line:
            break
    return lines


def run_clean(root: Path, round_number: int) -> float:
    """A normal run; returns the seconds its incremental models took."""
    process = start_run(root, round_number)
    with running(process):
        lines = wait_for_source(process)
        started = time.monotonic()
        lines += process.stdout.readlines()  # type: ignore[union-attr]
        if process.wait() != 0:
            raise RuntimeError(f"round {round_number}: clean run failed:\n{''.join(lines)[-4000:]}")
    return time.monotonic() - started


def run_recorded(root: Path, round_number: int, run_dirs: list[Path]) -> list[Outcome]:
    """One run per folder, all started at once; their outcomes once all have ended."""
    processes = [start_run(root, round_number, run_dir) for run_dir in run_dirs]
    with running(*processes):
        exit_codes = [process.wait() for process in processes]
    return [outcome(run_dir, code) for run_dir, code in zip(run_dirs, exit_codes, strict=True)]


def outcome(run_dir: Path, exit_code: int) -> Outcome:
    results_file = run_dir / "target" / "run_results.json"
    results = json.loads(results_file.read_text())["results"] if results_file.exists() else []
    log_file = run_dir / "logs" / "dbt.log"
    log = log_file.read_text() if log_file.exists() else ""
    return Outcome(
        exit_code=exit_code,
        console=(run_dir / "console.txt").read_text(),
        results={result["unique_id"].split(".")[-1]: result for result in results},
        retries=log.count(RETRY_LOG_TEXT),
    )


def failure_violations(run: Outcome, explained: Callable[[str], bool], label: str) -> list[str]:
    """A stack trace in the console, a failure no model explains, or a model failure
    whose message `explained` refuses."""
    found = []
    if STACK_TRACE.search(run.console):
        found.append(f"{label}: stack trace in the output:\n{excerpt(run.console)}")
    if run.exit_code != 0 and not run.errors():
        found.append(f"{label}: exit {run.exit_code}, no model failed:\n{excerpt(run.console)}")
    for model, message in run.errors().items():
        if not explained(message):
            found.append(f"{label}: {model} failed with: {excerpt(message)}")
    return found


def excerpt(text: str, limit: int = 600) -> str:
    return text if len(text) <= limit else f"{text[: limit // 2]} [...] {text[-limit // 2 :]}"


def read_tables(warehouse: Path, tables: list[str]) -> dict[str, State]:
    """Each existing table's columns and rows (clock columns left out), through PyIceberg."""
    catalog = open_catalog(warehouse)
    state = {}
    for table_name in tables:
        if not catalog.catalog.table_exists((SCHEMA, table_name)):
            continue
        table = catalog.catalog.load_table((SCHEMA, table_name))
        rows = table.scan().to_arrow().to_pylist()
        columns = [f.name for f in table.schema().fields if f.name not in CLOCK_COLUMNS]
        state[table_name] = (columns, sorted(tuple(cell(r, c) for c in columns) for r in rows))
    return state


def cell(row: dict, column: str) -> object:
    return row[column] is not None if column == CLOSED else row.get(column)


def project(state: State, columns: list[str]) -> list[tuple]:
    names, rows = state
    index = [names.index(c) for c in columns]
    return sorted(tuple(row[i] for i in index) for row in rows)


def duplicate_keys(state: dict[str, State]) -> list[str]:
    """Tables where a unique key appears twice (in an scd2 table: among its open rows)."""
    found = []
    for table_name, (columns, rows) in state.items():
        key = KEYED.get(table_name)
        if key is None:
            continue
        if CLOSED in columns:
            rows = [row for row in rows if not row[columns.index(CLOSED)]]
        keys = [row[columns.index(key)] for row in rows]
        if len(keys) != len(set(keys)):
            found.append(table_name)
    return found


def local_path(uri: str) -> str:
    """`file:/x` and `file:///x` alike as `/x`."""
    return urlparse(uri).path


def referenced_files(table: Table) -> set[str]:
    """Every file the table's metadata reaches: metadata files (the current one and its
    log), statistics, each snapshot's manifest list, manifests and data/delete files."""
    metadata = table.metadata
    uris = {table.metadata_location, *(entry.metadata_file for entry in metadata.metadata_log)}
    uris |= {f.statistics_path for f in [*metadata.statistics, *metadata.partition_statistics]}
    for snapshot in table.snapshots():
        uris.add(snapshot.manifest_list)
        for manifest in snapshot.manifests(table.io):
            uris.add(manifest.manifest_path)
            for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=False):
                uris.add(entry.data_file.file_path)
    return {local_path(uri) for uri in uris}


def leftover_files(warehouse: Path) -> list[Path]:
    """Files in the schema's folder that no table of the catalog references (a Hadoop
    `.name.crc` checksum goes with `name`)."""
    catalog = open_catalog(warehouse)
    referenced: set[str] = set()
    for _, table_name in catalog.catalog.list_tables(SCHEMA):
        referenced |= referenced_files(catalog.catalog.load_table((SCHEMA, table_name)))
    return [
        path
        for path in (warehouse / SCHEMA).rglob("*")
        if path.is_file() and str(path.with_name(crc_owner(path.name))) not in referenced
    ]


def crc_owner(name: str) -> str:
    return name[1:].removesuffix(".crc") if name.startswith(".") and name.endswith(".crc") else name


def leftovers_summary(files: list[Path]) -> Summary:
    return {"leftover_files": len(files), "leftover_bytes": sum(f.stat().st_size for f in files)}


def stray_tables(warehouse: Path) -> list[str]:
    """Tables a run left behind (staging or temporary tables), if any."""
    catalog = open_catalog(warehouse)
    expected = {*TABLES, *(name.removesuffix(".sql") for name in BULKY), "source"}
    return sorted(name for _, name in catalog.catalog.list_tables(SCHEMA) if name not in expected)


def snapshot_ids(warehouse: Path) -> dict[str, int | None]:
    catalog = open_catalog(warehouse)
    ids = {}
    for table_name in TABLES:
        snapshot = catalog.catalog.load_table((SCHEMA, table_name)).current_snapshot()
        ids[table_name] = snapshot.snapshot_id if snapshot else None
    return ids


def lost_commits(warehouse: Path, runs: list[Outcome]) -> list[str]:
    """Snapshots that successful runs reported and their table's history no longer has."""
    catalog = open_catalog(warehouse)
    lost = []
    for run in runs:
        for model, result in run.results.items():
            snapshot_id = (result.get("adapter_response") or {}).get("snapshot_id")
            if result["status"] != "success" or snapshot_id is None:
                continue
            table = catalog.catalog.load_table((SCHEMA, model))
            history = {
                s.snapshot_id for s in ancestors_of(table.current_snapshot(), table.metadata)
            }
            if snapshot_id not in history:
                lost.append(f"{model}: snapshot {snapshot_id}")
    return lost


def soak_kill(root: Path, args: argparse.Namespace) -> tuple[Summary, list[str]]:
    rng = random.Random(args.seed)
    warehouse = root / "warehouse"
    write_project(root, warehouse, args.threads, MODELS)
    violations: list[str] = []
    kills_mid_run = kills_after_a_commit = schema_only = 0
    duration = run_clean(root, 0)
    for round_number in range(1, args.rounds + 1):
        before = read_tables(warehouse, TABLES)
        snapshots_before = snapshot_ids(warehouse)
        process = start_run(root, round_number)
        with running(process):
            # The kill lands anywhere while the incremental models run (or just after).
            wait_for_source(process)
            time.sleep(rng.uniform(0, duration * 1.1))
            finished = process.poll() is not None
            kill(process)
        killed = read_tables(warehouse, TABLES)
        changed = snapshot_ids(warehouse) != snapshots_before
        run_clean(root, round_number)
        after = read_tables(warehouse, TABLES)
        for table_name in TABLES:
            columns = before[table_name][0]
            at_kill = project(killed[table_name], columns)
            if killed[table_name][0] != columns and at_kill == before[table_name][1]:
                schema_only += 1
            elif at_kill not in (before[table_name][1], project(after[table_name], columns)):
                violations.append(f"round {round_number}: {table_name} between states")
        violations += [f"round {round_number}: {t} duplicate keys" for t in duplicate_keys(after)]
        kills_mid_run += not finished
        kills_after_a_commit += not finished and changed
        print(
            f"round {round_number:3d}: killed {'after exit' if finished else 'mid-run'}"
            f"{', tables changed' if changed else ''}; violations so far {len(violations)}",
            flush=True,
        )
    leftovers = leftover_files(warehouse)
    return {
        "models_run_seconds": round(duration, 1),
        "kills_while_models_ran": kills_mid_run,
        "kills_after_a_table_committed": kills_after_a_commit,
        "schema_only_rounds": schema_only,
        "violations": len(violations),
        "orphan_data_files": sum(path.suffix == ".parquet" for path in leftovers),
        **leftovers_summary(leftovers),
        "stray_tables": len(stray_tables(warehouse)),
    }, violations


def conflict_explained(message: str) -> bool:
    return any(text in message.lower() for text in CONFLICT_EXPLANATIONS)


def overlapped(first: dict, second: dict) -> bool:
    """Whether two results of one model executed at the same time."""
    spans = []
    for result in (first, second):
        execute = next((t for t in result["timing"] if t["name"] == "execute"), None)
        if not execute or not execute.get("started_at"):
            return False
        spans.append([datetime.fromisoformat(execute[k]) for k in ("started_at", "completed_at")])
    return max(spans[0][0], spans[1][0]) < min(spans[0][1], spans[1][1])


def overlap_checks(
    round_number: int,
    runs: list[Outcome],
    before: dict[str, State],
    raced: dict[str, State],
    after: dict[str, State],
) -> list[str]:
    label = f"round {round_number}"
    found = []
    for n, run in enumerate(runs, start=1):
        found += failure_violations(run, conflict_explained, f"{label} run {n}")
    for table_name in after:
        if any(run.built(table_name) for run in runs):
            allowed = [after[table_name]]
        else:
            allowed = [before.get(table_name), after[table_name]]
        if raced.get(table_name) not in allowed:
            found.append(f"{label}: {table_name} between states after the overlapping runs")
    found += [f"{label}: {t} duplicate keys" for t in duplicate_keys(raced)]
    found += [f"{label}: {t} duplicate keys after the rerun" for t in duplicate_keys(after)]
    return found


def soak_overlap(root: Path, args: argparse.Namespace) -> tuple[Summary, list[str]]:
    warehouse = root / "warehouse"
    write_project(root, warehouse, args.threads, MODELS)
    tables = [*TABLES, "source"]
    violations: list[str] = []
    retries = conflict_failures = overlapped_writes = 0
    started = time.monotonic()
    for round_number in range(args.rounds):
        before = read_tables(warehouse, tables) if round_number else {}
        run_dirs = [root / "runs" / f"{round_number}-{n}" for n in (1, 2)]
        runs = run_recorded(root, round_number, run_dirs)
        raced = read_tables(warehouse, tables)
        run_clean(root, round_number)
        after = read_tables(warehouse, tables)
        found = overlap_checks(round_number, runs, before, raced, after)
        found += [f"round {round_number}: lost {c}" for c in lost_commits(warehouse, runs)]
        violations += found
        failed = [run for run in runs if run.exit_code != 0]
        conflict_failures += sum(all(map(conflict_explained, r.errors().values())) for r in failed)
        round_retries = sum(run.retries for run in runs)
        retries += round_retries
        both = [m for m in runs[0].results if m in runs[1].results]
        round_overlaps = sum(overlapped(runs[0].results[m], runs[1].results[m]) for m in both)
        overlapped_writes += round_overlaps
        failures = "; ".join(f"{m} failed" for run in failed for m in run.errors()) or "none"
        print(
            f"round {round_number:3d}: exits {[run.exit_code for run in runs]}, "
            f"models run at the same time {round_overlaps}, retries {round_retries}, "
            f"failures: {failures}; violations so far {len(violations)}",
            flush=True,
        )
    return {
        "seconds_per_round": round((time.monotonic() - started) / args.rounds, 1),
        "violations": len(violations),
        "conflicts_retried": retries,
        "runs_failed_on_explained_conflict": conflict_failures,
        "models_run_at_the_same_time": overlapped_writes,
        **leftovers_summary(leftover_files(warehouse)),
        "stray_tables": len(stray_tables(warehouse)),
    }, violations


@contextmanager
def tmpfs(path: Path, size_mb: int) -> Iterator[None]:
    path.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(path)], check=True
    )
    try:
        yield
    finally:
        # Lazily: this process's SQLite connections to the catalog may still be open.
        subprocess.run(["umount", "--lazy", str(path)], check=True)


@contextmanager
def filled(disk: Path, free_bytes: int) -> Iterator[None]:
    """A filler file that leaves `free_bytes` free on `disk`, removed on the way out."""
    stat = os.statvfs(disk)
    filler = disk / "filler"
    with filler.open("wb") as handle:
        os.posix_fallocate(handle.fileno(), 0, stat.f_bavail * stat.f_frsize - free_bytes)
    try:
        yield
    finally:
        filler.unlink()


def disk_full_explained(message: str) -> bool:
    return DISK_FULL_TEXT in message.lower() and not STACK_TRACE.search(message)


def disk_full_checks(
    round_number: int,
    run: Outcome,
    before: dict[str, State],
    at_failure: dict[str, State],
    after: dict[str, State],
) -> list[str]:
    label = f"round {round_number}"
    found = failure_violations(run, disk_full_explained, label)
    if run.exit_code == 0:
        found.append(f"{label}: the run succeeded on a full disk")
    for table_name, rows_after in after.items():
        expected = rows_after if run.built(table_name) else before[table_name]
        if at_failure.get(table_name) != expected:
            state = "after the rerun" if run.built(table_name) else "before the round"
            found.append(f"{label}: {table_name} not as {state} after the failed run")
    found += [f"{label}: {t} duplicate keys after the rerun" for t in duplicate_keys(after)]
    return found


def soak_disk_full(root: Path, args: argparse.Namespace) -> tuple[Summary, list[str]]:
    rng = random.Random(args.seed)
    disk = root / "disk"
    warehouse = disk / "warehouse"
    write_project(root, warehouse, args.threads, {**MODELS, **BULKY})
    tables = [*TABLES, "source", *(name.removesuffix(".sql") for name in BULKY)]
    violations: list[str] = []
    failed_runs = 0
    peak: Summary = {"leftover_files": 0, "leftover_bytes": 0}
    with tmpfs(disk, TMPFS_BASE_MB + (args.rounds + 1) * BULKY_MB):
        run_clean(root, 0)
        started = time.monotonic()
        for round_number in range(1, args.rounds + 1):
            before = read_tables(warehouse, tables)
            free_bytes = int(FREE_BYTES[0] * (FREE_BYTES[1] / FREE_BYTES[0]) ** rng.random())
            with filled(disk, free_bytes):
                run_dir = root / "runs" / str(round_number)
                (run,) = run_recorded(root, round_number, [run_dir])
            at_failure = read_tables(warehouse, tables)
            leftovers = leftovers_summary(leftover_files(warehouse))
            peak = max(peak, leftovers, key=lambda s: s["leftover_bytes"])
            run_clean(root, round_number)
            after = read_tables(warehouse, tables)
            violations += disk_full_checks(round_number, run, before, at_failure, after)
            failed_runs += run.exit_code != 0
            errors = run.errors()
            first = next(iter(errors.items()), ("no model", "-"))
            print(
                f"round {round_number:3d}: {free_bytes // 2**10} KB free, exit {run.exit_code}, "
                f"failed: {', '.join(errors) or 'none'}; leftovers {leftovers['leftover_files']} "
                f"files, {leftovers['leftover_bytes']} bytes; violations so far {len(violations)}"
                f"\n    {first[0]}: {excerpt(' '.join(first[1].split()), 300)}",
                flush=True,
            )
        summary = {
            "seconds_per_round": round((time.monotonic() - started) / args.rounds, 1),
            "violations": len(violations),
            "failed_runs": failed_runs,
            "peak_leftover_files_after_a_failure": peak["leftover_files"],
            "peak_leftover_bytes_after_a_failure": peak["leftover_bytes"],
            **leftovers_summary(leftover_files(warehouse)),
            "stray_tables": len(stray_tables(warehouse)),
        }
    return summary, violations


SOAKS = {"kill": soak_kill, "overlap": soak_overlap, "disk-full": soak_disk_full}


def report(fault: str, threads: int, summary: Summary, violations: list[str]) -> None:
    """The violations, then the figures as a two-column table, then where the CSV went."""
    print(f"\n{fault}: violations {len(violations)}")
    for violation in violations:
        print(f"  {violation}")
    width = max(len(key) for key in summary)
    for key, value in summary.items():
        print(f"  {key.replace('_', ' '):<{width}}  {value:>10}")
    name = "soak" if fault == "kill" else f"soak_{fault.replace('-', '_')}"
    print(f"raw numbers: {write_csv(f'{name}_threads_{threads}', [summary])}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fault", choices=sorted(SOAKS), default="kill")
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.fault == "disk-full" and os.geteuid() != 0:
        print("disk-full skipped: it mounts a tmpfs for the warehouse, which needs root")
        return
    # A stopped soak still kills its runs, unmounts its tmpfs and removes its folder.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    root = Path(tempfile.mkdtemp(prefix="soak_"))
    try:
        figures, violations = SOAKS[args.fault](root, args)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    summary = {"threads": args.threads, "rounds": args.rounds, **figures}
    report(args.fault, args.threads, summary, violations)
    sys.exit(1 if violations else 0)


if __name__ == "__main__":
    main()
