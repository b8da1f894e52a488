"""What each kind of dbt node sends to a Spark Thrift Server, this adapter (`method:
thrift`) beside dbt-spark (`method: thrift`, `file_format: iceberg`) on the same server:
every statement, counted per node and kind of statement (DESCRIBE, SHOW, SET, CACHE,
properties, the write itself, other). Over thrift each statement is a round trip (about
0.18 s to an EMR primary node), so these counts are what a server engine pays per node on
top of its writes.

The project: a seed, a `table` model, an incremental merge model (its first build, then
an incremental run of new rows), an incremental merge run with no rows, and a snapshot.
Both adapters run it twice (a first build, then a rerun) in this process, PyHive's cursor
wrapped to record what it sends; the statements of each node are told by dbt's query
comment (`node_id`).

With `--dag`, the 60-model DAG of `server_dag_rerun.py` instead (20 tables, 20 merges,
20 views, threads 4), built, rerun untimed, then rerun counted: every statement of each
node's connection (its opening `USE`, its analyses and passes, which carry no query
comment), per node kind and kind of statement, per node on average.

    .venv/bin/python bench/statements_per_node.py [--statements] [--dag]
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dag_rerun import SOURCE, write_models
from engines import engine
from server_dag_rerun import server_sql
from server_dag_rerun import write_project as write_server_project
from statements_per_run import recorded_statements, statements_sent

SEED = "id,name\n1,a\n2,b\n3,c\n"
MODELS = {
    "a_table.sql": "{{ config(materialized='table') }} select * from {{ ref('people') }}",
    "a_merge.sql": (
        "{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge') }}\n"
        "select id, name from {{ ref('people') }}\n"
        "{% if is_incremental() %} where id > (select max(id) - 1 from {{ this }}) {% endif %}\n"
    ),
    "a_quiet_merge.sql": (
        "{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge') }}\n"
        "select id, name from {{ ref('people') }}\n"
        "{% if is_incremental() %} where false {% endif %}\n"
    ),
}
SNAPSHOT = (
    "{% snapshot people_history %}"
    "{{ config(unique_key='id', strategy='check', check_cols='all') }}"
    "select * from {{ ref('people') }}{% endsnapshot %}"
)
KINDS = [
    ("describe", r"^(DESCRIBE|DESC)\b"),
    ("show", r"^SHOW\b"),
    ("set", r"^(SET|RESET)\b"),
    ("cache", r"^(CACHE|UNCACHE)\b"),
    ("properties", r"^ALTER TABLE .* (SET|UNSET) TBLPROPERTIES"),
    ("write", r"^(MERGE|INSERT|CREATE (OR REPLACE )?TABLE|REPLACE TABLE)\b"),
    ("view", r"^(CREATE (OR REPLACE )?(TEMPORARY )?VIEW|DROP VIEW)\b"),
]
NODE = re.compile(r'"node_id": "([^"]+)"')
# The DAG's kinds of statement: the node kinds' own, a connection's opening `USE`, queries
# (a merge's pass over its rows).
DAG_KINDS = [("use", r"^USE\b"), ("query", r"^(SELECT|WITH)\b"), *KINDS]
DAG_NODE_KINDS = {"t": "table", "m": "incremental merge", "v": "view"}


def kind_of(statement: str, kinds: list[tuple[str, str]] = KINDS) -> str:
    # dbt's query comment (`/* ... */`) and leading `--` lines (dbt-spark's merge has one).
    lines = [line for line in statement.splitlines() if not line.strip().startswith("--")]
    text = re.sub(r"^/\*.*?\*/", "", " ".join(" ".join(lines).split()), flags=re.S)
    text = text.strip().upper()
    return next((kind for kind, pattern in kinds if re.match(pattern, text)), "other")


@contextmanager
def statements_by_connection() -> Iterator[list[tuple[int, str]]]:
    """Every statement PyHive sends while the block runs, with its connection's number (a
    dbt connection is one node's: its statements without a query comment are the node's
    too)."""
    sent: list[tuple[int, str]] = []
    numbers = itertools.count()

    def record(connection: Any, statement: str) -> None:
        # A number of its own per connection (an `id()` is reused once one is collected).
        if not hasattr(connection, "bench_number"):
            connection.bench_number = next(numbers)
        sent.append((connection.bench_number, statement))

    with statements_sent(record):
        yield sent


def dag_counts(root: Path, state: dict[str, Any], warehouse: Path) -> None:
    """Statements per DAG node over thrift, by node kind and kind of statement, both
    adapters: the averages per node of one rerun."""
    from dbt.cli.main import dbtRunner

    server_sql(
        state,
        "CREATE NAMESPACE IF NOT EXISTS bench_dag_source",
        f"CREATE OR REPLACE TABLE {SOURCE} USING iceberg AS SELECT id FROM range(20000)",
    )
    columns = ["total", *(kind for kind, _ in DAG_KINDS), "other"]
    print(f"{'adapter':9} {'node kind':18} " + " ".join(f"{c:>10}" for c in columns))
    for adapter, extra in (("s3tables", ""), ("spark", "file_format='iceberg', ")):
        project = root / f"dag_{adapter}"
        project.mkdir()
        schema = f"bench_nodes_dag_{adapter}"
        write_server_project(project, state, adapter, schema, warehouse, "thrift")
        write_models(project, extra)
        server_sql(state, f"CREATE NAMESPACE IF NOT EXISTS {schema}")
        arguments = ["run", "--quiet", "--project-dir", str(project)]
        arguments += ["--profiles-dir", str(project), "--log-path", str(root / "logs")]
        for _ in range(2):  # the first build, an untimed rerun
            if not dbtRunner().invoke(arguments).success:
                raise SystemExit(f"{adapter}: dbt run of the DAG failed")
        with statements_by_connection() as sent:
            if not dbtRunner().invoke(arguments).success:
                raise SystemExit(f"{adapter}: dbt run of the DAG failed")
        nodes: dict[int, str] = {}
        for connection, statement in sent:
            found = NODE.search(statement)
            if found:
                nodes.setdefault(connection, found.group(1).split(".")[-1])
        per_kind: dict[str, Counter[str]] = defaultdict(Counter)
        node_names: dict[str, set[str]] = defaultdict(set)
        for connection, statement in sent:
            node = nodes.get(connection, "")
            kind = DAG_NODE_KINDS.get(node[:1], "(no node)") if node[1:2] == "_" else "(no node)"
            node_names[kind].add(node)
            per_kind[kind][kind_of(statement, DAG_KINDS)] += 1
            per_kind[kind]["total"] += 1
        for kind, counts in sorted(per_kind.items()):
            each = max(1, len(node_names[kind]))
            cells = " ".join(f"{counts.get(c, 0) / each:>10.2f}" for c in columns)
            print(f"{adapter:9} {kind:18} {cells}")


def write_project(root: Path, adapter: str, state: dict[str, Any], warehouse: Path) -> Path:
    project = root / adapter
    (project / "models").mkdir(parents=True)
    (project / "seeds").mkdir()
    (project / "snapshots").mkdir()
    (project / "seeds" / "people.csv").write_text(SEED)
    (project / "snapshots" / "people_history.sql").write_text(SNAPSHOT)
    for name, sql in MODELS.items():
        (project / "models" / name).write_text(sql)
    settings = (
        {"models": {"+file_format": "iceberg"}, "snapshots": {"+file_format": "iceberg"}}
        if adapter == "spark"
        else {}
    )
    (project / "dbt_project.yml").write_text(
        json.dumps(
            {"name": "nodes", "version": "1.0", "profile": "nodes", "config-version": 2, **settings}
        )
    )
    output: dict[str, Any] = {
        "type": adapter,
        "method": "thrift",
        "host": state["host"],
        "port": state["port"],
        "schema": f"bench_{adapter}",
        "threads": 1,
    }
    if adapter == "s3tables":
        output["warehouse"] = str(warehouse)
    (project / "profiles.yml").write_text(
        json.dumps({"nodes": {"target": "t", "outputs": {"t": output}}})
    )
    return project


def counted(project: Path, logs: Path, show: bool) -> dict[str, Counter[str]]:
    """Statements per node of one `dbt build`, by kind (`total` among them); with `show`,
    each statement printed too."""
    from dbt.cli.main import dbtRunner

    with recorded_statements() as sent:
        result = dbtRunner().invoke(
            [
                "build",
                "--project-dir",
                str(project),
                "--profiles-dir",
                str(project),
                "--log-path",
                str(logs),
            ]
        )
    if not result.success:
        raise SystemExit(f"{project.name}: dbt build failed: {result.exception}")
    per_node: dict[str, Counter[str]] = defaultdict(Counter)
    for statement in sent:
        found = NODE.search(statement)
        node = found.group(1).split(".")[-1] if found else "(no node)"
        per_node[node][kind_of(statement)] += 1
        per_node[node]["total"] += 1
        if show:
            text = re.sub(r"^/\*.*?\*/", "", " ".join(statement.split()), flags=re.S).strip()
            print(f"  {project.name:8} {node:16} {kind_of(statement):10} {text[:100]}")
    return per_node


def main() -> None:
    show = "--statements" in sys.argv
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        warehouse = root / "warehouse"
        state = engine("start", "thrift", root / "run", "--warehouse", str(warehouse))
        try:
            if "--dag" in sys.argv:
                dag_counts(root, state, warehouse)
                return
            rows = []
            for adapter in ("s3tables", "spark"):
                project = write_project(root, adapter, state, warehouse)
                for build in ("first build", "rerun"):
                    for node, kinds in sorted(counted(project, root / "logs", show).items()):
                        rows.append({"adapter": adapter, "build": build, "node": node, **kinds})
            columns = ["total", *(kind for kind, _ in KINDS), "other"]
            header = " ".join(f"{c:>10}" for c in columns)
            print(f"{'adapter':9} {'build':11} {'node':16} {header}")
            for row in rows:
                counts = " ".join(f"{row.get(c, 0):>10}" for c in columns)
                print(f"{row['adapter']:9} {row['build']:11} {row['node']:16} {counts}")
            print(json.dumps(rows))
        finally:
            engine("stop", "thrift", root / "run")


if __name__ == "__main__":
    main()
