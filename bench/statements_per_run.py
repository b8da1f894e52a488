"""What one incremental model run sends to a Spark Thrift Server: every statement, and how
many of them are analyses of a query (`DESCRIBE QUERY`), per kind of run.

Over thrift each statement is a round trip, so these counts are what a remote engine pays
per model on top of the writes themselves. The server is a local one on the embedded
catalog (`dbt-s3tables-engine start thrift`); dbt runs in this process with PyHive's cursor
wrapped to record what it sends.

    .venv/bin/python bench/statements_per_run.py
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from engines import engine

MODEL = """
{{ config(materialized='incremental', unique_key='id', on_schema_change=var('mode', 'ignore')) }}
select id, name{% for column in var('extra', []) %}, id * 2 as {{ column }}{% endfor %}
from values (1, 'a'), (2, 'b'), (3, 'c') as t(id, name)
{% if is_incremental() %} where id > 1 {% endif %}
"""

# (label, dbt arguments): each run follows the one before it on the same table.
RUNS = [
    ("first build", []),
    ("incremental merge", []),
    (
        "incremental merge, new column appended",
        ["--vars", "{mode: append_new_columns, extra: [a]}"],
    ),
    (
        "on_schema_change full_refresh, new column",
        ["--vars", "{mode: full_refresh, extra: [a, b]}"],
    ),
]


@contextmanager
def statements_sent(record: Callable[[Any, str], None]) -> Iterator[None]:
    """`record(connection, statement)` of every statement PyHive sends while the block
    runs (the PyHive connection it goes over)."""
    from pyhive import hive

    original = hive.Cursor.execute

    def execute(self: Any, operation: str, *args: Any, **kwargs: Any) -> Any:
        record(self._connection, operation)
        return original(self, operation, *args, **kwargs)

    hive.Cursor.execute = execute  # type: ignore[method-assign]
    try:
        yield
    finally:
        hive.Cursor.execute = original  # type: ignore[method-assign]


@contextmanager
def recorded_statements() -> Iterator[list[str]]:
    """Every statement PyHive sends while the block runs."""
    sent: list[str] = []
    with statements_sent(lambda connection, statement: sent.append(statement)):
        yield sent


def main() -> None:
    from dbt.cli.main import dbtRunner

    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        warehouse = root / "warehouse"
        state = engine("start", "thrift", root / "run", "--warehouse", str(warehouse))
        try:
            project = root / "project"
            (project / "models").mkdir(parents=True)
            (project / "models" / "orders.sql").write_text(MODEL)
            (project / "dbt_project.yml").write_text(
                "name: statements\nversion: '1.0'\nprofile: statements\nconfig-version: 2\n"
            )
            profile = {
                "type": "s3tables",
                "method": "thrift",
                "host": state["host"],
                "port": state["port"],
                "warehouse": str(warehouse),
                "schema": "bench",
                "threads": 1,
            }
            (project / "profiles.yml").write_text(
                json.dumps({"statements": {"target": "t", "outputs": {"t": profile}}})
            )
            rows = []
            for label, arguments in RUNS:
                with recorded_statements() as sent:
                    result = dbtRunner().invoke(
                        [
                            "run",
                            "--project-dir",
                            str(project),
                            "--profiles-dir",
                            str(project),
                            "--log-path",
                            str(root / "logs"),
                            *arguments,
                        ]
                    )
                if not result.success:
                    raise SystemExit(f"{label}: dbt run failed: {result.exception}")
                analyses = sum(s.lstrip().upper().startswith("DESCRIBE QUERY") for s in sent)
                rows.append({"run": label, "statements": len(sent), "analyses": analyses})
                print(f"{label:45} {len(sent):3} statements, {analyses} analyses", flush=True)
                for statement in sent:
                    text = re.sub(r"^/\*.*?\*/", "", " ".join(statement.split())).strip()
                    print("    " + text[:110], flush=True)
            print(json.dumps(rows))
        finally:
            engine("stop", "thrift", root / "run")


if __name__ == "__main__":
    main()
