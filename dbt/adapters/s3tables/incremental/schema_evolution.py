"""Schema evolution: what a model's new output asks of its table under `on_schema_change`
(pure functions; the incremental run commits the result through PyIceberg).

The adapter never drops a column on its own: a column the model no longer returns stays
in the table and receives NULL in new rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyspark.sql import types as spark

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.sql.types import iceberg_type, is_widening, same_type, spark_type_name

if TYPE_CHECKING:
    from pyiceberg.schema import Schema
    from pyiceberg.types import IcebergType, NestedField

    from dbt.adapters.s3tables.incremental.strategy_traits import Strategy

# Modes that replace the table when the model adds a column or changes a type.
REPLACING_MODES = ("full_refresh", "recreate_empty", "full_incremental_refresh")
# Of those, the modes that rebuild from the model's whole-history query.
WHOLE_HISTORY_MODES = ("full_refresh", "full_incremental_refresh")
ON_SCHEMA_CHANGE_MODES = (
    "ignore",
    "fail",
    "append_new_columns",
    "sync_all_columns",
    *REPLACING_MODES,
)


@dataclass(frozen=True)
class ColumnChange:
    path: tuple[str, ...]
    old: IcebergType
    new: IcebergType

    @property
    def widening(self) -> bool:
        return is_widening(self.old, self.new)

    def describe(self) -> str:
        kind = "widening" if self.widening else "type change"
        return (
            f"{kind} of `{'.'.join(self.path)}` from {spark_type_name(self.old)} "
            f"to {spark_type_name(self.new)}"
        )


@dataclass(frozen=True)
class SchemaDiff:
    """What the model's output has that the table lacks, and the reverse."""

    added: list[tuple[tuple[str, ...], IcebergType]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[ColumnChange] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def describe(self) -> list[str]:
        lines = [f"new column `{'.'.join(p)}` {spark_type_name(t)}" for p, t in self.added]
        lines += [f"column `{name}` is no longer returned by the model" for name in self.removed]
        lines += [change.describe() for change in self.changed]
        return lines


def _diff_fields(
    table_fields: list[NestedField],
    model_fields: list[spark.StructField],
    prefix: tuple[str, ...],
    diff: SchemaDiff,
) -> None:
    from pyiceberg.types import StructType

    by_name = {f.name.lower(): f for f in table_fields}
    seen = set()
    for model_field in model_fields:
        path = (*prefix, model_field.name)
        new = iceberg_type(model_field.dataType, ".".join(path))
        existing = by_name.get(model_field.name.lower())
        if existing is None:
            diff.added.append((path, new))
            continue
        seen.add(existing.name.lower())
        old = existing.field_type
        table_path = (*prefix, existing.name)
        if isinstance(old, StructType) and isinstance(model_field.dataType, spark.StructType):
            _diff_fields(list(old.fields), list(model_field.dataType.fields), table_path, diff)
        elif not same_type(old, new):
            diff.changed.append(ColumnChange(table_path, old, new))
    if not prefix:
        diff.removed.extend(f.name for f in table_fields if f.name.lower() not in seen)


def schema_diff(
    table: Schema, model: spark.StructType, table_only: list[str] | None = None
) -> SchemaDiff:
    """Compare a table's schema with a model's output; names compare case-insensitively.
    `table_only` names columns the table has by design (not missing from the model)."""
    diff = SchemaDiff()
    _diff_fields(list(table.fields), list(model.fields), (), diff)
    skip = {c.lower() for c in table_only or []}
    diff.removed[:] = [c for c in diff.removed if c.lower() not in skip]
    return diff


def check_mode(model_name: str, mode: str | None) -> str:
    """The `on_schema_change` mode (default `ignore`), or an error listing the valid ones."""
    mode = mode or "ignore"
    if mode not in ON_SCHEMA_CHANGE_MODES:
        raise ModelConfigError.unknown_value(
            model_name, "on_schema_change", mode, ON_SCHEMA_CHANGE_MODES
        )
    return mode


def check_mode_for_strategy(model_name: str, mode: str | None, strategy: Strategy) -> str:
    """`check_mode`, plus the pairs that cannot work: a microbatch batch sees only its own
    time window, so it has no query for the whole history to rebuild from."""
    mode = check_mode(model_name, mode)
    if strategy.batched and mode in WHOLE_HISTORY_MODES:
        raise ModelConfigError(
            model_name,
            "on_schema_change",
            f"`{mode}` rebuilds the whole history, but a microbatch run only sees one batch's "
            "time window",
            "use `recreate_empty` (the table restarts with this run's batches), or rebuild "
            "every batch from `begin` with `dbt run --full-refresh`",
        )
    return mode


def replaces_table(mode: str | None, diff: SchemaDiff) -> bool:
    """Whether `mode` replaces the table for this difference: only new columns and type
    changes need a new table. A column the model stopped returning is kept either way
    (replacing would only erase its history), so on its own it changes nothing."""
    return mode in REPLACING_MODES and bool(diff.added or diff.changed)


def plan_evolution(model_name: str, mode: str | None, diff: SchemaDiff) -> SchemaDiff:
    """The schema changes to commit for `on_schema_change` (nothing is ever dropped), or
    an error naming every difference when the mode refuses them.

    The replacing modes commit nothing here: when the model added or changed columns,
    the materialization has already replaced the table (see `replaces_table`)."""
    mode = check_mode(model_name, mode)
    if diff.empty or mode == "ignore" or mode in REPLACING_MODES:
        return SchemaDiff()
    if mode == "fail":
        raise ModelConfigError(
            model_name,
            "on_schema_change",
            "is `fail` and the model's columns differ from the table: "
            + "; ".join(diff.describe()),
            "align the model, or choose append_new_columns or sync_all_columns",
        )
    if mode == "append_new_columns":
        return SchemaDiff(added=diff.added)
    narrowing = [c for c in diff.changed if not c.widening]
    if narrowing:
        raise ModelConfigError(
            model_name,
            "on_schema_change",
            "sync_all_columns only widens types in place (int to bigint, float to double, "
            "decimal precision up at the same scale); refused: "
            + "; ".join(c.describe() for c in narrowing),
            "cast the column in the model to its current type, or rebuild with --full-refresh",
        )
    return SchemaDiff(added=diff.added, changed=diff.changed)
