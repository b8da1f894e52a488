"""Whether a merge may trust its source to hold one row per `unique_key`, and so skip the
source dedup (and delete+insert its DISTINCT): a pure function of the model's config and
its declared constraints.

Why only declarations count (config `unique_key_is_unique`, or a `primary_key`/`unique`
constraint), not a `unique` data test: on Iceberg 1.12 (as 1.10), Spark 3.5 and 4.1, a
MERGE whose source holds a key twice fails, committing nothing, only when that key matches
a target row (Iceberg's cardinality check); a key new to the table is inserted twice,
silently. A test runs after that commit: it reports the double insert, it does not
prevent it.

Undeclared, a merge or scd2 model's rows are counted per key instead, reading only the
key columns: a run whose rows repeat a key says how many and what it does with them, and
one whose rows repeat none skips the dedup. Up to `COLLECTED_KEY_ROWS` rows, the keys are
collected in one Spark job and counted here (`collected_keys_sql`, `counted_keys`), where
Spark's grouping runs three stages, each a job of its own (bench/dag_rerun.py's 20 merges
of 20 rows: 2.70 s of fetches against 4.45 s, in one sitting). A
key the collection cannot compare exactly (a floating point NaN, a timestamp read in local
time, a nested type), more rows, and a first build's rows (not cached: a collection of
too many would evaluate the model once more) are counted by Spark (`key_counts_sql`). The
list comes as one JSON text (`to_json`, NULL fields kept), read back exactly (integers and
decimals as written, a string's bytes as their base64 text): equal keys give equal text.
Every engine fetches it faster than the list itself (one value, where Thrift sends an
array as its text anyway, and PySpark and Spark Connect convert each element to a Row):
for 425 keys, 0.17 s against 0.28-0.32 s over Spark Connect; for 20,000 keys of a view in
process, 0.11 s against 0.20 s.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.sql.text import quote

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

CONFIG_KEY = "unique_key_is_unique"
# How Spark 3.5 (Iceberg's rewrite of MERGE) and Spark 4 name a target row matched by
# several source rows.
CARDINALITY_VIOLATION = (
    "MERGE_CARDINALITY_VIOLATION",
    "matched a single row from the target table with multiple rows of the source table",
)
UNIQUE_CONSTRAINTS = ("primary_key", "unique")
# Up to this many rows, a run's keys are collected and counted in dbt's process.
COLLECTED_KEY_ROWS = 20_000
# Key column types collected as Spark groups them: each value, a string's UTF-8 bytes
# (with the default collation; text that is not valid UTF-8 stays apart) and a date's
# day number (any year Spark has, which Python's dates do not all have).
_COLLECTED_AS_IS = ("byte", "short", "integer", "long", "boolean", "decimal")
_COLLECTED_CAST = {"string": "CAST({} AS BINARY)", "date": "unix_date({})"}


@dataclass(frozen=True)
class KeyUniqueness:
    """The decision and why, for the debug log."""

    source_unique: bool
    reason: str


def _declares_unique(constraint: Mapping[str, Any]) -> bool:
    return str(constraint.get("type") or "").lower() in UNIQUE_CONSTRAINTS


def declared_unique_columns(model: Mapping[str, Any]) -> list[frozenset[str]]:
    """The column sets a model node (dbt's `model`, a dict) declares unique, lower-cased:
    each model-level primary_key/unique constraint, and each column carrying one."""
    found = [
        frozenset(str(c).lower() for c in constraint.get("columns") or [])
        for constraint in model.get("constraints") or []
        if _declares_unique(constraint)
    ]
    found += [
        frozenset([str(name).lower()])
        for name, column in (model.get("columns") or {}).items()
        if any(_declares_unique(c) for c in column.get("constraints") or [])
    ]
    return [columns for columns in found if columns]


def key_uniqueness(
    unique_key: Sequence[str], setting: bool | None, declared: Sequence[frozenset[str]]
) -> KeyUniqueness:
    """Skip the dedup when the user says the key is unique (`setting` true), or, unset,
    when a declared-unique column set lies within the key (unique columns make any key
    containing them unique). `setting` false always dedups."""
    if setting is not None:
        said = "true" if setting else "false"
        return KeyUniqueness(setting, f"`{CONFIG_KEY}: {said}`")
    key = {k.lower() for k in unique_key}
    for columns in declared:
        if key and columns <= key:
            return KeyUniqueness(True, f"a unique constraint on {', '.join(sorted(columns))}")
    return KeyUniqueness(False, "no unique constraint on the key")


def uniqueness_setting(model_name: str, value: Any) -> bool | None:
    """`unique_key_is_unique` as true, false or unset (None)."""
    if value is None or isinstance(value, bool):
        return value
    if str(value).lower() in ("true", "false"):
        return str(value).lower() == "true"
    raise ModelConfigError(
        model_name,
        CONFIG_KEY,
        f"unknown value `{value}`",
        "set true (every run's rows hold each key once: no dedup) or false (always dedup)",
    )


def is_cardinality_violation(error: BaseException) -> bool:
    """Whether a MERGE failed because a target row matched several source rows."""
    text = str(error)
    return any(marker in text for marker in CARDINALITY_VIOLATION)


@dataclass(frozen=True)
class KeyCounts:
    """How a run's rows spread over `unique_key` values."""

    rows: int
    # Keys held by more than one row, and how many rows hold them.
    repeated_keys: int
    rows_of_repeated_keys: int
    # The value of the aggregate counted in the same pass (`key_counts_sql`'s `also`).
    also: str | None = None
    # The values of the key span's aggregates (key_span.py), counted in the same pass.
    span: tuple[Any, ...] = ()

    def warning(
        self, model_name: str, strategy: str, watermark_column: str | None, first_build: bool
    ) -> str:
        """The line saying what the run does with the repeated keys: a first build keeps
        every row (as dbt's own materializations do); a merge takes one row per key."""
        found = (
            f"{model_name}: {self.repeated_keys} `unique_key` value(s) appear in more than one "
            f"of the model's rows ({self.rows_of_repeated_keys} rows); "
        )
        if first_build:
            return (
                found + "a first build keeps every row, as dbt's does, and a later "
                f"{strategy} run treats all rows of such a key alike. Fix: make the rows unique "
                "per key (dbt's `unique` test on the key finds them)"
            )
        kept = (
            f"the one with the greatest `{watermark_column}`"
            if watermark_column
            else "an arbitrary one of them"
        )
        fix = "" if watermark_column else ", or set `watermark_column` to choose the row taken"
        return (
            found + f"this {strategy} run takes one row per key: {kept}. Fix: make the rows unique "
            f"per key{fix}"
        )


def key_counts_sql(
    rows_sql: str,
    unique_key: Sequence[str],
    also: tuple[str, str] | None = None,
    span: Sequence[str] = (),
) -> str:
    """One row (rows, repeated keys, rows of repeated keys) over a query's rows, grouped by
    the key as the merge matches it (NULL equal to NULL). Only the key columns are read;
    with `also` (a column, and an aggregate of it such as the greatest watermark value),
    that column too, and the aggregate's value comes fourth: one pass over the rows. The
    `span` aggregates (of key columns, key_span.py) come last."""
    keys = ", ".join(quote(k) for k in unique_key)
    # The key columns themselves for the span (`also`'s column, if it is one, is its own
    # greatest value within a group of the key anyway).
    grouped = [k for k in unique_key if not (also and k.lower() == also[0].lower())] if span else []
    inner = "".join(f"{quote(k)}, " for k in grouped)
    inner_also = f", max({quote(also[0])}) AS {quote(also[0])}" if also else ""
    outer = f", {also[1]}" if also else ""
    outer += "".join(f", {aggregate}" for aggregate in span)
    # The count's own name (dbt_-prefixed): `also`'s column, even one named `n`, keeps
    # its name beside it.
    n = "dbt_rows_of_key"
    return (
        f"SELECT coalesce(sum({n}), 0), count_if({n} > 1), coalesce(sum(if({n} > 1, {n}, 0)), 0)"
        f"{outer} FROM (SELECT {inner}count(*) AS {n}{inner_also} FROM (\n{rows_sql}\n) "
        "AS dbt_key_rows "
        f"GROUP BY {keys}) AS dbt_key_counts"
    )


def collected_key_columns(schema: StructType, unique_key: Sequence[str]) -> list[str] | None:
    """The expressions that collect each key column of rows of `schema` so that values are
    equal in Python exactly when Spark groups them together; None when a column's type
    cannot be (it is counted by Spark)."""
    from pyspark.sql.types import StringType

    by_name = {field.name.lower(): field.dataType for field in schema.fields}
    columns = []
    for key in unique_key:
        data_type = by_name.get(key.lower())
        type_name = None if data_type is None else data_type.typeName()
        if type_name == "string" and data_type != StringType():
            return None  # a collation other than the default (Spark 4) groups otherwise
        if type_name in _COLLECTED_CAST:
            columns.append(_COLLECTED_CAST[type_name].format(quote(key)))
        elif type_name in _COLLECTED_AS_IS:
            columns.append(quote(key))
        else:
            return None
    return columns


def collected_keys_sql(
    rows_sql: str,
    unique_key: Sequence[str],
    key_columns: Sequence[str],
    also: tuple[str, str] | None = None,
    span: Sequence[str] = (),
) -> str:
    """One row holding the list of the key values (`key_columns`, from
    `collected_key_columns`) of a query's first `COLLECTED_KEY_ROWS` + 1 rows (one more
    than that says there are more), as its JSON text (each key an object of its values in
    order, NULLs kept), and, with `also` (a column and an aggregate of it, as in
    `key_counts_sql`), the aggregate over those rows, then the `span` aggregates (of key
    columns): over all of them when the list is whole."""
    read: dict[str, str] = {}  # each column once, as Spark names them: case-insensitively
    for column in [*unique_key, *([also[0]] if also else [])]:
        read.setdefault(column.lower(), quote(column))
    aggregate = f", {also[1]}" if also else ""
    aggregate += "".join(f", {span_aggregate}" for span_aggregate in span)
    # Fields named apart, so that two of the same expression stay two.
    fields = ", ".join(f"'k{i}', {column}" for i, column in enumerate(key_columns))
    collected = f"to_json(collect_list(named_struct({fields})), map('ignoreNullFields', 'false'))"
    return (
        f"SELECT {collected}{aggregate} FROM (SELECT "
        f"{', '.join(read.values())} FROM (\n{rows_sql}\n) AS dbt_key_rows LIMIT "
        f"{COLLECTED_KEY_ROWS + 1}) AS dbt_collected_keys"
    )


def _split_span(row: Sequence[Any], span_values: int) -> tuple[Sequence[Any], tuple[Any, ...]]:
    """A pass's row without its last `span_values` values, and those."""
    end = len(row) - span_values
    return row[:end], tuple(row[end:])


def counted_keys(row: Sequence[Any], span_values: int = 0) -> KeyCounts | None:
    """The counts of the collected key values in a row of `collected_keys_sql` (and its
    aggregate, as `also`; its last `span_values` values, as `span`), grouped as Spark
    groups them (NULL equal to NULL); None when there were more rows than were collected."""
    row, span = _split_span(row, span_values)
    # Exact numbers; each key the tuple of its values in order.
    collected = json.loads(
        row[0],
        parse_float=Decimal,
        object_pairs_hook=lambda pairs: tuple(value for _, value in pairs),
    )
    if len(collected) > COLLECTED_KEY_ROWS:
        return None
    rows_of_key = Counter(collected)
    repeated = [rows for rows in rows_of_key.values() if rows > 1]
    also = row[1] if len(row) > 1 else None
    return KeyCounts(
        len(collected), len(repeated), sum(repeated), None if also is None else str(also), span
    )


def key_counts(row: Sequence[Any], span_values: int = 0) -> KeyCounts:
    """The counts in a row of `key_counts_sql` (its last `span_values` values: `span`)."""
    row, span = _split_span(row, span_values)
    rows, repeated, rows_of_repeated = (int(value or 0) for value in row[:3])
    also = row[3] if len(row) > 3 else None
    return KeyCounts(rows, repeated, rows_of_repeated, None if also is None else str(also), span)
