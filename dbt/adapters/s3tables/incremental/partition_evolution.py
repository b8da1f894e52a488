"""Partition evolution: a model's `partition_by` entries as Iceberg partition fields, and
what an existing table's partition spec must drop and add to match them (pure functions;
the incremental run commits the change through PyIceberg before its data statement).

Evolving a spec is metadata only: files already written keep the spec they were written
with, new writes use the new one. The table's current spec, read from its metadata, is
compared with the config, so a spec changed outside dbt is brought back to the config too.
Fields are compared by source column (case-insensitively) and transform, in any order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.sql.partitioning import live_partition_fields, partition_field_text

if TYPE_CHECKING:
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import Transform
    from pyiceberg.types import IcebergType


@cache
def one_column_transforms() -> dict[str, Transform[Any, Any]]:
    """The transform names Iceberg's Spark integration accepts in PARTITIONED BY (what
    CREATE TABLE takes) for a transform of one column."""
    # PyIceberg's transforms load pydantic: imported when a model's partitioning is read,
    # not when dbt loads the plugin.
    from pyiceberg.transforms import (
        DayTransform,
        HourTransform,
        IdentityTransform,
        MonthTransform,
        YearTransform,
    )

    return {
        "identity": IdentityTransform(),
        "year": YearTransform(),
        "years": YearTransform(),
        "month": MonthTransform(),
        "months": MonthTransform(),
        "day": DayTransform(),
        "days": DayTransform(),
        "date": DayTransform(),
        "hour": HourTransform(),
        "hours": HourTransform(),
    }


@cache
def sized_transforms() -> dict[str, Callable[[int], Transform[Any, Any]]]:
    """Those of a bucket count or width and a column, in either order."""
    from pyiceberg.transforms import BucketTransform, TruncateTransform

    return {"bucket": BucketTransform, "truncate": TruncateTransform}


# The Iceberg Spark function computing each transform's value (`<catalog>.system.<name>`).
SPARK_FUNCTIONS = {
    "YearTransform": "years",
    "MonthTransform": "months",
    "DayTransform": "days",
    "HourTransform": "hours",
    "BucketTransform": "bucket",
    "TruncateTransform": "truncate",
}
SUPPORTED = (
    "a column, or identity(c), years(c), months(c), days(c), hours(c), bucket(N, c), truncate(W, c)"
)
_CALL = re.compile(r"^\s*([A-Za-z_]+)\s*\((.*)\)\s*$", re.DOTALL)


@dataclass(frozen=True)
class PartitionTerm:
    """One partition field: its source column and Iceberg transform; `entry` is the
    config text it came from (for messages)."""

    source: str
    transform: Transform[Any, Any]
    entry: str = field(default="", compare=False)

    @property
    def key(self) -> tuple[str, str]:
        """What makes two fields the same field: the column (as Spark resolves names,
        case-insensitively) and the transform."""
        return self.source.lower(), repr(self.transform)

    def describe(self) -> str:
        """`ts`, `day(ts)`, `bucket(4, id)`, `truncate(8, s)`."""
        return partition_field_text(self.transform, self.source)

    def spark_sql(self, column: str, catalog: str) -> str:
        """The Spark SQL expression of this field's value for `column` (an SQL column
        reference), with the Iceberg functions of `catalog` (a quoted catalog name)."""
        from pyiceberg.transforms import BucketTransform, IdentityTransform, TruncateTransform

        transform = self.transform
        if isinstance(transform, IdentityTransform):
            return column
        function = f"{catalog}.system.{SPARK_FUNCTIONS[type(transform).__name__]}"
        if isinstance(transform, BucketTransform):
            return f"{function}({transform.num_buckets}, {column})"
        if isinstance(transform, TruncateTransform):
            return f"{function}({transform.width}, {column})"
        return f"{function}({column})"


def _unquote(name: str) -> str:
    name = name.strip()
    if len(name) >= 2 and name.startswith("`") and name.endswith("`"):
        return name[1:-1].replace("``", "`")
    return name


def _split_commas(text: str) -> list[str]:
    """`text` split at its commas, except those inside parentheses or a backtick-quoted
    name."""
    parts, current, quoted, depth = [], "", False, 0
    for char in text:
        if char == "`":
            quoted = not quoted
        elif not quoted and char in "()":
            depth += 1 if char == "(" else -1
        if char == "," and not quoted and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def parse_partition_term(model_name: str, entry: str) -> PartitionTerm:
    """One `partition_by` entry as a partition field, or an error naming the model, the
    key, the entry and what to write instead."""
    from pyiceberg.transforms import IdentityTransform

    call = _CALL.match(entry)
    if call is None:
        source = _unquote(entry)
        quoted = entry.strip().startswith("`")
        if source and (quoted or not re.search(r"[(),]", source)):
            return PartitionTerm(source, IdentityTransform(), entry)
    else:
        name, arguments = call.group(1).lower(), [a.strip() for a in _split_commas(call.group(2))]
        one_column, sized = one_column_transforms(), sized_transforms()
        if name in one_column and len(arguments) == 1 and arguments[0]:
            return PartitionTerm(_unquote(arguments[0]), one_column[name], entry)
        if name in sized and len(arguments) == 2:
            sizes = [a for a in arguments if a.isdigit()]
            columns = [a for a in arguments if not a.isdigit()]
            if len(sizes) == 1 and len(columns) == 1 and int(sizes[0]) > 0:
                transform = sized[name](int(sizes[0]))
                return PartitionTerm(_unquote(columns[0]), transform, entry)
    raise ModelConfigError(
        model_name,
        "partition_by",
        f"`{entry}` is not a column or an Iceberg partition transform this adapter can "
        "evolve the table's partitioning to",
        f"write each entry as {SUPPORTED}, e.g. `days(ts)` or `bucket(16, id)`",
    )


def parse_partition_by(model_name: str, entries: Sequence[str]) -> tuple[PartitionTerm, ...]:
    """Every entry's partition field; an entry listing several (`'day, bucket(4, id)'`,
    which CREATE TABLE's `PARTITIONED BY (...)` takes as written) gives each of them."""
    from pyiceberg.transforms import TimeTransform

    terms = tuple(
        parse_partition_term(model_name, part.strip())
        for entry in entries
        for part in _split_commas(entry)
    )
    time_terms: dict[str, PartitionTerm] = {}
    for term in terms:
        if not isinstance(term.transform, TimeTransform):
            continue
        other = time_terms.setdefault(term.source.lower(), term)
        if other.key != term.key:
            raise ModelConfigError(
                model_name,
                "partition_by",
                f"`{other.entry}` and `{term.entry}` both partition column `{term.source}` "
                "by time; Iceberg allows one time transform per column",
                "keep one of them",
            )
    return terms


