"""A keyed run's key span: the least and greatest value of each key column of the run's
rows, computed in the pass that already reads them (the key count, or the look for a
row), and written into the statement's ON as a condition on the target's rows.

Implied by the key's equality (a target row matching a source row holds one of its key
values), the condition changes no match. Iceberg prunes with it every data file whose
column bounds lie outside the span, so a merge into a large table whose run touches keys
in a narrow range (recent events, new ids) reads only the files those keys may be in:
Spark's MERGE into Iceberg prunes no target file by the source's keys on its own.

A column takes part when the model's type and the table's are of one kind Spark compares
as it matches (numbers, default-collation strings, dates, timestamps with time zone).
Each bound comes back from Spark as the text of a typed SQL literal (`span_aggregates`),
checked here before it is written into a statement (`span_condition`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dbt_common.exceptions import DbtInternalError

from dbt.adapters.s3tables.sql.text import quote

if TYPE_CHECKING:
    from pyiceberg.schema import Schema
    from pyspark.sql.types import StructType

# The kind of each Spark type (`DataType.typeName()`) and Iceberg type (str of the type,
# up to any parenthesis) whose order Spark compares as it matches values.
_SPARK_KINDS = {
    "byte": "number",
    "short": "number",
    "integer": "number",
    "long": "number",
    "decimal": "number",
    "string": "string",
    "date": "date",
    "timestamp": "timestamp",
}
# The table's side by Iceberg type, not by its Spark name (sql/types.py's
# `spark_type_name`): that names uuid and time `string`, which Iceberg does not bound as text.
_ICEBERG_KINDS = {
    "int": "number",
    "long": "number",
    "decimal": "number",
    "string": "string",
    "date": "date",
    "timestamptz": "timestamp",
}
# The SQL that turns an aggregate of each kind into the text of a literal of its value
# (`{value}`: the aggregate; `{type}`: the model's Spark type). Quotes are `char(39)`:
# nothing in the text depends on how Spark escapes a quote inside a string literal.
_LITERAL_TEXT = {
    "number": "concat('CAST(', char(39), CAST({value} AS STRING), char(39), ' AS {type})')",
    "string": "concat('CAST(X', char(39), hex(CAST({value} AS BINARY)), char(39), ' AS STRING)')",
    "date": "concat('date_from_unix_date(', CAST(unix_date({value}) AS STRING), ')')",
    "timestamp": "concat('timestamp_micros(', CAST(unix_micros({value}) AS STRING), ')')",
}
# What those literals may look like, checked before one is written into a statement.
_LITERAL = re.compile(
    r"CAST\('-?\d+(\.\d+)?(E[+-]?\d+)?' AS (tinyint|smallint|int|bigint|decimal\(\d+,\d+\))\)"
    r"|CAST\(X'[0-9A-F]*' AS STRING\)"
    r"|date_from_unix_date\(-?\d+\)"
    r"|timestamp_micros\(-?\d+\)"
)
# The values each spanned column adds to the pass's row: least, greatest, any NULL.
VALUES_PER_COLUMN = 3


@dataclass(frozen=True)
class SpanColumn:
    """A key column that takes part in the span: its name in the model's rows, its
    spelling in the table, its kind and the model's Spark type."""

    name: str
    target: str
    kind: str
    spark_type: str


def _iceberg_kind(schema: Schema, column: str) -> str | None:
    """The kind of the table's column `column`; None for another type, or no such column
    (one the run adds: its rows before hold NULL, which only a NULL key matches)."""
    try:
        field = schema.find_field(column, case_sensitive=False)
    except ValueError:
        return None
    return _ICEBERG_KINDS.get(str(field.field_type).split("(")[0])


def span_columns(
    source: StructType, table: Schema, unique_key: Sequence[str], target_names: Mapping[str, str]
) -> list[SpanColumn]:
    """The key columns whose span can bound the target's rows: of one kind in the model's
    rows (`source`) and in the table (`table`, `target_names` its spelling of each key)."""
    from pyspark.sql.types import StringType

    by_name = {field.name.lower(): field.dataType for field in source.fields}
    spanned = []
    for key in unique_key:
        data_type = by_name.get(key.lower())
        if data_type is None:
            continue
        kind = _SPARK_KINDS.get(data_type.typeName())
        if kind == "string" and data_type != StringType():
            continue  # a collation other than the default (Spark 4) orders otherwise
        target = target_names.get(key, key)
        if kind is not None and kind == _iceberg_kind(table, target):
            spanned.append(SpanColumn(key, target, kind, data_type.simpleString()))
    return spanned


def span_aggregates(columns: Sequence[SpanColumn]) -> list[str]:
    """For each column, `VALUES_PER_COLUMN` aggregates over rows holding it: the text of
    a literal of its least and greatest value (NULL when every value is NULL), and
    whether any value is NULL."""
    aggregates = []
    for column in columns:
        name, text = quote(column.name), _LITERAL_TEXT[column.kind]
        aggregates += [
            text.format(value=f"min({name})", type=column.spark_type),
            text.format(value=f"max({name})", type=column.spark_type),
            f"coalesce(max({name} IS NULL), false)",
        ]
    return aggregates


def span_pass_sql(rows_sql: str, columns: Sequence[SpanColumn]) -> str:
    """One row over a query's rows: their count, then `span_aggregates` (the pass of a run
    whose keys are not counted)."""
    return f"SELECT count(*), {', '.join(span_aggregates(columns))} FROM ({rows_sql})"


def _literal(model_name: str, text: Any, column: SpanColumn) -> str:
    if not isinstance(text, str) or not _LITERAL.fullmatch(text):
        raise DbtInternalError(
            f"{model_name}: the key span of `{column.name}` came back as {text!r}, not a "
            "literal; nothing was written"
        )
    return text


def span_condition(
    model_name: str, columns: Sequence[SpanColumn], values: Sequence[Any], alias: str
) -> str | None:
    """The condition on the target rows (`alias`) that the run's rows' keys may match,
    from `span_aggregates`' values; None without spanned columns."""
    terms = []
    for index, column in enumerate(columns):
        first = index * VALUES_PER_COLUMN
        least, greatest, any_null = values[first : first + VALUES_PER_COLUMN]
        target = f"{alias}.{quote(column.target)}"
        if least is None:  # every value NULL: only NULL matches NULL
            terms.append(f"{target} IS NULL")
            continue
        low, high = (_literal(model_name, bound, column) for bound in (least, greatest))
        within = f"{target} BETWEEN {low} AND {high}"
        # Through dbt's tables, a boolean may arrive as its text.
        nulls = str(any_null).lower() == "true"
        terms.append(f"({target} IS NULL OR {within})" if nulls else within)
    return " AND ".join(terms) or None
