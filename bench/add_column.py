"""Benchmark: add one column to a 5M-row table through `on_schema_change:
append_new_columns`.

Reports the seconds the schema commit takes (PyIceberg `update_schema`, timed around the
adapter's own call), the whole incremental run, and how many data files the change
rewrote: the files the run removed, from the snapshot summaries. It must be 0, since
adding a column is a metadata-only change in Iceberg.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from dbt.cli.main import dbtRunner

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.jars import JarSources
from dbt.adapters.s3tables.engines.spark_session import get_or_create_session

SCHEMA = "bench"
MASTER = "local[2]"
MODEL = """{{ config(materialized='incremental', on_schema_change='append_new_columns') }}
select id, name, amount{% if var('phase', 1) == 2 %}, amount * 2 as doubled{% endif %}
from bench.source
{% if is_incremental() %} where id > (select max(id) from {{ this }}) {% endif %}
"""


def write_project(root: Path, warehouse: Path) -> None:
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        "name: bench_add_column\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n"
    )
    profile = {
        "type": "s3tables",
        "schema": SCHEMA,
        "warehouse": str(warehouse),
        "master": MASTER,
        "threads": 1,
    }
    (root / "profiles.yml").write_text(
        json.dumps({"bench": {"target": "dev", "outputs": {"dev": profile}}})
    )
    (root / "models" / "wide.sql").write_text(MODEL)


def dbt_run(root: Path, phase: int) -> float:
    result = dbtRunner().invoke(
        [
            "run",
            "--vars",
            json.dumps({"phase": phase}),
            "--profiles-dir",
            str(root),
            "--project-dir",
            str(root),
            "--quiet",
        ]
    )
    if not result.success:
        raise RuntimeError(f"dbt run (phase {phase}) failed: {result.exception}")
    return result.result.results[0].execution_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=5_000_000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_add_column_"))
    warehouse = root / "warehouse"
    catalog = CatalogConfig(name="local", catalog_type="local", warehouse=str(warehouse))
    schema_commit_seconds: list[float] = []
    evolve = IcebergCatalog.evolve_schema

    def timed_evolve(self, *call_args, **call_kwargs):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return evolve(self, *call_args, **call_kwargs)
        finally:
            schema_commit_seconds.append(time.perf_counter() - started)

    IcebergCatalog.evolve_schema = timed_evolve  # type: ignore[method-assign]
    try:
        IcebergCatalog(catalog).ensure_initialized()
        write_project(root, warehouse)
        spark = get_or_create_session(catalog, MASTER, {}, JarSources())
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {SCHEMA}")
        spark.sql(
            f"CREATE OR REPLACE TABLE {SCHEMA}.source USING iceberg AS "
            f"SELECT id, CAST(id % 1000 AS STRING) AS name, id * 1.5 AS amount "
            f"FROM range({args.rows})"
        )
        build = dbt_run(root, phase=1)
        table = f"{SCHEMA}.wide"
        before = spark.sql(f"SELECT snapshot_id FROM {table}.snapshots").count()
        files_before = spark.sql(f"SELECT count(*) FROM {table}.files").first()[0]
        # Ten new rows arrive with the new column.
        spark.sql(
            f"INSERT INTO {SCHEMA}.source SELECT id, 'new', id * 1.5 "
            f"FROM range({args.rows}, {args.rows + 10})"
        )
        evolve_run = dbt_run(root, phase=2)
        summaries = spark.sql(
            f"SELECT operation, summary FROM {table}.snapshots ORDER BY committed_at"
        ).collect()[before:]
        rewritten = sum(int(s.summary.get("deleted-data-files", 0)) for s in summaries)
        files_after = spark.sql(f"SELECT count(*) FROM {table}.files").first()[0]
        rows = spark.sql(f"SELECT count(*), count(doubled) FROM {table}").first()
        if len(schema_commit_seconds) != 1:
            raise RuntimeError(f"expected one schema commit, saw {len(schema_commit_seconds)}")
        print(f"{args.rows:,}-row table, master {MASTER}")
        print(f"initial build                 {build:7.2f} s")
        print(f"schema commit (add 1 column)  {schema_commit_seconds[0]:7.3f} s")
        print(f"whole incremental run         {evolve_run:7.2f} s ({len(summaries)} snapshot(s))")
        print(
            f"data files rewritten          {rewritten:7d} "
            f"(files {files_before} -> {files_after}; rows {rows[0]:,}, "
            f"{rows[1]} with the new column)"
        )
        if rewritten:
            raise RuntimeError("adding a column rewrote data files")
    finally:
        IcebergCatalog.evolve_schema = evolve  # type: ignore[method-assign]
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
