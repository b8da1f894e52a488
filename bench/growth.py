"""Benchmark: the growth curve of an incremental merge, against dbt-spark.

A table partitioned by day (60 days) at each target size (default 0.1M, 1M and 5M rows)
takes a fixed 1% change set confined to its last 3 days (half updates of existing ids,
half new ids), through a `merge` model whose `incremental_predicates` confine the target
side to those days:

- dbt-s3tables with its default `write_mode` (merge_on_read: delete files, no rewrite);
- dbt-s3tables with `write_mode: copy_on_write` (data files of touched days rewritten);
- dbt-spark (`method: session`, Iceberg's default copy-on-write), given this adapter's
  Spark settings through `server_side_parameters`.

Every measurement is its own `dbt run` process, as a scheduled job runs; the target is
first rolled back to the same starting snapshot. For each it records the model's
execution time (run_results.json; an `on-run-start` query reading an Iceberg table starts
and warms the JVM and the catalog before the model, for both adapters) and the whole
`dbt run` process's wall time,
the snapshot summary of the commit (data files rewritten, files added, bytes written),
the data and delete files written or removed outside the changed days (must be 0), and
the peak resident memory of the dbt process and of its JVM (sampled from /proc). Rows are
checked after every run. Raw numbers go to `bench/results/growth.csv`.

    python bench/growth.py --sizes 100000 1000000 5000000 --runs 3
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from machine import write_csv
from profiles import write_profiles
from pyiceberg.manifest import ManifestEntryStatus

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.jars import JarSources
from dbt.adapters.s3tables.engines.spark_session import get_or_create_session

DBT = str(Path(sys.executable).parent / "dbt")
SCHEMA = "bench"
MASTER = "local[2]"
FIRST_DAY = datetime.date(2024, 1, 1)
DAYS = 60
CHANGED_DAYS = 3
# The changes land in the last CHANGED_DAYS days; the predicate confines the target to them.
CHANGED_FROM = DAYS - CHANGED_DAYS
PREDICATE = f"DBT_INTERNAL_DEST.day >= date'{FIRST_DAY + datetime.timedelta(CHANGED_FROM)}'"
MODEL_SQL = f"select id, day, name, amount, version from {SCHEMA}.changes"


@dataclass(frozen=True)
class Contender:
    label: str
    target: str
    model: str
    config: str
    # The starting table's properties: what the contender's own full build would set.
    properties: dict[str, str]


ROW_LEVEL = ("write.merge.mode", "write.update.mode", "write.delete.mode")
CONTENDERS = [
    Contender(
        "dbt-s3tables (merge_on_read)",
        "s3tables",
        "merge_mor",
        "",
        {p: "merge-on-read" for p in ROW_LEVEL},
    ),
    Contender(
        "dbt-s3tables (copy_on_write)",
        "s3tables",
        "merge_cow",
        "write_mode='copy_on_write', ",
        {p: "copy-on-write" for p in ROW_LEVEL},
    ),
    Contender(
        "dbt-spark",
        "spark",
        "merge_spark",
        "incremental_strategy='merge', file_format='iceberg', ",
        {},
    ),
]


@dataclass
class Measurement:
    rows: int
    contender: str
    run: int
    model_seconds: float
    process_seconds: float
    commits: int
    data_files_rewritten: int
    data_files_added: int
    delete_files_added: int
    bytes_written: int
    files_outside_changed_days: int
    dbt_peak_rss_mib: float
    jvm_peak_rss_mib: float


def write_project(root: Path, catalog: CatalogConfig) -> None:
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        "name: bench_growth\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n"
        # Spark starts and first reads the catalog before the model: the model's time
        # excludes the JVM start and the first catalog access, under both adapters.
        f"on-run-start: ['select count(*) from {SCHEMA}.changes']\n"
    )
    write_profiles(root, catalog, MASTER, SCHEMA, threads=1)
    for contender in CONTENDERS:
        (root / "models" / f"{contender.model}.sql").write_text(
            f"{{{{ config(materialized='incremental', unique_key='id', partition_by=['day'], "
            f'{contender.config}incremental_predicates=["{PREDICATE}"]) }}}}\n{MODEL_SQL}\n'
        )


def create_inputs(spark, rows: int) -> int:
    """The base table (ids 0..rows-1 spread over DAYS days) and the 1% change set:
    half updates of ids in the last CHANGED_DAYS days, half new ids in those days.
    Returns the number of changed rows."""
    changed = rows // 100
    updates = changed // 2
    day = "date_add(date'{first}', CAST({offset} AS INT))"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {SCHEMA}")
    spark.sql(
        f"CREATE OR REPLACE TABLE {SCHEMA}.base USING iceberg AS "
        f"SELECT id, {day.format(first=FIRST_DAY, offset=f'id % {DAYS}')} AS day, "
        f"CAST(id % 1000 AS STRING) AS name, id * 1.5 AS amount, 1 AS version FROM range({rows})"
    )
    changed_day = day.format(first=FIRST_DAY, offset=f"{CHANGED_FROM} + k % {CHANGED_DAYS}")
    spark.sql(
        f"CREATE OR REPLACE TABLE {SCHEMA}.changes USING iceberg AS "
        f"SELECT {DAYS} * k + {CHANGED_FROM} + k % {CHANGED_DAYS} AS id, {changed_day} AS day, "
        f"'changed' AS name, k * 2.5 AS amount, 2 AS version FROM range({updates}) AS r(k) "
        f"UNION ALL SELECT {rows} + k AS id, {changed_day} AS day, 'changed' AS name, "
        f"k * 2.5 AS amount, 2 AS version FROM range({changed - updates}) AS r(k)"
    )
    return changed


def create_target(spark, contender: Contender) -> None:
    properties = ", ".join(f"'{k}' = '{v}'" for k, v in contender.properties.items())
    spark.sql(
        f"CREATE OR REPLACE TABLE {SCHEMA}.{contender.model} USING iceberg PARTITIONED BY (day) "
        f"{f'TBLPROPERTIES ({properties}) ' if properties else ''}AS SELECT * FROM {SCHEMA}.base"
    )


class PeakMemory:
    """Samples VmHWM (a process's peak resident set) of a process and its descendants
    until stopped: the dbt process's own peak and its JVM's (the `java` descendant)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peaks: dict[int, tuple[str, int]] = {}
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _tree(self, pid: int) -> list[int]:
        pids = [pid]
        for task in Path(f"/proc/{pid}/task").glob("*"):
            children = (task / "children").read_text().split()
            for child in children:
                pids += self._tree(int(child))
        return pids

    def _sample(self) -> None:
        while not self._stopped.wait(0.05):
            try:
                pids = self._tree(self.pid)
            except OSError:
                continue  # a process ended while the tree was read: sample again
            for pid in pids:
                try:
                    status = Path(f"/proc/{pid}/status").read_text().splitlines()
                except OSError:
                    continue
                fields = dict(line.split(":", 1) for line in status if ":" in line)
                peak_kib = int(fields.get("VmHWM", "0 kB").split()[0])
                name = fields["Name"].strip()
                self.peaks[pid] = (name, max(peak_kib, self.peaks.get(pid, (name, 0))[1]))

    def stop(self) -> tuple[float, float]:
        """(dbt process peak, JVM peak), MiB."""
        self._stopped.set()
        self._thread.join()
        dbt = self.peaks.get(self.pid, ("", 0))[1]
        jvm = max((kib for name, kib in self.peaks.values() if name == "java"), default=0)
        return dbt / 1024, jvm / 1024


def run_model(root: Path, contender: Contender) -> tuple[float, float, float, float]:
    """One `dbt run` of the contender's model: (model seconds, process seconds, dbt MiB,
    JVM MiB)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [DBT, "run", "--target", contender.target, "--select", contender.model]
        + ["--project-dir", str(root), "--profiles-dir", str(root)],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    memory = PeakMemory(process.pid)
    output, _ = process.communicate()
    process_seconds = time.perf_counter() - started
    dbt_mib, jvm_mib = memory.stop()
    if process.returncode != 0:
        raise RuntimeError(f"dbt run of {contender.model} failed:\n{output[-4000:]}")
    results = json.loads((root / "target" / "run_results.json").read_text())
    model = next(r for r in results["results"] if r["unique_id"].startswith("model."))
    return model["execution_time"], process_seconds, dbt_mib, jvm_mib


def inspect_commit(table, start_snapshot: int, changed_days: set[int]) -> dict[str, int]:
    """What the run committed since `start_snapshot`: commits, the snapshot summary's
    file and byte counts, and files added or removed outside the changed days."""
    current = table.current_snapshot()
    commits, snapshot = 0, current
    while snapshot is not None and snapshot.snapshot_id != start_snapshot:
        commits += 1
        parent = snapshot.parent_snapshot_id
        snapshot = table.snapshot_by_id(parent) if parent is not None else None
    summary = current.summary
    outside = 0
    for manifest in current.manifests(table.io):
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=False):
            touched = entry.status in (ManifestEntryStatus.ADDED, ManifestEntryStatus.DELETED)
            if touched and entry.snapshot_id == current.snapshot_id:
                outside += entry.data_file.partition[0] not in changed_days
    return {
        "commits": commits,
        "data_files_rewritten": int(summary.get("deleted-data-files") or 0),
        "data_files_added": int(summary.get("added-data-files") or 0),
        "delete_files_added": int(summary.get("added-delete-files") or 0),
        "bytes_written": int(summary.get("added-files-size") or 0),
        "files_outside_changed_days": outside,
    }


def check_rows(table, rows: int, changed: int) -> None:
    """The merge's outcome: every old row kept once, the changes applied exactly."""
    ids = table.scan(selected_fields=("id",)).to_arrow()["id"]
    expected = rows + changed - changed // 2
    versions = table.scan(row_filter="version == 2", selected_fields=("id",)).to_arrow()
    if len(ids) != expected or len(set(ids.to_pylist())) != expected or len(versions) != changed:
        raise RuntimeError(
            f"{table.name()}: {len(ids)} rows, {len(versions)} changed; "
            f"expected {expected} rows, {changed} changed"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 5_000_000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_growth_"))
    warehouse = root / "warehouse"
    config = CatalogConfig(name="local", catalog_type="local", warehouse=str(warehouse))
    measurements: list[Measurement] = []
    try:
        catalog = IcebergCatalog(config)
        catalog.ensure_initialized()
        write_project(root, config)
        spark = get_or_create_session(config, MASTER, {}, JarSources())
        # Partition values of a date are days since 1970-01-01.
        first_day = (FIRST_DAY - datetime.date(1970, 1, 1)).days
        changed_days = set(range(first_day + CHANGED_FROM, first_day + DAYS))
        for rows in args.sizes:
            changed = create_inputs(spark, rows)
            starts = {}
            for contender in CONTENDERS:
                create_target(spark, contender)
                table = catalog.catalog.load_table((SCHEMA, contender.model))
                starts[contender.model] = table.current_snapshot().snapshot_id
            for run in range(args.runs):
                # Rotate the order each round so no contender always runs first.
                shift = run % len(CONTENDERS)
                for contender in CONTENDERS[shift:] + CONTENDERS[:shift]:
                    table = catalog.catalog.load_table((SCHEMA, contender.model))
                    start = starts[contender.model]
                    if table.current_snapshot().snapshot_id != start:
                        table.manage_snapshots().rollback_to_snapshot(start).commit()
                    seconds, process_seconds, dbt_mib, jvm_mib = run_model(root, contender)
                    table = catalog.catalog.load_table((SCHEMA, contender.model))
                    check_rows(table, rows, changed)
                    measurement = Measurement(
                        rows=rows,
                        contender=contender.label,
                        run=run + 1,
                        model_seconds=round(seconds, 3),
                        process_seconds=round(process_seconds, 3),
                        dbt_peak_rss_mib=round(dbt_mib, 1),
                        jvm_peak_rss_mib=round(jvm_mib, 1),
                        **inspect_commit(table, start, changed_days),
                    )
                    measurements.append(measurement)
                    print(measurement, flush=True)
        path = write_csv("growth", [asdict(m) for m in measurements])
        print_table(measurements, args.runs)
        print(f"raw numbers: {path}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def print_table(measurements: list[Measurement], runs: int) -> None:
    print(
        f"\n1% change confined to {CHANGED_DAYS} of {DAYS} day partitions, merge with "
        f"incremental_predicates, median of {runs} runs, master {MASTER}\n"
    )
    print(
        "| rows | contender | model time | vs dbt-spark | whole `dbt run` | data files rewritten | "
        "files added (data + delete) | bytes written | files outside changed days | "
        "dbt process peak RSS | JVM peak RSS |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for rows in dict.fromkeys(m.rows for m in measurements):
        at_size = [m for m in measurements if m.rows == rows]
        spark = statistics.median(m.model_seconds for m in at_size if m.contender == "dbt-spark")
        for contender in CONTENDERS:
            own = [m for m in at_size if m.contender == contender.label]

            def median(field: str, own: list[Measurement] = own) -> float:
                return statistics.median(getattr(m, field) for m in own)

            seconds = median("model_seconds")
            print(
                f"| {rows:,} | {contender.label} | {seconds:.2f} s | {seconds / spark:.2f}x | "
                f"{median('process_seconds'):.1f} s | "
                f"{median('data_files_rewritten'):.0f} | {median('data_files_added'):.0f} + "
                f"{median('delete_files_added'):.0f} | {median('bytes_written') / 2**20:.2f} MiB"
                f" | {max(m.files_outside_changed_days for m in own)} | "
                f"{median('dbt_peak_rss_mib'):.0f} MiB | {median('jvm_peak_rss_mib'):.0f} MiB |"
            )


if __name__ == "__main__":
    main()
