"""Benchmark: what write-audit-publish (`audit_before_publish: true`) adds to a model's
`dbt build`. Target (issue 16): under 10% of the model and its tests.

Two cases, each one model built with the audit off (the peer) and on (the subject), both
with a `not_null` and a `unique` test on the key, by `dbt build --select <model>` (one
thread) in this process, all invocations on one warm SparkSession:
- `table`: a table of `--rows` rows x 5 columns from `range()`, rebuilt every time
  (audit off: CREATE OR REPLACE TABLE AS SELECT; on: INSERT OVERWRITE of the audit branch);
- `merge`: an incremental merge of 1% changed rows (half updates, half inserts) into a
  `--rows`-row table; before every build the table is set back to the same snapshot
  (`set_current_snapshot`, metadata only), so every build merges the same rows.
Both tables exist before the first measured round (steady state, not the first build);
one warm-up round is not counted, then `--rounds` rounds, peer and subject alternating
which goes first. Per build: the model node's execution time, its two tests' (the publish
runs inside the last one), their sum, the three nodes from start to finish (compilation
included), and the invocation's wall time (parsing included), next to the machine's
1-minute load average (the cores may be shared).
Reported: medians, and the added time as a % of the unaudited model + tests (difference
of the medians, and median of each round's difference). After every build, main must have
moved and no branch be left (a failed publish only warns, so the build would still pass).

What the added time is made of: each statement's time from dbt's `SQLQuery` /
`SQLQueryStatus` events (the write, CREATE BRANCH, fast_forward, DROP BRANCH; a query's,
such as a test's, is its analysis only: Spark runs it when its rows are fetched, after
the event), and timers around the audited build's steps (`AuditedBuild.prepare`,
`replace_sql`, `forget_model_state`, `publish`), whose time outside those statements is
catalog reads and commits through PyIceberg and the query's analysis.

Raw numbers go to `bench/results/audit_publish.csv`.

    .venv/bin/python bench/audit_publish.py [--rows N] [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

from dbt.cli.main import dbtRunner
from machine import write_csv

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.jars import JarSources
from dbt.adapters.s3tables.engines.spark_session import get_or_create_session
from dbt.adapters.s3tables.lifecycle.audited_build import AuditedBuild

SCHEMA = "bench"
MASTER = "local[2]"
CASES = ("table", "merge")
AUDIT = {"off": "false", "on": "true"}

# The model's rows: 5 columns of several types.
COLUMNS = (
    "id, id % 1000 AS bucket, concat('name-', CAST(id AS STRING)) AS name, "
    "id * 1.5 AS amount, date_add(DATE'2024-01-01', CAST(id % 365 AS INT)) AS day"
)
TABLE_SQL = """{{{{ config(materialized='table', audit_before_publish={audit}) }}}}
select {columns} from range({rows})
"""
MERGE_SQL = """{{{{ config(materialized='incremental', incremental_strategy='merge',
          unique_key='id', audit_before_publish={audit}) }}}}
{{% if is_incremental() %}}
select * from {schema}.changes
{{% else %}}
select {columns} from range({rows})
{{% endif %}}
"""

# Per build: seconds by statement kind, and by audited-build step.
STATEMENT_KINDS = ("write", "create_branch", "fast_forward", "drop_branch", "test", "other")
STEPS = ("prepare", "replace_sql", "forget_model_state", "publish")
_steps: dict[str, float] = defaultdict(float)
_step_depth = threading.local()


def time_steps() -> None:
    """Wraps the audited build's steps with timers (inclusive; `replace_sql` calls
    `prepare`, whose time is taken out of it when reported)."""

    def timed(step: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(method)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                _steps[step] += time.perf_counter() - started

        return wrapper

    for step in STEPS:
        setattr(AuditedBuild, step, timed(step, getattr(AuditedBuild, step)))


def statement_kind(sql: str, in_test: bool) -> str:
    text = " ".join(re.sub(r"^\s*/\*.*?\*/", "", sql, flags=re.S).split()).upper()
    if "CREATE BRANCH" in text:
        return "create_branch"
    if "DROP BRANCH" in text:
        return "drop_branch"
    if ".FAST_FORWARD(" in text:
        return "fast_forward"
    if in_test:
        return "test"
    if text.startswith(("CREATE OR REPLACE TABLE", "INSERT OVERWRITE", "MERGE INTO")):
        return "write"
    return "other"


def write_project(root: Path, catalog: CatalogConfig, rows: int) -> None:
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        "name: bench_audit\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n"
    )
    profile = {
        "type": "s3tables",
        "warehouse": catalog.warehouse,
        "master": MASTER,
        "schema": SCHEMA,
        "threads": 1,
    }
    (root / "profiles.yml").write_text(
        json.dumps({"bench": {"target": "s3tables", "outputs": {"s3tables": profile}}})
    )
    tested = []
    for audit, flag in AUDIT.items():
        (root / "models" / f"table_{audit}.sql").write_text(
            TABLE_SQL.format(audit=flag, columns=COLUMNS, rows=rows)
        )
        (root / "models" / f"merge_{audit}.sql").write_text(
            MERGE_SQL.format(audit=flag, columns=COLUMNS, rows=rows, schema=SCHEMA)
        )
        tested += [f"table_{audit}", f"merge_{audit}"]
    (root / "models" / "schema.yml").write_text(
        "version: 2\nmodels:\n"
        + "".join(
            f"  - name: {name}\n    columns:\n      - name: id\n"
            "        data_tests: [not_null, unique]\n"
            for name in tested
        )
    )


def build(root: Path, model: str) -> dict[str, float]:
    """One `dbt build --select model`: its timings, by node, statement kind and step."""
    statements: dict[str, float] = defaultdict(float)
    count = 0
    pending: dict[int, str] = {}

    node_started: dict[str, float] = {}
    nodes_wall = 0.0

    def on_event(event: Any) -> None:
        nonlocal count, nodes_wall
        name = event.info.name
        if name == "NodeStart":
            node_started[event.data.node_info.unique_id] = time.perf_counter()
        elif name == "NodeFinished":
            nodes_wall += time.perf_counter() - node_started[event.data.node_info.unique_id]
        elif name == "SQLQuery":
            pending[threading.get_ident()] = event.data.sql
        elif name == "SQLQueryStatus":
            sql = pending.pop(threading.get_ident(), "")
            in_test = event.data.node_info.unique_id.startswith("test.")
            statements[statement_kind(sql, in_test)] += event.data.elapsed
            count += 1

    _steps.clear()
    started = time.perf_counter()
    result = dbtRunner(callbacks=[on_event]).invoke(
        [
            "build",
            "--select",
            model,
            "--profiles-dir",
            str(root),
            "--project-dir",
            str(root),
            "--quiet",
        ]
    )
    wall = time.perf_counter() - started
    if not result.success:
        raise RuntimeError(f"dbt build of {model} failed: {result.exception}")
    nodes = result.result.results
    model_time = next(r.execution_time for r in nodes if r.node.resource_type == "model")
    tests_time = sum(r.execution_time for r in nodes if r.node.resource_type == "test")
    if sum(r.node.resource_type == "test" for r in nodes) != 2:
        raise RuntimeError(f"expected 2 tests of {model}, ran {len(nodes) - 1}")
    timings = {
        "model_s": model_time,
        "tests_s": tests_time,
        "model_and_tests_s": model_time + tests_time,
        # From each node's start to its end, compilation included.
        "nodes_wall_s": nodes_wall,
        "build_wall_s": wall,
        "load_1m": os.getloadavg()[0],
        "statements": count,
        **{f"{kind}_sql_s": statements[kind] for kind in STATEMENT_KINDS},
        **{f"{step}_s": _steps[step] for step in STEPS},
    }
    timings["replace_sql_s"] -= _steps["prepare"] if _steps["replace_sql"] else 0.0
    # The tests' own time (the publish runs inside the last one).
    timings["tests_without_publish_s"] = tests_time - _steps["publish"]
    # The audit's steps outside its branch statements: catalog reads and commits through
    # PyIceberg, the query's analysis.
    timings["audit_outside_branch_sql_s"] = sum(_steps[step] for step in STEPS) - sum(
        statements[kind] for kind in ("create_branch", "fast_forward", "drop_branch")
    )
    return timings


def main_snapshot(spark: Any, table: str) -> int:
    return spark.sql(
        f"SELECT snapshot_id FROM {SCHEMA}.{table}.refs WHERE name = 'main'"
    ).collect()[0][0]


def check_published(spark: Any, table: str, before: int) -> None:
    """The build reached main and left no branch (a failed publish only warns)."""
    refs = [r[0] for r in spark.sql(f"SELECT name FROM {SCHEMA}.{table}.refs").collect()]
    if refs != ["main"] or main_snapshot(spark, table) == before:
        raise RuntimeError(f"{table}: main did not move or a branch is left: {refs}")


def median(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.median(float(r[key]) for r in rows)


def summarize(case: str, rows: list[dict[str, Any]], label: str) -> None:
    off = [r for r in rows if r["case"] == case and r["audit"] == "off"]
    on = [r for r in rows if r["case"] == case and r["audit"] == "on"]
    print(f"\n{label}, median of {len(on)} rounds")
    print(f"  {'':16s} {'audit off':>10s} {'audit on':>10s} {'added':>8s}  on/off")
    for key, name in (
        ("model_s", "model"),
        ("tests_s", "tests (+publish)"),
        ("model_and_tests_s", "model + tests"),
        ("nodes_wall_s", "nodes, compiled"),
        ("build_wall_s", "build wall"),
    ):
        a, b = median(off, key), median(on, key)
        print(f"  {name:16s} {a:9.2f}s {b:9.2f}s {b - a:+7.2f}s  {b / a:5.3f}")
    base = median(off, "model_and_tests_s")
    added = median(on, "model_and_tests_s") - base
    paired = statistics.median(
        b["model_and_tests_s"] - a["model_and_tests_s"]
        for a, b in zip(
            sorted(off, key=lambda r: r["round"]),
            sorted(on, key=lambda r: r["round"]),
            strict=True,
        )
    )
    print(
        f"  added to model + tests: {100 * added / base:+.1f}% of the audit-off case "
        f"(median of per-round differences: {paired:+.2f}s, {100 * paired / base:+.1f}%)"
    )

    write = "CTAS vs INSERT OVERWRITE of the branch" if case == "table" else "MERGE"
    print(
        f"  where (medians, s): write statement {median(off, 'write_sql_s'):.2f} off / "
        f"{median(on, 'write_sql_s'):.2f} on ({write}); tests without the publish "
        f"{median(off, 'tests_without_publish_s'):.2f} / "
        f"{median(on, 'tests_without_publish_s'):.2f}; other statements "
        f"{median(off, 'other_sql_s'):.2f} / {median(on, 'other_sql_s'):.2f}"
    )
    print(
        f"  audit only: CREATE BRANCH {median(on, 'create_branch_sql_s'):.3f}, "
        f"fast_forward {median(on, 'fast_forward_sql_s'):.3f}, "
        f"DROP BRANCH {median(on, 'drop_branch_sql_s'):.3f}, catalog reads/commits and "
        f"analysis around them {median(on, 'audit_outside_branch_sql_s'):.3f}; "
        f"the publish in all {median(on, 'publish_s'):.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    bench_started = time.perf_counter()
    changed = args.rows // 100
    root = Path(tempfile.mkdtemp(prefix="bench_audit_publish_"))
    catalog = CatalogConfig(name="local", catalog_type="local", warehouse=str(root / "warehouse"))
    try:
        IcebergCatalog(catalog).ensure_initialized()
        write_project(root, catalog, args.rows)
        time_steps()
        spark = get_or_create_session(catalog, MASTER, {}, JarSources())
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {SCHEMA}")
        # Half the changed ids exist (updates), half are new (inserts).
        spark.sql(
            f"CREATE OR REPLACE TABLE {SCHEMA}.changes USING iceberg AS "
            f"SELECT id, bucket, concat('changed-', name) AS name, amount, day FROM "
            f"(SELECT {COLUMNS} FROM (SELECT id * 2 + {args.rows - changed} AS id "
            f"FROM range({changed})))"
        )
        # The tables exist before the first measured build.
        for case in CASES:
            for audit in AUDIT:
                build(root, f"{case}_{audit}")
        start_of = {audit: main_snapshot(spark, f"merge_{audit}") for audit in AUDIT}
        print(
            f"{args.rows:,} rows x 5 columns; merge of {changed:,} changed rows (1%); "
            f"one warm-up round + {args.rounds} rounds; dbt build, 1 thread, master {MASTER}",
            flush=True,
        )
        rows: list[dict[str, Any]] = []
        for case in CASES:
            for round_ in range(args.rounds + 1):
                order = list(AUDIT) if round_ % 2 else list(reversed(AUDIT))
                for audit in order:
                    if case == "merge":
                        spark.sql(
                            f"CALL local.system.set_current_snapshot("
                            f"table => '{SCHEMA}.merge_{audit}', "
                            f"snapshot_id => {start_of[audit]})"
                        )
                    before = main_snapshot(spark, f"{case}_{audit}")
                    timings = build(root, f"{case}_{audit}")
                    check_published(spark, f"{case}_{audit}", before)
                    if round_ == 0:
                        continue  # warm-up
                    rows.append(
                        {
                            "case": case,
                            "audit": audit,
                            "round": round_,
                            "rows": args.rows,
                            "changed_rows": changed if case == "merge" else "",
                            **{k: round(v, 4) for k, v in timings.items()},
                        }
                    )
                    print(
                        f"  {case} audit {audit:3s} round {round_}: model "
                        f"{timings['model_s']:.2f}s tests {timings['tests_s']:.2f}s "
                        f"build {timings['build_wall_s']:.2f}s",
                        flush=True,
                    )
        summarize("table", rows, f"table, {args.rows:,} rows x 5 columns, 2 tests")
        summarize(
            "merge",
            rows,
            f"incremental merge, {changed:,} changed rows into {args.rows:,}, 2 tests",
        )
        path = write_csv("audit_publish", rows)
        print(f"\nraw numbers: {path}")
        print(f"bench wall time: {time.perf_counter() - bench_started:.0f} s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
