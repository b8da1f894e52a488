"""What one incremental run does, decided from plain values: the table's state (or none),
the model's parsed incremental config and its analysed output schema. `plan_run` is a
pure function (no engine, no catalog, no Spark session): it returns a frozen `RunPlan`,
or raises `ModelConfigError` for any bad config or column, before anything is written.

State machine (`Action`):
- no table, or --full-refresh: BUILD (create from the model's rows);
- a chunked rebuild left part-way: RESUME_CHUNKS (write the chunks still missing);
- the model's columns differ and `on_schema_change` replaces the table: REBUILD (from the
  whole history), RECREATE_EMPTY (from this run's rows) or REBUILD_IN_CHUNKS (an empty
  table, then one commit per time chunk);
- otherwise APPLY: schema and partition evolution through PyIceberg, then the strategy's
  one statement.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from dbt.adapters.s3tables.errors import ModelConfigError, UnsupportedTypeError
from dbt.adapters.s3tables.incremental.config import (
    IncrementalConfig,
    check_against_columns,
    check_columns_exist,
)
from dbt.adapters.s3tables.incremental.key_uniqueness import (
    KeyUniqueness,
    declared_unique_columns,
    key_uniqueness,
)
from dbt.adapters.s3tables.incremental.model_state import REBUILD_PLAN, compare_state
from dbt.adapters.s3tables.incremental.partition_evolution import (
    SpecChange,
    check_added_sources,
    spec_change,
)
from dbt.adapters.s3tables.incremental.schema_evolution import (
    REPLACING_MODES,
    SchemaDiff,
    plan_evolution,
    replaces_table,
    schema_diff,
)
from dbt.adapters.s3tables.incremental.strategy_traits import Replaces
from dbt.adapters.s3tables.sql.types import without_void

if TYPE_CHECKING:
    from pyiceberg.schema import Schema
    from pyiceberg.types import IcebergType
    from pyspark.sql.types import StructType

    from dbt.adapters.s3tables.catalogs.table_changes import TableState


class Action(enum.Enum):
    """What one incremental run does to its table."""

    BUILD = "build"
    APPLY = "incremental"
    REBUILD = "full_refresh"
    RECREATE_EMPTY = "recreate_empty"
    REBUILD_IN_CHUNKS = "full_incremental_refresh"
    RESUME_CHUNKS = "resume_full_incremental_refresh"


# The actions whose table is built from the model's whole-history query.
WHOLE_HISTORY_ACTIONS = (Action.REBUILD, Action.REBUILD_IN_CHUNKS, Action.RESUME_CHUNKS)
# The actions that create (or replace) the table with one CREATE ... AS statement.
CREATING_ACTIONS = (
    Action.BUILD,
    Action.REBUILD,
    Action.RECREATE_EMPTY,
    Action.REBUILD_IN_CHUNKS,
)
# The actions that commit chunk by chunk (no audit branch can stage them as one change).
CHUNKED_ACTIONS = (Action.REBUILD_IN_CHUNKS, Action.RESUME_CHUNKS)
# The actions that write this run's rows: the model's columns are checked against the
# config (the whole-history actions check the whole-history query's instead).
MODEL_ROWS_ACTIONS = (Action.BUILD, Action.RECREATE_EMPTY, Action.APPLY)


@dataclass(frozen=True)
class Note:
    """A line for the log, saying why the plan is what it is."""

    level: Literal["info", "warning"]
    text: str


@dataclass(frozen=True)
class RunPlan:
    """Everything one run does, decided: the executor of `action` only carries it out."""

    action: Action
    # The table's state the plan was made from (None: the run builds the table anew).
    table: TableState | None
    # Lines for the log, in the order they were decided.
    notes: tuple[Note, ...] = ()
    # APPLY: the schema changes to commit, the table's columns after them, and the
    # partition spec change to commit.
    evolution: SchemaDiff = field(default_factory=SchemaDiff)
    target_columns: tuple[str, ...] = ()
    spec_change: SpecChange = field(default_factory=SpecChange)
    # Properties the created table gets beyond the model's own (a chunked rebuild's plan,
    # marking it in progress in the same commit).
    marker_properties: Mapping[str, str] = field(default_factory=dict)
    # merge and delete+insert with a key: whether the key is declared unique, and why
    # (None: the strategy never deduplicates its rows per key).
    declared_uniqueness: KeyUniqueness | None = None
    # Whether the run counts the model's rows per key (a merge or scd2 model whose key is
    # not declared unique, see key_uniqueness.py).
    counts_keys: bool = False
    # APPLY of insert_overwrite in a model that reads upstream changes: the partitions the
    # changes reach are written from the model's whole-history query (a partition is
    # replaced whole, so it needs every row, not only the new ones).
    rebuilds_changed_partitions: bool = False

    @property
    def needs_whole_history(self) -> bool:
        return self.action in WHOLE_HISTORY_ACTIONS or self.rebuilds_changed_partitions

    @property
    def creates_table(self) -> bool:
        return self.action in CREATING_ACTIONS

    @property
    def checks_whole_history(self) -> bool:
        """Whether the whole-history query's columns are checked against the config (a
        resumed rebuild follows the chunk plan it started with)."""
        return self.needs_whole_history and self.action is not Action.RESUME_CHUNKS


def table_diff(settings: IncrementalConfig, table: Schema, output: StructType) -> SchemaDiff:
    """How a query's output, as a table stores it (untyped NULL columns as string),
    differs from the table; scd2's validity columns belong to the table, not to the
    model's output."""
    stored = without_void(output)
    try:
        return schema_diff(table, stored, table_only=settings.history_columns)
    except UnsupportedTypeError as error:
        raise ModelConfigError(
            settings.model_name, "columns", str(error), "cast the column to a supported type"
        ) from error


