"""Benchmark: an incremental model reading its upstream's new rows through
`upstream_changes()` against the same model with a timestamp watermark (`is_incremental()`
and `max()`), this adapter and dbt-spark.

An upstream table of N rows (`id`, `ts` = id seconds, a payload) receives 1% new rows per
round (appended, with later timestamps); then each contender, an incremental `append`
model copying the upstream, runs once (warm: one process, one SparkSession, dbt
in-process, order rotated each round):
- `upstream_changes()`: reads the commits since its last build (Iceberg's incremental
  append scan of the new data files);
- `watermark`: `where ts > (select max(ts) from {{ this }})` over the whole upstream
  (Iceberg prunes data files by their `ts` bounds);
- `dbt-spark watermark`: the same model on dbt-spark (`method: session`, same catalog).
The second scenario, `row_changes`: a merge-on-read upstream (the adapter's default)
receives per round one MERGE updating 0.5% of its rows (a new `ts`) and inserting 0.5%
new ones, then a DELETE of 0.1%; each contender is a `merge` model on `id`:
- `upstream_changes(key)`: `upstream_changes(..., unique_key='id')` with
  `merge_delete_when` (the difference of the upstream's two snapshots);
- `watermark`, `dbt-spark watermark`: `where ts > max(ts)` (sees the updates and inserts,
  not the deletes);
- `upstream_changes(key) log`: the keyed read appended to a log of changes, the read's
  own cost (a merge into a copy as large as the upstream costs in proportion to it).
A keyed read of such a range reads only the files it changed (`method: session`), else
the two snapshots whole. There every round's updates and deletes are spread over every data
file, so every file is changed. The third scenario, `recent_changes`, is the same with the
changes among the newest rows, as late updates to an events table land: the upstream is
written in 50 appends of 2% (files of narrow `id` ranges), and each round updates and
deletes rows of the newest 2% only (the same shares of the table). With each scenario of
row changes, `floor: one scan` is a plain read of every column of the upstream's files
that the round changed (no dbt, no merge): the least an exact read of the deleted rows'
values costs, when Iceberg cannot read single rows of a file. With two sizes, each
contender's time at the larger over its time at the smaller is printed too (1% churn is
10x the rows at 10x the size).
After the rounds, each copy is compared with the upstream: the rows it still holds that
the upstream deleted are reported (`stale rows`).

Measured per run: the model's execution time, and the rows Spark read (the input records
of every stage the run's jobs ran, from Spark's status store), medians. The machine is
shared: the 1-minute load average is recorded with every measurement. Raw numbers go to
`bench/results/upstream_changes.csv`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from dbt.cli.main import dbtRunner
from machine import write_csv
from profiles import write_profiles

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.jars import JarSources
from dbt.adapters.s3tables.engines.spark_session import get_or_create_session

MASTER = "local[2]"
SCHEMA = "bench_changes"
UPSTREAM = f"{SCHEMA}.events"
COPY = "select id, ts, payload from {source}"
WATERMARK = (
    COPY + "\n{{% if is_incremental() %}}where ts > (select max(ts) from {{{{ this }}}})"
    "{{% endif %}}"
)


def watermark_contenders(model: str) -> dict[str, tuple[str, str, str]]:
    """The watermark model here (`model`) and on dbt-spark (`<model>_spark`)."""
    sql = WATERMARK.format(source="{{ source('bench', 'events') }}")
    return {
        "watermark": (model, "s3tables", sql),
        "dbt-spark watermark": (f"{model}_spark", "spark", sql),
    }


# Each contender: its model, target, and model SQL.
APPEND_CONTENDERS = {
    "upstream_changes()": (
        "by_changes",
        "s3tables",
        COPY.format(source="{{ upstream_changes(source('bench', 'events')) }}"),
    ),
    **watermark_contenders("by_watermark"),
}
KEYED = "materialized='incremental', incremental_strategy='merge', unique_key='id'"
ROW_CHANGE_CONTENDERS = {
    "upstream_changes(key)": (
        "changes_merged",
        "s3tables",
        "select id, ts, payload, _change_type from "
        "{{ upstream_changes(source('bench', 'events'), unique_key='id') }}",
    ),
    **watermark_contenders("watermark_merged"),
    # The same read appended to a log of changes: the read's own cost, without a merge
    # into a copy as large as the upstream (whose cost grows with the table).
    "upstream_changes(key) log": (
        "changes_logged",
        "s3tables",
        "select id, ts, payload, _change_type from "
        "{{ upstream_changes(source('bench', 'events'), unique_key='id') }}",
    ),
}
# Contenders that are no copy of the upstream (not compared with it).
LOGS = {"changes_logged"}
MODEL_CONFIGS = {
    "changes_logged": "materialized='incremental', incremental_strategy='append'",
    "changes_merged": KEYED + ", merge_delete_when=\"_change_type = 'DELETE'\"",
    "watermark_merged": KEYED,
    "watermark_merged_spark": KEYED + ", file_format='iceberg'",
}
SCENARIOS = {
    "appends": APPEND_CONTENDERS,
    "row_changes": ROW_CHANGE_CONTENDERS,
    "recent_changes": ROW_CHANGE_CONTENDERS,
}
FLOOR = "floor: one scan"
# The share of the upstream each append of the `recent_changes` scenario writes, and so the
# newest rows its rounds change.
RECENT_SHARE = 50


def write_project(root: Path, catalog: CatalogConfig) -> None:
    models = root / "models"
    models.mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        "name: bench_changes\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n"
    )
    write_profiles(root, catalog, MASTER, SCHEMA, threads=1)
    (models / "sources.yml").write_text(
        f"version: 2\nsources:\n  - name: bench\n    schema: {SCHEMA}\n    tables:\n"
        "      - name: events\n"
    )
    for model, target, sql in APPEND_CONTENDERS.values():
        file_format = ", file_format='iceberg'" if target == "spark" else ""
        config = f"materialized='incremental', incremental_strategy='append'{file_format}"
        (models / f"{model}.sql").write_text(f"{{{{ config({config}) }}}}\n{sql}\n")
    for model, _, sql in ROW_CHANGE_CONTENDERS.values():
        (models / f"{model}.sql").write_text(f"{{{{ config({MODEL_CONFIGS[model]}) }}}}\n{sql}\n")


def append_rows(spark: Any, start: int, count: int) -> None:
    spark.sql(
        f"INSERT INTO {UPSTREAM} SELECT id, timestamp_seconds(id) AS ts, "
        f"concat('payload ', id) AS payload FROM range({start}, {start + count})"
    )


def change_rows(spark: Any, size: int, run: int, step: int, recent: bool) -> None:
    """One round of row changes: a MERGE updating 0.5% of the original rows (a different
    set each round) and inserting as many new ones, all with the round's `ts` (later than
    every earlier row's), then a DELETE of 0.1% of the original rows. The changed rows are
    spread over every original row (every 200th updated, every 1000th deleted), or when
    `recent`, over the newest 2% of them (every 4th updated, every 20th deleted)."""
    start = size + run * step
    first, updated_every, deleted_every = (
        (size - size // RECENT_SHARE, 4, 20) if recent else (0, 200, 1000)
    )
    spark.sql(
        f"MERGE INTO {UPSTREAM} AS t USING ("
        f"SELECT id, timestamp_seconds({100 * size} + {run}) AS ts, "
        f"concat('updated ', id) AS payload FROM range({first + run}, {size}, {updated_every}) "
        f"UNION ALL SELECT id, timestamp_seconds({100 * size} + {run}), concat('payload ', id) "
        f"FROM range({start}, {start + step // 2})) AS s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    spark.sql(
        f"DELETE FROM {UPSTREAM} WHERE id >= {first} AND id < {size} "
        f"AND id % {deleted_every} = {deleted_every // 2 + run}"
    )


def snapshot(spark: Any) -> int:
    """The upstream's current snapshot."""
    return int(
        spark.sql(
            f"SELECT snapshot_id FROM {UPSTREAM}.snapshots ORDER BY committed_at DESC LIMIT 1"
        ).collect()[0][0]
    )


