"""Seed rows as text for a bulk load (pure functions)."""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from dbt.adapters.s3tables.sql_text import sql_string


def seed_value_as_text(value: Any) -> str | None:
    """A CSV cell as the text Spark casts back to its type without loss."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, decimal.Decimal):
        # Plain notation: `1E+2` would cast to double differently than `100`.
        return format(value, "f")
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return str(value)
    return str(value)


def seed_rows_as_text(rows: Iterable[Iterable[Any]]) -> list[tuple[str | None, ...]]:
    return [tuple(seed_value_as_text(value) for value in row) for row in rows]


def seed_text_table(rows: Iterable[Iterable[Any]], width: int) -> pa.Table:
    """The rows as an Arrow table of text columns `c0..cN` (Arrow moves them to the JVM in
    bulk, several times faster than pickled Python rows)."""
    columns: list[list[str | None]] = [[] for _ in range(width)]
    for row in seed_rows_as_text(rows):
        for index, value in enumerate(row):
            columns[index].append(value)
    return pa.table(
        {f"c{i}": pa.array(values, type=pa.string()) for i, values in enumerate(columns)}
    )


def text_rows_view_sql(view_name: str, rows: list[tuple[str | None, ...]], width: int) -> str:
    """One statement creating a temporary view of text columns `c0..cN` holding `rows`,
    for engines reached over SQL only (thrift)."""
    columns = ", ".join(f"c{i}" for i in range(width))
    if not rows:
        nulls = ", ".join(f"CAST(NULL AS STRING) AS c{i}" for i in range(width))
        return f"CREATE OR REPLACE TEMPORARY VIEW {view_name} AS SELECT {nulls} WHERE false"
    values = ",\n".join("(" + ", ".join(sql_string(v) for v in row) + ")" for row in rows)
    return (
        f"CREATE OR REPLACE TEMPORARY VIEW {view_name} AS SELECT * FROM VALUES\n{values}\n"
        f"AS seed_rows({columns})"
    )
