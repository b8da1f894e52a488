"""Soak: kill `dbt run` (the dbt process and its JVM) with SIGKILL at a random moment,
round after round, and check that no table is ever caught between two states.

Each round runs incremental models (merge, delete+insert, scd2, insert_overwrite, and
one whose schema grows every fifth round) on that round's input, then:

1. kills the run at a random moment (SIGKILL to its process group: dbt and the JVM);
2. reads every target table through PyIceberg (the catalog must open);
3. reruns `dbt run` normally (it must succeed and converge);
4. checks that each table, as the kill left it, holds exactly the rows it held before the
   round or exactly the rows after the rerun (row sets, not counts; the strategies are
   idempotent for a given input, so "after the rerun" is "after the round"), and that
   no unique key appears twice.

A kill between the schema commit and the data commit of the evolving model leaves the
new column added and empty: its rows are compared on the columns it had before, and
such rounds are counted.

    python bench/soak.py --rounds 50 --threads 1
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import write_csv

from dbt.adapters.s3tables.catalog_config import CatalogConfig
from dbt.adapters.s3tables.iceberg_catalog import IcebergCatalog

DBT = str(Path(sys.executable).parent / "dbt")
SCHEMA = "soak"
KEYED = {"merged": "id", "delete_inserted": "id", "partitions_replaced": "id", "evolving": "id"}
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
# scd2 rows carry the time they were written: compare them without it.
CLOCK_COLUMNS = {"valid_from", "valid_to"}


def open_catalog(warehouse: Path) -> IcebergCatalog:
    return IcebergCatalog(
        CatalogConfig(name="local", catalog_type="local", warehouse=str(warehouse))
    )


def write_project(root: Path, warehouse: Path, threads: int) -> None:
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
    for name, sql in MODELS.items():
        (root / "models" / name).write_text(sql)


def dbt_command(root: Path, round_number: int) -> list[str]:
    return [
        DBT,
        "run",
        "--vars",
        json.dumps({"round": round_number}),
        "--project-dir",
        str(root),
        "--profiles-dir",
        str(root),
    ]


def start_run(root: Path, round_number: int) -> subprocess.Popen:
    return subprocess.Popen(
        dbt_command(root, round_number),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        # Lines must arrive as dbt prints them, to time the kill.
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


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
    lines = wait_for_source(process)
    started = time.monotonic()
    lines += process.stdout.readlines()  # type: ignore[union-attr]
    if process.wait() != 0:
        raise RuntimeError(f"round {round_number}: clean run failed:\n{''.join(lines)[-4000:]}")
    return time.monotonic() - started


def read_tables(warehouse: Path) -> dict[str, tuple[list[str], list[tuple]]]:
    """Each table's columns and rows (clock columns left out), through PyIceberg."""
    catalog = open_catalog(warehouse)
    state = {}
    for table_name in TABLES:
        table = catalog.catalog.load_table((SCHEMA, table_name))
        rows = table.scan().to_arrow().to_pylist()
        columns = [f.name for f in table.schema().fields if f.name not in CLOCK_COLUMNS]
        state[table_name] = (columns, sorted(tuple(r.get(c) for c in columns) for r in rows))
    return state


def project(state: tuple[list[str], list[tuple]], columns: list[str]) -> list[tuple]:
    names, rows = state
    index = [names.index(c) for c in columns]
    return sorted(tuple(row[i] for i in index) for row in rows)


def orphan_files(warehouse: Path) -> int:
    """Data files on disk that no snapshot of their table references."""
    catalog = open_catalog(warehouse)
    count = 0
    for table_name in TABLES:
        table = catalog.catalog.load_table((SCHEMA, table_name))
        referenced = set()
        for snapshot in table.snapshots():
            for manifest in snapshot.manifests(table.io):
                for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=False):
                    referenced.add(entry.data_file.file_path.removeprefix("file:"))
        data_dir = Path(table.location().removeprefix("file:")) / "data"
        on_disk = {str(p) for p in data_dir.rglob("*.parquet")} if data_dir.exists() else set()
        count += len(on_disk - referenced)
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    root = Path(tempfile.mkdtemp(prefix="soak_"))
    warehouse = root / "warehouse"
    write_project(root, warehouse, args.threads)
    violations: list[str] = []
    kills_mid_run = kills_after_a_commit = schema_only = 0
    try:
        duration = run_clean(root, 0)
        for round_number in range(1, args.rounds + 1):
            before = read_tables(warehouse)
            snapshots_before = snapshot_ids(warehouse)
            process = start_run(root, round_number)
            # The kill lands anywhere while the incremental models run (or just after).
            wait_for_source(process)
            time.sleep(rng.uniform(0, duration * 1.1))
            finished = process.poll() is not None
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            killed = read_tables(warehouse)
            changed = snapshot_ids(warehouse) != snapshots_before
            run_clean(root, round_number)
            after = read_tables(warehouse)
            for table_name in TABLES:
                columns = before[table_name][0]
                at_kill = project(killed[table_name], columns)
                if killed[table_name][0] != columns and at_kill == before[table_name][1]:
                    schema_only += 1
                elif at_kill not in (before[table_name][1], project(after[table_name], columns)):
                    violations.append(f"round {round_number}: {table_name} between states")
                key = KEYED.get(table_name)
                if key:
                    keys = [row[after[table_name][0].index(key)] for row in after[table_name][1]]
                    if len(keys) != len(set(keys)):
                        violations.append(f"round {round_number}: {table_name} duplicate keys")
            kills_mid_run += not finished
            kills_after_a_commit += not finished and changed
            print(
                f"round {round_number:3d}: killed {'after exit' if finished else 'mid-run'}"
                f"{', tables changed' if changed else ''}; violations so far {len(violations)}",
                flush=True,
            )
        print(f"\nthreads {args.threads}, {args.rounds} rounds, models run {duration:.1f} s")
        print(f"kills while the models ran: {kills_mid_run}")
        print(f"  of which after at least one table had committed: {kills_after_a_commit}")
        print(f"rounds where only a schema change had landed: {schema_only}")
        print(f"violations: {len(violations)}")
        for violation in violations:
            print(f"  {violation}")
        orphans, strays = orphan_files(warehouse), stray_tables(warehouse)
        print(f"orphan data files left by killed writes: {orphans}")
        print(f"tables in the schema besides the models': {strays or 'none'}")
        summary = {
            "threads": args.threads,
            "rounds": args.rounds,
            "kills_while_models_ran": kills_mid_run,
            "kills_after_a_table_committed": kills_after_a_commit,
            "schema_only_rounds": schema_only,
            "violations": len(violations),
            "orphan_data_files": orphans,
            "stray_tables": len(strays),
        }
        print(f"raw numbers: {write_csv(f'soak_threads_{args.threads}', [summary])}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    sys.exit(1 if violations else 0)


def stray_tables(warehouse: Path) -> list[str]:
    """Tables a killed run left behind (staging or temporary tables), if any."""
    catalog = open_catalog(warehouse)
    expected = {*TABLES, "source"}
    return sorted(name for _, name in catalog.catalog.list_tables(SCHEMA) if name not in expected)


def snapshot_ids(warehouse: Path) -> dict[str, int | None]:
    catalog = open_catalog(warehouse)
    ids = {}
    for table_name in TABLES:
        snapshot = catalog.catalog.load_table((SCHEMA, table_name)).current_snapshot()
        ids[table_name] = snapshot.snapshot_id if snapshot else None
    return ids


if __name__ == "__main__":
    main()
