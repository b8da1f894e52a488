"""Benchmark: metadata cost at project scale. `dbt run` of 30 models into a schema that
already holds 200 tables, under this adapter and under dbt-spark (`method: session`, the
same catalog settings), in one process with a warm SparkSession.

Reports the SQL statements each adapter issues before the first model starts (dbt's
`SQLQuery` events) and the time from the invocation to the first model's start (its
`NodeStart` event), median of several runs. Raw numbers go to `bench/results/first_model.csv`.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from dbt.cli.main import dbtRunner
from machine import write_csv
from profiles import write_profiles

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.jars import JarSources
from dbt.adapters.s3tables.engines.spark_session import get_or_create_session

SCHEMA = "crowded"
MASTER = "local[2]"


def write_project(root: Path, catalog: CatalogConfig, models: int) -> None:
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        "name: first_model\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n"
    )
    write_profiles(root, catalog, MASTER, SCHEMA, threads=4)
    for i in range(models):
        (root / "models" / f"model_{i}.sql").write_text(
            f"{{{{ config(materialized='table', file_format='iceberg') }}}}\nselect {i} as id"
        )


def time_to_first_model(root: Path, target: str) -> tuple[float, int]:
    queries = 0
    first_start: float | None = None

    def on_event(event) -> None:  # type: ignore[no-untyped-def]
        nonlocal queries, first_start
        name = event.info.name
        if first_start is None and name == "SQLQuery":
            queries += 1
        elif first_start is None and name == "NodeStart":
            first_start = time.perf_counter()

    started = time.perf_counter()
    result = dbtRunner(callbacks=[on_event]).invoke(
        ["run", "--target", target, "--profiles-dir", str(root), "--project-dir", str(root)]
    )
    if not result.success or first_start is None:
        raise RuntimeError(f"dbt run on {target} failed: {result.exception}")
    return first_start - started, queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--existing", type=int, default=200)
    parser.add_argument("--models", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_first_model_"))
    warehouse = root / "warehouse"
    catalog = CatalogConfig(name="local", catalog_type="local", warehouse=str(warehouse))
    try:
        IcebergCatalog(catalog).ensure_initialized()
        write_project(root, catalog, args.models)
        spark = get_or_create_session(catalog, MASTER, {}, JarSources())
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {SCHEMA}")
        for i in range(args.existing):
            spark.sql(f"CREATE TABLE IF NOT EXISTS {SCHEMA}.existing_{i} (id INT) USING iceberg")
        results: dict[str, list[tuple[float, int]]] = {"s3tables": [], "spark": []}
        for run in range(args.runs):
            order = ["s3tables", "spark"] if run % 2 == 0 else ["spark", "s3tables"]
            for target in order:
                results[target].append(time_to_first_model(root, target))
        print(
            f"{args.models} models into a schema holding {args.existing} tables, "
            f"median of {args.runs} runs, master {MASTER}"
        )
        medians = {}
        for target, label in (("s3tables", "dbt-s3tables"), ("spark", "dbt-spark")):
            seconds = statistics.median(t for t, _ in results[target])
            statements = statistics.median(q for _, q in results[target])
            medians[target] = seconds
            print(f"{label:13s} time to first model {seconds:6.2f} s, {statements:.0f} statements")
        print(f"dbt-spark / dbt-s3tables: {medians['spark'] / medians['s3tables']:.1f}x")
        path = write_csv(
            "first_model",
            [
                {
                    "adapter": target,
                    "run": run + 1,
                    "existing_tables": args.existing,
                    "models": args.models,
                    "seconds_to_first_model": round(seconds, 3),
                    "statements_before_first_model": statements,
                }
                for target, runs in results.items()
                for run, (seconds, statements) in enumerate(runs)
            ],
        )
        print(f"raw numbers: {path}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