def floor_seconds(spark: Any, start: int, end: int) -> tuple[float, int]:
    """A plain Parquet read of every column of the upstream's data files at snapshot `end`
    that the commits after `start` changed (added, or given new deletes), in one read: the
    seconds, and the rows read."""
    added = spark.sql(
        f"SELECT file_path FROM {UPSTREAM}.data_files VERSION AS OF {end} "
        f"EXCEPT SELECT file_path FROM {UPSTREAM}.data_files VERSION AS OF {start}"
    )
    deletes = f"{UPSTREAM}.position_deletes"
    given_deletes = spark.sql(
        f"SELECT DISTINCT file_path FROM {deletes} VERSION AS OF {end} WHERE delete_file_path "
        f"NOT IN (SELECT DISTINCT delete_file_path FROM {deletes} VERSION AS OF {start})"
    )
    files = sorted({str(row[0]) for row in added.union(given_deletes).collect()})
    before = stage_inputs(spark)
    began = time.perf_counter()
    spark.read.parquet(*files).selectExpr(
        "count(*)", "max(id)", "max(ts)", "max(payload)"
    ).collect()
    seconds = time.perf_counter() - began
    read = sum(count for stage, count in stage_inputs(spark).items() if stage not in before)
    return seconds, read


def stage_inputs(spark: Any) -> dict[int, int]:
    """Input records of every stage Spark's status store holds, by stage id."""
    store = spark.sparkContext._jsc.sc().statusStore()
    gateway = spark.sparkContext._gateway
    # Scala's default arguments are not there for py4j: every one is given.
    quantiles = gateway.new_array(gateway.jvm.double, 0)
    stages = store.stageList(None, False, False, quantiles, gateway.jvm.java.util.ArrayList())
    return {
        int(stages.apply(i).stageId()): int(stages.apply(i).inputRecords())
        for i in range(stages.size())
    }


