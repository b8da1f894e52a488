"""Whether a merge may trust its source to hold one row per `unique_key`, and so skip the
source dedup (and delete+insert its DISTINCT): a pure function of the model's config and
its declared constraints.

Why only declarations count (config `unique_key_is_unique`, or a `primary_key`/`unique`
constraint), not a `unique` data test: on Iceberg 1.12 (as 1.10), Spark 3.5 and 4.1, a
MERGE whose source holds a key twice fails, committing nothing, only when that key matches
a target row (Iceberg's cardinality check); a key new to the table is inserted twice,
silently. A test runs after that commit: it reports the double insert, it does not
prevent it.

Undeclared, a merge or scd2 model's rows are counted per key instead (`key_counts_sql`,
reading only the key columns): a run whose rows repeat a key says how many and what it
does with them, and one whose rows repeat none skips the dedup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.sql.text import quote

CONFIG_KEY = "unique_key_is_unique"
# How Spark 3.5 (Iceberg's rewrite of MERGE) and Spark 4 name a target row matched by
# several source rows.
CARDINALITY_VIOLATION = (
    "MERGE_CARDINALITY_VIOLATION",
    "matched a single row from the target table with multiple rows of the source table",
)
UNIQUE_CONSTRAINTS = ("primary_key", "unique")


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
    rows_sql: str, unique_key: Sequence[str], also: tuple[str, str] | None = None
) -> str:
    """One row (rows, repeated keys, rows of repeated keys) over a query's rows, grouped by
    the key as the merge matches it (NULL equal to NULL). Only the key columns are read;
    with `also` (a column, and an aggregate of it such as the greatest watermark value),
    that column too, and the aggregate's value comes fourth: one pass over the rows."""
    keys = ", ".join(quote(k) for k in unique_key)
    inner = f", max({quote(also[0])}) AS {quote(also[0])}" if also else ""
    outer = f", {also[1]}" if also else ""
    # The count's own name (dbt_-prefixed): `also`'s column, even one named `n`, keeps
    # its name beside it.
    n = "dbt_rows_of_key"
    return (
        f"SELECT coalesce(sum({n}), 0), count_if({n} > 1), coalesce(sum(if({n} > 1, {n}, 0)), 0)"
        f"{outer} FROM (SELECT count(*) AS {n}{inner} FROM (\n{rows_sql}\n) AS dbt_key_rows "
        f"GROUP BY {keys}) AS dbt_key_counts"
    )


def key_counts(row: Sequence[Any]) -> KeyCounts:
    rows, repeated, rows_of_repeated = (int(value or 0) for value in row[:3])
    also = row[3] if len(row) > 3 else None
    return KeyCounts(rows, repeated, rows_of_repeated, None if also is None else str(also))
