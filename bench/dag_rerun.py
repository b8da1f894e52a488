"""Benchmark: rerunning a 60-model DAG (20 tables, 20 incremental merges, 20 views; each
table feeds a merge that feeds a view), `threads: 4`, this adapter against dbt-spark
(`method: session`, `file_format: iceberg`) on the same catalog and SparkSession.

Each contender has its own project and schema: this adapter, the same with
`skip_when_unchanged` on the tables and merges, and dbt-spark. After a first build and
one untimed rerun (dbt's partial parse, Spark's plans), each round reruns each (order
rotated): the tables are replaced, each merge merges the same 2% of its table's rows
(`id % 47 = 0`), the views are replaced. With `--source-changes`, a commit to the
source before each rerun changes every table's input, so `skip_when_unchanged` rebuilds
everything: its check's cost.
Beside them, `floor: the statements alone` runs dbt-spark's 60 statements (`CREATE OR
REPLACE TABLE ... AS SELECT`, `MERGE INTO` from a temporary view, `CREATE OR REPLACE
VIEW`) through `spark.sql` on four Python threads, a chain per task, no dbt: what any
adapter that rebuilds every node pays at least.
Per rerun: its wall time (`dbtRunner` in this process), and the sum over the 60 nodes of
where their time went: Spark statements by kind and the fetch of their rows, PyIceberg's
catalog calls (round trips to the catalog), and the rest (dbt's own time per node, the
adapter's Python). Medians; the 1-minute load average with each round. Raw numbers go to
`bench/results/dag_rerun.csv`.

    .venv/bin/python bench/dag_rerun.py [--rows 20000] [--rounds 5] [--source-changes]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from dbt.cli.main import dbtRunner
from incremental_scale import CATALOG, MASTER
from machine import write_csv
from merge_phases import HOOK, phase_medians, phase_timer
from profiles import project_arguments, write_profiles

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.jars import JarSources
from dbt.adapters.s3tables.engines.spark_session import get_or_create_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CHAINS = 20
SOURCE = "bench_dag_source.events"
# contender: (schema, dbt target, model configs added for that adapter)
CONTENDERS = {
    "s3tables": ("bench_dag", "s3tables", ""),
    "s3tables, skip_when_unchanged": ("bench_dag_skip", "s3tables", "skip_when_unchanged=true, "),
    "dbt-spark": ("bench_dag_spark", "spark", "file_format='iceberg', "),
}
FLOOR = "floor: the statements alone"
FLOOR_SCHEMA = "bench_dag_floor"
RERUN = "the rerun's wall time"
NODES = "sum of the nodes' times"


def write_project(root: Path, catalog: CatalogConfig, schema: str, extra: str) -> None:
    """The DAG's project in `root`, on the `bench` profile's targets (in process)."""
    (root / "dbt_project.yml").write_text(
        "name: bench_dag\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n"
        # Spark starts before the models: their times exclude the JVM start.
        "on-run-start: ['select 1']\n"
    )
    write_profiles(root, catalog, MASTER, schema, threads=4)
    write_models(root, extra)


def write_models(root: Path, extra: str) -> None:
    """The DAG's models in `root`/models: chains t_i (table) -> m_i (merge) -> v_i (view),
    `extra` added to each table's and merge's config."""
    models = root / "models"
    models.mkdir(parents=True)
    for i in range(1, CHAINS + 1):
        (models / f"t_{i:02d}.sql").write_text(
            f"{{{{ config(materialized='table', {extra}) }}}}\n"
            f"select id, concat('name ', id) as name, id * {i}.5 as amount "
            f"from {SOURCE} where id % {CHAINS} = {i - 1}\n"
        )
        (models / f"m_{i:02d}.sql").write_text(
            f"{{{{ config(materialized='incremental', incremental_strategy='merge', "
            f"{extra}unique_key='id') }}}}\n"
            f"select id, name, amount from {{{{ ref('t_{i:02d}') }}}}\n"
            "{% if is_incremental() %} where id % 47 = 0 {% endif %}\n"
        )
        (models / f"v_{i:02d}.sql").write_text(
            "{{ config(materialized='view') }}\n"
            f"select id, name, amount * 2 as doubled from {{{{ ref('m_{i:02d}') }}}}\n"
        )


def chain_statements(i: int) -> list[str]:
    """dbt-spark's statements for chain i (table, merge, view), as its rerun runs them."""
    table, merge, view = (f"{FLOOR_SCHEMA}.{kind}_{i:02d}" for kind in ("t", "m", "v"))
    source = f"dbt_floor_source_{i:02d}"
    return [
        f"CREATE OR REPLACE TABLE {table} USING iceberg AS SELECT id, concat('name ', id) AS "
        f"name, id * {i}.5 AS amount FROM {SOURCE} WHERE id % {CHAINS} = {i - 1}",
        f"CREATE OR REPLACE TEMPORARY VIEW {source} AS SELECT id, name, amount FROM {table} "
        "WHERE id % 47 = 0",
        f"MERGE INTO {merge} AS DBT_INTERNAL_DEST USING {source} AS DBT_INTERNAL_SOURCE "
        "ON DBT_INTERNAL_SOURCE.id = DBT_INTERNAL_DEST.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
        f"CREATE OR REPLACE VIEW {view} AS SELECT id, name, amount * 2 AS doubled FROM {merge}",
    ]