def measured_run(spark: Any, root: Path, target: str, model: str) -> tuple[float, int]:
    """One warm `dbt run -s model`: the model's execution time, and the rows Spark read."""
    before = stage_inputs(spark)
    arguments = ["run", "--target", target, "--select", model, "--quiet"]
    arguments += ["--profiles-dir", str(root), "--project-dir", str(root)]
    result = dbtRunner().invoke(arguments)
    if not result.success:
        raise RuntimeError(f"dbt run of {model} on {target} failed: {result.exception}")
    after = stage_inputs(spark)
    read = sum(count for stage, count in after.items() if stage not in before)
    seconds = next(r for r in result.result.results if r.node.name == model).execution_time
    return seconds, read


def count(spark: Any, sql: str) -> int:
    return int(spark.sql(sql).collect()[0][0])


def check_copy(spark: Any, scenario: str, label: str, model: str) -> int:
    """The copy's rows the upstream no longer has (deleted upstream), after checking that
    every upstream row is in it as it is now; `upstream_changes()` must have none."""
    copy = f"{SCHEMA}.{model}"
    missing = count(
        spark,
        f"SELECT count(*) FROM (SELECT id, ts, payload FROM {UPSTREAM} "
        f"EXCEPT ALL SELECT id, ts, payload FROM {copy})",
    )
    stale = count(
        spark,
        f"SELECT count(*) FROM (SELECT id, ts, payload FROM {copy} "
        f"EXCEPT ALL SELECT id, ts, payload FROM {UPSTREAM})",
    )
    if missing or (stale and label.startswith("upstream_changes")):
        raise RuntimeError(f"{scenario}, {label}: {missing} rows missing, {stale} stale")
    return stale


def labels(scenario: str) -> list[str]:
    """What a scenario measures: its contenders, and the floor of a scenario of row changes."""
    return list(SCENARIOS[scenario]) + ([] if scenario == "appends" else [FLOOR])