def describe_terms(terms: Sequence[PartitionTerm]) -> str:
    return ", ".join(term.describe() for term in terms) or "unpartitioned"


@dataclass(frozen=True)
class SpecChange:
    """The table's partition fields now and after the change, and the change itself:
    the names of the spec's fields to remove and the fields to add (one commit)."""

    before: tuple[PartitionTerm, ...] = ()
    after: tuple[PartitionTerm, ...] = ()
    removed: tuple[str, ...] = ()
    added: tuple[PartitionTerm, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.removed or self.added)

    def describe(self) -> str:
        """`day(ts) -> month(ts), bucket(4, id)`."""
        return f"{describe_terms(self.before)} -> {describe_terms(self.after)}"


def current_fields(spec: PartitionSpec, schema: Schema) -> list[tuple[str, PartitionTerm]]:
    """The spec's fields as (field name, term), void fields left out."""
    return [
        (name, PartitionTerm(source, transform))
        for name, source, transform in live_partition_fields(spec, schema)
    ]


def spec_change(spec: PartitionSpec, schema: Schema, wanted: Sequence[PartitionTerm]) -> SpecChange:
    """What the table's `spec` must drop and add to partition as `wanted` (its fields in
    any order; a field listed twice counts once)."""
    fields = current_fields(spec, schema)
    current_keys = {term.key for _, term in fields}
    wanted_keys = {term.key for term in wanted}
    added: list[PartitionTerm] = []
    for term in wanted:
        if term.key not in current_keys and term.key not in {t.key for t in added}:
            added.append(term)
    kept = [term for _, term in fields if term.key in wanted_keys]
    return SpecChange(
        before=tuple(term for _, term in fields),
        after=(*kept, *added),
        removed=tuple(name for name, term in fields if term.key not in wanted_keys),
        added=tuple(added),
    )


def check_added_sources(
    model_name: str,
    added: Sequence[PartitionTerm],
    column_type: Callable[[str], IcebergType | None],
) -> None:
    """Each added field's column must be in the table (after this run's schema changes)
    and of a type its transform takes; `column_type` looks a column up by name."""
    for term in added:
        source_type = column_type(term.source)
        if source_type is None:
            raise ModelConfigError(
                model_name,
                "partition_by",
                f"`{term.entry}` partitions by column `{term.source}`, which the table does "
                "not have (on_schema_change adds new columns only in append_new_columns and "
                "sync_all_columns)",
                "set on_schema_change to append_new_columns so the column is added before "
                "the table is partitioned by it, or rebuild with --full-refresh",
            )
        if not term.transform.can_transform(source_type):
            raise ModelConfigError(
                model_name,
                "partition_by",
                f"`{term.entry}` cannot partition column `{term.source}` of type {source_type}",
                "use a transform for that type (years, months, days, hours on dates and "
                "timestamps; truncate on strings, numbers and binary; bucket on most "
                "types), or the column itself",
            )