def floor_rerun(spark: SparkSession) -> float:
    """The 60 statements through `spark.sql`, a chain per task on four threads: wall time."""

    def run_chain(i: int) -> None:
        for statement in chain_statements(i):
            spark.sql(statement)

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(run_chain, range(1, CHAINS + 1)))
    return time.perf_counter() - started


def rerun(root: Path, target: str) -> tuple[float, float]:
    """`dbt run` of the whole DAG in this process: its wall time and the sum of the nodes'
    execution times."""
    started = time.perf_counter()
    result = dbtRunner().invoke(["run", "--quiet", *project_arguments(root, target)])
    wall = time.perf_counter() - started
    if not result.success:
        raise RuntimeError(f"dbt run on {target} failed: {result.exception}")
    return wall, sum(r.execution_time for r in result.result.results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--source-changes",
        action="store_true",
        help="a commit to the source before each rerun: every table's input changes, so "
        "skip_when_unchanged rebuilds everything (its check's cost)",
    )
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench_dag_"))
    catalog = CatalogConfig(name=CATALOG, catalog_type="local", warehouse=str(base / "wh"))
    IcebergCatalog(catalog).ensure_initialized()
    spark = get_or_create_session(catalog, MASTER, {}, JarSources())
    spark.sql("CREATE NAMESPACE IF NOT EXISTS bench_dag_source")
    spark.sql(
        f"CREATE OR REPLACE TABLE {SOURCE} USING iceberg AS SELECT id FROM range({args.rows})"
    )
    roots = {}
    for label, (schema, target, extra) in CONTENDERS.items():
        roots[label] = base / label
        write_project(roots[label], catalog, schema, extra)
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {schema}")
        for _ in range(2):  # the first build, then a rerun: untimed
            rerun(roots[label], target)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {FLOOR_SCHEMA}")
    for i in range(1, CHAINS + 1):  # the merges' tables, then a rerun: untimed
        spark.sql(
            f"CREATE OR REPLACE TABLE {FLOOR_SCHEMA}.m_{i:02d} USING iceberg AS "
            f"SELECT id, concat('name ', id) AS name, id * {i}.5 AS amount FROM {SOURCE} "
            f"WHERE id % {CHAINS} = {i - 1}"
        )
    floor_rerun(spark)
    rows: list[dict] = []
    labels = [*CONTENDERS, FLOOR]
    for round_number in range(args.rounds):
        shift = round_number % len(labels)
        for label in labels[shift:] + labels[:shift]:
            if args.source_changes:
                spark.sql(f"INSERT INTO {SOURCE} VALUES ({args.rows + round_number})")
            load = os.getloadavg()[0]
            if label == FLOOR:
                rows.append(
                    {
                        "rows": args.rows,
                        "contender": label,
                        "round": round_number + 1,
                        "phase": RERUN,
                        "seconds": round(floor_rerun(spark), 4),
                        "load_1m": load,
                    }
                )
                continue
            with phase_timer(by_materialization=True) as spent:
                wall, nodes = rerun(roots[label], CONTENDERS[label][1])
            phases = {phase: spent[phase] for phase in spent if phase != HOOK}
            phases["all: the rest (dbt, adapter Python)"] = nodes - sum(phases.values())
            phases[RERUN], phases[NODES] = wall, nodes
            for phase, seconds in phases.items():
                rows.append(
                    {
                        "rows": args.rows,
                        "contender": label,
                        "round": round_number + 1,
                        "phase": phase,
                        "seconds": round(seconds, 4),
                        "load_1m": load,
                    }
                )
    medians = {
        label: phase_medians([r for r in rows if r["contender"] == label], args.rounds)
        for label in labels
    }
    peer = medians["dbt-spark"][RERUN]
    changes = "a commit to the source before each" if args.source_changes else "no change"
    print(
        f"rerun of a {3 * CHAINS}-model DAG ({CHAINS} tables, merges, views; threads 4; "
        f"{args.rows:,} source rows; {changes}), medians of {args.rounds} rounds:"
    )
    for label in labels:
        wall = medians[label][RERUN]
        print(f"  {label}: {wall:.2f} s ({wall / peer:.2f}x dbt-spark)")
        for phase in sorted(medians[label]):
            if phase != RERUN:
                print(f"    {phase:40s} {medians[label][phase]:7.2f} s")
    loads = [r["load_1m"] for r in rows if r["phase"] == RERUN]
    print(f"  1-minute load average: {min(loads):.1f}-{max(loads):.1f}")
    print(f"raw numbers: {write_csv('dag_rerun', rows)}")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
