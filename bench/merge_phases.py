"""Benchmark: where a warm 1% merge's time goes, phase by phase, this adapter beside
dbt-spark's merge on the same catalog (format_versions.py's `v2 merge-on-read` and
`dbt-spark merge` contenders, 1M rows by default).

Each warm `dbt run -s <model>` (one process, one SparkSession, order rotated, every
contender rolled back to its initial snapshot first) is split into:
- each Spark statement, by its kind (`CACHE TABLE` of the model's rows, the `SELECT`s that
  count keys or look at the table, `MERGE`, `DROP VIEW`, other DDL), and the fetch of a
  query's rows (where a `SELECT`'s jobs run);
- PyIceberg's catalog calls (`load_table`, `commit_table`, `table_exists`, ...: schema
  checks, properties, relation listings);
- the rest: dbt's own time around the model (compile, materialization, adapter Python).
Medians per phase; the 1-minute load average with each run. Raw numbers go to
`bench/results/merge_phases.csv`.

    .venv/bin/python bench/merge_phases.py [--sizes 1000000] [--warm-runs 7]
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from format_versions import CONTENDERS, changes_sql, create_table
from incremental_scale import CATALOG, MASTER, SCHEMA, rollback, rounds_parser, warm_model_time
from incremental_scale import write_project as write_incremental_project
from machine import write_csv

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.jars import JarSources
from dbt.adapters.s3tables.engines.spark_session import get_or_create_session

COMPARED = ["v2 merge-on-read", "dbt-spark merge"]
# The project's `on-run-start` statement: outside the model's time, not a phase of it.
HOOK = "on-run-start hook"


def statement_kind(sql: str) -> str:
    # dbt puts its query comment (`/* {...} */`) first; dbt-spark's merge a `--` line.
    text = re.sub(r"^\s*/\*.*?\*/", "", sql, flags=re.DOTALL)
    text = re.sub(r"^(\s*--[^\n]*\n)+", "", text).strip()
    if text.lower() == "select 1":
        return HOOK
    words = text.lstrip("( \n").split(None, 2)
    first = words[0].upper() if words else ""
    if first in {"CACHE", "CREATE", "MERGE", "SELECT", "WITH", "DROP", "INSERT"}:
        return "statement " + ("SELECT" if first == "WITH" else first)
    return "statement other"


# PyIceberg's catalog calls, each a round trip to the catalog (a SQL database here, a REST
# service on AWS).
CATALOG_CALLS = (
    "load_table",
    "commit_table",
    "table_exists",
    "list_tables",
    "list_views",
    "list_namespaces",
    "load_namespace_properties",
    "create_table",
    "drop_table",
    "purge_table",
    "rename_table",
)


@contextmanager
def phase_timer(by_materialization: bool = False) -> Iterator[dict[str, float]]:
    """Seconds spent per phase while the block runs, inside the model's own execution
    (dbt's `ModelRunner.execute`: not the run's relation cache or hooks), see the module
    docstring. `by_materialization`: each phase named after the node's materialization
    too (`table: statement CREATE`)."""
    from dbt.adapters.spark.session import SessionConnectionWrapper
    from dbt.task.run import ModelRunner
    from pyiceberg.catalog.sql import SqlCatalog

    from dbt.adapters.s3tables.engines.session import SessionEngine

    spent: dict[str, float] = defaultdict(float)
    patched: list[tuple[Any, str, Any]] = []
    model = threading.local()

    def wrap(owner: Any, name: str, phase: Callable[[tuple[Any, ...]], str]) -> None:
        original = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            # Only the outermost timed call counts (a catalog call may make another).
            if getattr(model, "timing", False) or not getattr(model, "inside", False):
                return original(*args, **kwargs)
            model.timing = True
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                model.timing = False
                prefix = f"{model.materialized}: " if by_materialization else ""
                spent[prefix + phase(args)] += time.perf_counter() - started

        patched.append((owner, name, original))
        setattr(owner, name, timed)

    def inside_model(original: Callable[..., Any]) -> Callable[..., Any]:
        def execute(runner: Any, *args: Any, **kwargs: Any) -> Any:
            model.inside = True
            model.materialized = runner.node.config.materialized
            try:
                return original(runner, *args, **kwargs)
            finally:
                model.inside = False

        return execute

    patched.append((ModelRunner, "execute", ModelRunner.execute))
    ModelRunner.execute = inside_model(ModelRunner.execute)  # type: ignore[method-assign]

    wrap(SessionEngine, "execute", lambda args: statement_kind(str(args[1])))
    wrap(SessionConnectionWrapper, "execute", lambda args: statement_kind(str(args[1])))
    wrap(SessionEngine, "fetchall", lambda args: "fetch rows (the SELECTs' jobs)")
    wrap(SessionConnectionWrapper, "fetchall", lambda args: "fetch rows (the SELECTs' jobs)")
    for call in CATALOG_CALLS:
        if hasattr(SqlCatalog, call):
            wrap(SqlCatalog, call, lambda args, call=call: f"PyIceberg {call}")
    try:
        yield spent
    finally:
        for owner, name, original in patched:
            setattr(owner, name, original)


def phase_medians(rows: list[dict], rounds: int) -> dict[str, float]:
    """Each phase's median seconds over `rounds` runs (`rows`: one per run and phase); a
    phase missing from a run took no time in it."""
    medians = {}
    for phase in {r["phase"] for r in rows}:
        values = [r["seconds"] for r in rows if r["phase"] == phase]
        medians[phase] = statistics.median(values + [0.0] * (rounds - len(values)))
    return medians


def main() -> None:
    args = rounds_parser(__doc__, "1000000").parse_args()
    rounds = args.warm_runs
    root = Path(tempfile.mkdtemp(prefix="bench_merge_phases_"))
    catalog = CatalogConfig(name=CATALOG, catalog_type="local", warehouse=str(root / "wh"))
    write_incremental_project(
        root, catalog, [(CONTENDERS[label][0], CONTENDERS[label][2]) for label in COMPARED]
    )
    IcebergCatalog(catalog).ensure_initialized()
    spark = get_or_create_session(catalog, MASTER, {}, JarSources())
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {SCHEMA}")
    rows: list[dict] = []
    for size in [int(s) for s in args.sizes.split(",")]:
        spark.sql(
            f"CREATE OR REPLACE TABLE {SCHEMA}.changes USING iceberg AS {changes_sql(size, 0)}"
        )
        initial = {
            label: create_table(spark, CONTENDERS[label][0], CONTENDERS[label][3], size)
            for label in COMPARED
        }
        for label in COMPARED:  # untimed: dbt's first parse and Spark's first plans
            model, target, _, _ = CONTENDERS[label]
            rollback(spark, model, initial[label])
            warm_model_time(root, target, model)
        for run in range(rounds):
            for label in COMPARED[run % 2 :] + COMPARED[: run % 2]:
                model, target, _, _ = CONTENDERS[label]
                rollback(spark, model, initial[label])
                load = os.getloadavg()[0]
                with phase_timer() as spent:
                    seconds = warm_model_time(root, target, model)
                phases = {phase: spent[phase] for phase in spent if phase != HOOK}
                phases["the rest (dbt, adapter Python)"] = seconds - sum(phases.values())
                for phase, phase_seconds in phases.items():
                    rows.append(
                        {
                            "rows": size,
                            "contender": label,
                            "round": run + 1,
                            "phase": phase,
                            "seconds": round(phase_seconds, 4),
                            "model_s": round(seconds, 4),
                            "load_1m": load,
                        }
                    )
        print(f"warm 1% merge into {size:,} rows, medians of {rounds} runs:")
        totals = {}
        for label in COMPARED:
            mine = [r for r in rows if (r["rows"], r["contender"]) == (size, label)]
            totals[label] = statistics.median({r["round"]: r["model_s"] for r in mine}.values())
        for label in COMPARED:
            mine = [r for r in rows if (r["rows"], r["contender"]) == (size, label)]
            ratio = totals[label] / totals[COMPARED[-1]]
            print(f"  {label}: {totals[label]:.3f} s ({ratio:.2f}x dbt-spark)")
            for phase, seconds in sorted(phase_medians(mine, rounds).items()):
                print(f"    {phase:34s} {seconds:.3f} s")
        loads = [r["load_1m"] for r in rows if r["rows"] == size]
        print(f"  1-minute load average: {min(loads):.1f}-{max(loads):.1f}")
    print(f"raw numbers: {write_csv('merge_phases', rows)}")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
