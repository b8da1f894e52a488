"""Seed rows as text for a bulk load, and the checked casts to the seed's column types
(pure functions).

The rows reach Spark as text columns `c0..cN` plus `dbt_row` (the row's number in the
CSV, 1 for the first data row). Spark's cast turns a value that does not fit its type
into NULL; the load statement instead fails on the first such value, naming the file,
row, column and value, so a seed never reports success with values silently lost.
"""

from __future__ import annotations

import datetime
import decimal
from dataclasses import dataclass
from typing import Any

from dbt.adapters.s3tables.sql.text import failing_when, quote, sql_string

ROW_COLUMN = "dbt_row"
# Casts from text that cannot lose a value.
_TEXT_TYPES = ("string", "varchar", "char")
_SHOWN_CHARACTERS = 100


@dataclass(frozen=True)
class SeedColumn:
    """A CSV column: its header, its name in SQL (quoted as configured) and its type."""

    name: str
    sql_name: str
    data_type: str


def seed_value_as_text(value: Any) -> str | None:
    """A CSV cell, as agate's value, as the text Spark casts back to it without loss."""
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


def text_rows_view_sql(view_name: str, rows: list[tuple[str | None, ...]], width: int) -> str:
    """One statement creating a temporary view of text columns `c0..cN` holding `rows`
    and their row numbers, for engines reached over SQL only (thrift)."""
    columns = ", ".join([*(f"c{i}" for i in range(width)), ROW_COLUMN])
    if not rows:
        nulls = ", ".join(f"CAST(NULL AS STRING) AS c{i}" for i in range(width))
        return (
            f"CREATE OR REPLACE TEMPORARY VIEW {view_name} AS SELECT {nulls}, "
            f"CAST(NULL AS BIGINT) AS {ROW_COLUMN} WHERE false"
        )
    values = ",\n".join(
        "(" + ", ".join([*(sql_string(v) for v in row), str(number)]) + ")"
        for number, row in enumerate(rows, start=1)
    )
    return (
        f"CREATE OR REPLACE TEMPORARY VIEW {view_name} AS SELECT * FROM VALUES\n{values}\n"
        f"AS seed_rows({columns})"
    )


def checked_cast_sql(index: int, column: SeedColumn, seed_path: str) -> str:
    """Column `c<index>` cast to its type; a value the cast would turn into NULL fails the
    statement instead, with a message naming the file, row, column and value."""
    text = f"c{index}"
    cast = f"CAST({text} AS {column.data_type})"
    if column.data_type.strip().lower().startswith(_TEXT_TYPES):
        return f"{cast} AS {column.sql_name}"
    before = f"Seed {seed_path}, row "
    after = (
        f"' of column {column.name} does not fit its type {column.data_type}. Nothing was "
        "loaded. Fix: correct the value in the CSV, or the column's type in column_types"
    )
    value = ": value '"
    message = (
        f"concat({sql_string(before)}, {ROW_COLUMN}, {sql_string(value)}, "
        f"substr({text}, 1, {_SHOWN_CHARACTERS}), {sql_string(after)})"
    )
    guarded = failing_when(f"{text} IS NOT NULL AND {cast} IS NULL", message, cast)
    return f"{guarded} AS {column.sql_name}"


def seed_select_sql(
    view_name: str, columns: list[SeedColumn], seed_path: str, empty: bool = False
) -> str:
    """The query loading a seed from its text view: every column cast, and checked."""
    casts = ",\n  ".join(
        checked_cast_sql(index, column, seed_path) for index, column in enumerate(columns)
    )
    where = " WHERE false" if empty else ""
    return f"SELECT\n  {casts}\nFROM {quote(view_name)}{where}"