def plan_run(
    settings: IncrementalConfig,
    model_schema: StructType,
    table: TableState | None,
    *,
    audited: bool = False,
    model_node: Mapping[str, Any] | None = None,
    notes: list[Note] | None = None,
    reads_upstream_changes: bool = False,
) -> RunPlan:
    """The plan of one run of the model whose output is `model_schema` (as analysed),
    into the table in state `table` (None: none, or --full-refresh). `audited`: the run
    writes to the table's audit branch. `model_node`: dbt's node, whose constraints may
    declare the key unique. `notes`, when given, collects the plan's log lines as they are
    decided, so a caller can still say them when the plan is refused.
    `reads_upstream_changes`: the model's SQL reads only its upstreams' changes this run
    (upstream_changes())."""
    name = settings.model_name
    notes = [] if notes is None else notes
    action, diff = _decide(settings, model_schema, table, notes)
    if audited and action in CHUNKED_ACTIONS:
        raise ModelConfigError(
            name,
            "audit_before_publish",
            "a chunked rebuild (`full_incremental_refresh`) commits chunk by chunk, "
            "and cannot be staged as one audited change",
            "run this rebuild once with the audit off, then turn it back on",
        )
    if action in MODEL_ROWS_ACTIONS:
        check_against_columns(settings, model_schema.names)
    marker: dict[str, str] = {}
    if action is Action.REBUILD_IN_CHUNKS:
        assert settings.chunk_plan is not None, "the mode's config is parsed with its plan"
        marker[REBUILD_PLAN] = settings.chunk_plan.to_property()
    declared = key_uniqueness(
        settings.unique_key,
        settings.unique_key_is_unique,
        declared_unique_columns(model_node or {}),
    )
    keyed = bool(settings.unique_key)
    plan = RunPlan(
        action,
        table,
        marker_properties=marker,
        declared_uniqueness=(declared if keyed and settings.strategy.trusts_declared_key else None),
        counts_keys=(keyed and settings.strategy.counts_keys and not declared.source_unique),
        rebuilds_changed_partitions=(
            action is Action.APPLY
            and reads_upstream_changes
            and settings.strategy.replaces is Replaces.PARTITIONS
        ),
    )
    if table is not None and action is Action.APPLY:
        plan = _plan_apply(plan, settings, model_schema, table, diff, notes)
    return replace(plan, notes=tuple(notes))


def _decide(
    settings: IncrementalConfig, output: StructType, table: TableState | None, notes: list[Note]
) -> tuple[Action, SchemaDiff | None]:
    """The action, and the schema diff when deciding it took one."""
    if table is None:
        return Action.BUILD, None
    if REBUILD_PLAN in table.properties:
        return Action.RESUME_CHUNKS, None
    mode = settings.on_schema_change
    if mode not in REPLACING_MODES:
        return Action.APPLY, None
    diff = table_diff(settings, table.schema, output)
    if not replaces_table(mode, diff):
        return Action.APPLY, diff
    notes.append(
        Note(
            "info",
            f"{settings.model_name}: on_schema_change `{mode}` replaces the table: "
            + "; ".join(diff.describe()),
        )
    )
    return Action(mode), diff


def _plan_apply(
    plan: RunPlan,
    settings: IncrementalConfig,
    output: StructType,
    table: TableState,
    diff: SchemaDiff | None,
    notes: list[Note],
) -> RunPlan:
    """Every check of an incremental write, and what it commits before its statement."""
    name = settings.model_name
    if diff is None:
        diff = table_diff(settings, table.schema, output)
    mode = settings.on_schema_change
    if diff.removed and mode not in ("ignore", "fail"):
        notes.append(
            Note(
                "warning",
                f"{name}: column(s) {', '.join(diff.removed)} no longer returned by the "
                "model are kept (this adapter never drops a column); "
                + settings.strategy.kept_column_values,
            )
        )
    evolution = plan_evolution(name, mode, diff)
    # The table's columns after evolution: computed, not re-read.
    added = [(path[0], added_type) for path, added_type in evolution.added if len(path) == 1]
    target_columns = [c.name for c in table.columns] + [column for column, _ in added]
    check_columns_exist(name, "unique_key", settings.unique_key, target_columns)
    partitioning = spec_change(table.spec, table.schema, settings.partitioning)

    def column_type(column: str) -> IcebergType | None:
        """A column's type in the table after the planned schema changes (None: none)."""
        try:
            return table.schema.find_field(column, case_sensitive=False).field_type
        except ValueError:
            return {c.lower(): t for c, t in added}.get(column.lower())

    check_added_sources(name, partitioning.added, column_type)
    notes.extend(
        Note("warning", f"{name}: {change} since the last run")
        for change in compare_state(settings, table.properties)
    )
    return replace(
        plan, evolution=evolution, target_columns=tuple(target_columns), spec_change=partitioning
    )