def bench_size(
    spark: Any, root: Path, scenario: str, size: int, rounds: int, rows: list[dict]
) -> None:
    contenders = SCENARIOS[scenario]
    for table in [UPSTREAM, *(f"{SCHEMA}.{model}" for model, _, _ in contenders.values())]:
        spark.sql(f"DROP TABLE IF EXISTS {table}")
    spark.sql(
        f"CREATE TABLE {UPSTREAM} (id bigint, ts timestamp, payload string) USING iceberg "
        "TBLPROPERTIES ('write.delete.mode'='merge-on-read', "
        "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')"
    )
    appends = RECENT_SHARE if scenario == "recent_changes" else 1
    for part in range(appends):
        append_rows(spark, part * size // appends, size // appends)
    for model, target, _ in contenders.values():  # the first builds: untimed
        measured_run(spark, root, target, model)
    step = size // 100
    for run in range(rounds):
        start = snapshot(spark)
        if scenario == "appends":
            append_rows(spark, size + run * step, step)
        else:
            change_rows(spark, size, run, step, recent=scenario == "recent_changes")
        names = list(contenders)
        order = names[run % len(names) :] + names[: run % len(names)]
        for label in order:
            model, target, _ = contenders[label]
            load = os.getloadavg()[0]
            seconds, read = measured_run(spark, root, target, model)
            rows.append(raw_row(scenario, size, label, run, seconds, read, load))
        if scenario != "appends":
            load = os.getloadavg()[0]
            seconds, read = floor_seconds(spark, start, snapshot(spark))
            rows.append(raw_row(scenario, size, FLOOR, run, seconds, read, load))
    for label, (model, _, _) in contenders.items():
        stale = None if model in LOGS else check_copy(spark, scenario, label, model)
        for row in rows:
            if (row["scenario"], row["rows"], row["contender"]) == (scenario, size, label):
                row["stale_rows"] = stale


def raw_row(
    scenario: str, size: int, label: str, run: int, seconds: float, read: int, load: float
) -> dict:
    """One measurement's raw row."""
    return {
        "scenario": scenario,
        "rows": size,
        "contender": label,
        "round": run + 1,
        "model_s": round(seconds, 4),
        "rows_read": read,
        "stale_rows": None,
        "load_1m": load,
    }


def describe(rows: list[dict], scenario: str, size: int) -> list[str]:
    measured = [r for r in rows if (r["scenario"], r["rows"]) == (scenario, size)]

    def median(label: str, column: str) -> float:
        return statistics.median(float(r[column]) for r in measured if r["contender"] == label)

    contenders = labels(scenario)
    what = (
        f"1% appended per run ({size // 100:,} rows)"
        if scenario == "appends"
        else "per run 0.5% updated, 0.5% inserted, 0.1% deleted"
        + (" (among the newest 2%)" if scenario == "recent_changes" else "")
    )
    lines = [f"{scenario}: {size:,} rows, {what}:"]
    base_seconds = median(contenders[0], "model_s")
    base_read = max(median(contenders[0], "rows_read"), 1)
    for label in contenders:
        seconds, read = median(label, "model_s"), median(label, "rows_read")
        stale = next(r["stale_rows"] for r in measured if r["contender"] == label)
        lines.append(
            f"  {label:26s} {seconds:6.2f} s ({seconds / base_seconds:.2f}x)  "
            f"rows read {read:12,.0f} ({read / base_read:.1f}x)"
            + (f"  stale rows {stale:,}" if stale is not None else "")
        )
    return lines


def growth(rows: list[dict], scenario: str, small: int, large: int) -> list[str]:
    """Each contender's median time at `large` rows over its median at `small`."""

    def median(size: int, label: str) -> float:
        return statistics.median(
            float(r["model_s"])
            for r in rows
            if (r["scenario"], r["rows"], r["contender"]) == (scenario, size, label)
        )

    return [f"{scenario}: time at {large:,} rows over time at {small:,}:"] + [
        f"  {label:26s} {median(large, label) / median(small, label):.2f}x"
        for label in labels(scenario)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--scenarios", default="appends,row_changes,recent_changes")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_upstream_changes_"))
    catalog = CatalogConfig(name="local", catalog_type="local", warehouse=str(root / "wh"))
    try:
        write_project(root, catalog)
        # PyIceberg creates the embedded catalog's tables; Spark's JDBC catalog does not.
        IcebergCatalog(catalog).ensure_initialized()
        spark = get_or_create_session(catalog, MASTER, {}, JarSources())
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {SCHEMA}")
        rows: list[dict] = []
        sizes = [int(s) for s in args.sizes.split(",")]
        scenarios = args.scenarios.split(",")
        for scenario in scenarios:
            for size in sizes:
                bench_size(spark, root, scenario, size, args.rounds, rows)
        for scenario in scenarios:
            for size in sizes:
                print("\n".join(describe(rows, scenario, size)))
            if len(sizes) > 1:
                print("\n".join(growth(rows, scenario, min(sizes), max(sizes))))
        print(f"raw numbers: {write_csv('upstream_changes', rows)}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
