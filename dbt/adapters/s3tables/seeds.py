"""Seed rows as text for a bulk load (pure functions)."""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Iterable
from typing import Any

import pyarrow as pa


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
