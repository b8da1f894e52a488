"""One incremental model run as one object. It is built once, from the model's parsed
config, the model's output schema (Spark analyses the model's SQL once) and the table's
state; it decides what the run does (an `Action`), checks everything before anything is
written, and writes.

The materialization (incremental.sql) asks it once and executes:

    run = adapter.incremental_run(...)       # decides; raises on any bad config or column
    if run.needs_whole_history:              # on_schema_change rebuilds from all history
        run.use_whole_history(<the model's SQL rendered as on a first build>)
    if run.creates_table:                    # one CREATE [OR REPLACE] TABLE ... AS commit
        CREATE ... AS run.create_sql, with run.table_properties
    run.write(model_node=model)              # the strategy's statement, or the chunks

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
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.s3tables.errors import ModelConfigError, UnsupportedTypeError
from dbt.adapters.s3tables.incremental.chunked_refresh import (
    ChunkPlan,
    Progress,
    chunk_sql,
    chunk_starts_sql,
    chunk_windows,
    progress_sql,
)
from dbt.adapters.s3tables.incremental.commit_counts import (
    CommitCounts,
    IncrementalResponse,
    commit_counts,
)
from dbt.adapters.s3tables.incremental.config import (
    IncrementalConfig,
    ModelBuildConfig,
    check_against_columns,
    check_columns_exist,
    merge_update_columns,
    resolve_use_merge,
)
from dbt.adapters.s3tables.incremental.key_uniqueness import CONFIG_KEY as UNIQUENESS_KEY
from dbt.adapters.s3tables.incremental.key_uniqueness import (
    KeyCounts,
    KeyUniqueness,
    declared_unique_columns,
    is_cardinality_violation,
    key_counts,
    key_counts_sql,
    key_uniqueness,
)
from dbt.adapters.s3tables.incremental.model_state import (
    LAST_PROCESSED_VALUE,
    REBUILD_PLAN,
    RETIRED,
    compare_state,
    state_properties,
)
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
from dbt.adapters.s3tables.incremental.strategies import (
    FALLBACK_BUILDERS,
    STRATEGY_BUILDERS,
    IncrementalWrite,
    append_sql,
    partition_values_overwrite_fallback_sql,
    partition_values_overwrite_sql,
)
from dbt.adapters.s3tables.sql.text import quote, sql_string
from dbt.adapters.s3tables.sql.types import spark_type_name, typed_query, without_void

if TYPE_CHECKING:
    from dbt.adapters.base.relation import BaseRelation
    from pyiceberg.types import IcebergType
    from pyspark.sql.types import StructType

    from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog, TableState
    from dbt.adapters.s3tables.engines.base import Engine

logger = AdapterLogger("s3tables")

# The relations whose model SQL is being rendered as on a first build, in this thread.
_FIRST_BUILD_RENDERS: ContextVar[frozenset[str]] = ContextVar(
    "first_build_renders", default=frozenset()
)


def render_as_first_build(relation: str, render: Callable[[], str]) -> str:
    """`render()`, during which `renders_as_first_build(relation)` is true: dbt's
    is_incremental() (this adapter's macro) is then false, so the model's SQL comes out
    as its whole-history query. Scoped to this call and thread, whatever it raises."""
    token = _FIRST_BUILD_RENDERS.set(_FIRST_BUILD_RENDERS.get() | {relation})
    try:
        return render()
    finally:
        _FIRST_BUILD_RENDERS.reset(token)


def renders_as_first_build(relation: str) -> bool:
    return relation in _FIRST_BUILD_RENDERS.get()


# Strategies whose statement changes nothing when the model returns no rows (microbatch
# still replaces its window with nothing).
SKIPPED_WHEN_EMPTY = ("append", "merge", "delete+insert", "scd2", "insert_overwrite")


# What each strategy writes into a column the model no longer returns (docs/incremental.md,
# "Schema evolution"): rows it leaves in place always keep their values.
KEPT_COLUMN_VALUES = {
    "merge": "merge keeps their values in updated rows and writes NULL in new rows",
    "append": "append writes NULL in new rows",
    "delete+insert": "delete+insert writes NULL in the rows it replaces or adds",
    "insert_overwrite": "insert_overwrite writes NULL in the partitions it replaces",
    "microbatch": "microbatch writes NULL in the batch it replaces",
    "scd2": "scd2 does not compare them and writes NULL in new versions",
}


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


@dataclass(frozen=True)
class Warehouse:
    """What a run reads and writes through: the engine (analysis, scoped settings), dbt's
    statement path (every statement logged and its errors explained) and the Iceberg
    catalog (metadata reads, schema and property commits)."""

    engine: Engine
    execute: Callable[[str], object]
    fetch: Callable[[str], list[Any]]
    iceberg: IcebergCatalog


@dataclass(frozen=True)
class Statement:
    """The one statement a run commits with, and how it runs and is counted."""

    sql: str
    # The strategy whose reading of a snapshot summary gives this statement's counts.
    counted_as: str
    # Spark settings for this statement only.
    settings: dict[str, str]
    # A whole-table INSERT OVERWRITE removes and re-adds every row: no logical counts.
    rewrites_table: bool = False


@dataclass(frozen=True)
class AnalysedQuery:
    """A query and its output schema as the engine analysed it."""

    sql: str
    schema: StructType

    @property
    def columns(self) -> list[str]:
        return self.schema.names

    @property
    def stored_schema(self) -> StructType:
        """The schema as a table stores it: untyped (NULL) columns as string."""
        return without_void(self.schema)


def analyse(engine: Engine, sql: str) -> AnalysedQuery:
    """The query's output schema from one analysis by the engine (nothing runs)."""
    return AnalysedQuery(sql, engine.query_schema(sql))


class IncrementalRun:
    """One run of one incremental model (see the module docstring)."""

    def __init__(
        self,
        config: ModelBuildConfig,
        target: BaseRelation,
        model_sql: str,
        warehouse: Warehouse,
        *,
        table_exists: bool,
        full_refresh: bool = False,
        batch_start: str | None = None,
        batch_end: str | None = None,
        keep_state: Callable[[dict[str, str], tuple[str, ...]], None] | None = None,
        model_node: Mapping[str, Any] | None = None,
    ) -> None:
        assert config.incremental is not None, "an incremental run needs an incremental model"
        self.config = config
        self.settings: IncrementalConfig = config.incremental
        self.target = target
        # Write-audit-publish: the target is the table's audit branch, and the state the
        # run records is handed to `keep_state` for the publish (properties are
        # table-wide: main must not say it holds data it does not have yet).
        self.branch: str | None = getattr(target, "audit_branch", None)
        self.keep_state = keep_state
        self.warehouse = warehouse
        self.batch_start = batch_start
        self.batch_end = batch_end
        # dbt's model node: its constraints may declare the unique key unique.
        self.model_node: Mapping[str, Any] = model_node or {}
        self.model = analyse(warehouse.engine, model_sql)
        self.whole_history: AnalysedQuery | None = None
        self.table_exists = table_exists
        self.before: TableState | None = None
        # APPLY: the schema changes to commit, and the table's columns after them; the
        # partition spec change to commit.
        self.plan = SchemaDiff()
        self.target_columns: list[str] = []
        self.spec_change = SpecChange()
        # Why the model's rows are taken as unique per key (set when a write decides it).
        self.uniqueness_reason = ""
        self.action = self._decide(table_exists and not full_refresh)
        if self.branch and self.action in (Action.REBUILD_IN_CHUNKS, Action.RESUME_CHUNKS):
            raise ModelConfigError(
                self.name,
                "audit_before_publish",
                "a chunked rebuild (`full_incremental_refresh`) commits chunk by chunk, "
                "and cannot be staged as one audited change",
                "run this rebuild once with the audit off, then turn it back on",
            )
        if self.action in (Action.BUILD, Action.RECREATE_EMPTY, Action.APPLY):
            check_against_columns(self.settings, self.model.columns)
        if self.action is Action.APPLY:
            self._plan_apply()

    # --- deciding ---

    @property
    def name(self) -> str:
        return self.settings.model_name

    def _state(self) -> TableState:
        return self.warehouse.iceberg.table_state(
            str(self.target.schema), str(self.target.identifier), self.branch
        )

    def _decide(self, incremental: bool) -> Action:
        if not incremental:
            return Action.BUILD
        self.before = self._state()
        if REBUILD_PLAN in self.before.properties:
            return Action.RESUME_CHUNKS
        mode = self.settings.on_schema_change
        if mode not in REPLACING_MODES:
            return Action.APPLY
        diff = self._diff(self.model.stored_schema)
        if not replaces_table(mode, diff):
            return Action.APPLY
        logger.info(
            f"{self.name}: on_schema_change `{mode}` replaces the table: "
            + "; ".join(diff.describe())
        )
        return Action(mode)

    def _diff(self, output: StructType, table_only: list[str] | None = None) -> SchemaDiff:
        """How a query's output differs from the table; scd2's validity columns belong to
        the table, not to the model's output."""
        assert self.before is not None
        table_only = self.settings.history_columns if table_only is None else table_only
        try:
            return schema_diff(self.before.schema, output, table_only=table_only)
        except UnsupportedTypeError as error:
            raise ModelConfigError(
                self.name, "columns", str(error), "cast the column to a supported type"
            ) from error

    def _plan_apply(self) -> None:
        """Every check of an incremental write, before anything reaches the catalog."""
        assert self.before is not None
        diff = self._diff(self.model.stored_schema)
        mode = self.settings.on_schema_change
        if diff.removed and mode not in ("ignore", "fail"):
            logger.warning(
                f"{self.name}: column(s) {', '.join(diff.removed)} no longer returned by the "
                "model are kept (this adapter never drops a column); "
                + KEPT_COLUMN_VALUES[self.settings.strategy]
            )
        self.plan = plan_evolution(self.name, mode, diff)
        # The table's columns after evolution: computed, not re-read.
        self.target_columns = [c.name for c in self.before.columns]
        self.target_columns += [path[0] for path, _ in self.plan.added if len(path) == 1]
        check_columns_exist(self.name, "unique_key", self.settings.unique_key, self.target_columns)
        self.spec_change = spec_change(
            self.before.spec, self.before.schema, self.settings.partitioning
        )
        check_added_sources(self.name, self.spec_change.added, self._column_type)
        for change in compare_state(self.settings, self.before.properties):
            logger.warning(f"{self.name}: {change} since the last run")

    def _column_type(self, name: str) -> IcebergType | None:
        """A column's type in the table after the planned schema changes (None: none)."""
        assert self.before is not None
        try:
            return self.before.schema.find_field(name, case_sensitive=False).field_type
        except ValueError:
            added = {path[0].lower(): t for path, t in self.plan.added if len(path) == 1}
            return added.get(name.lower())

    # --- what the materialization asks ---

    @property
    def columns(self) -> list[str]:
        """The model's output columns."""
        return self.model.columns

    @property
    def needs_whole_history(self) -> bool:
        return self.action in WHOLE_HISTORY_ACTIONS

    def use_whole_history(self, sql: str) -> None:
        """The model's SQL as on a first build (is_incremental() false): what REBUILD,
        REBUILD_IN_CHUNKS and RESUME_CHUNKS write. Analysed once and checked here."""
        self.whole_history = analyse(self.warehouse.engine, sql)
        if self.action is not Action.RESUME_CHUNKS:
            check_against_columns(self.settings, self.whole_history.columns)

    @property
    def creates_table(self) -> bool:
        return self.action in CREATING_ACTIONS

    @property
    def replaces_table(self) -> bool:
        """Whether the create statement replaces an existing table (CREATE OR REPLACE)."""
        return self.table_exists

    @property
    def table_properties(self) -> dict[str, str]:
        """Properties of the created table: defaults, write mode, the model's own and, for
        a chunked rebuild, the plan marking it in progress (in the same commit)."""
        properties = self.config.table_properties(self.warehouse.iceberg.config.table_defaults())
        if self.action is Action.REBUILD_IN_CHUNKS:
            assert self.settings.chunk_plan is not None
            properties[REBUILD_PLAN] = self.settings.chunk_plan.to_property()
        return properties

    @cached_property
    def create_sql(self) -> str:
        """The query the table is created from (its rows counted per key first, see
        `_say_repeated_keys`)."""
        if self.action is Action.BUILD:
            self._say_repeated_keys(self.model)
            return self._build_sql(self.model)
        if self.action is Action.RECREATE_EMPTY:
            self._say_repeated_keys(self.model)
            return self._replacement_sql(self.model)
        assert self.whole_history is not None, "use_whole_history() comes first"
        if self.action is Action.REBUILD_IN_CHUNKS:
            return self._replacement_sql(self.whole_history, empty=True)
        self._say_repeated_keys(self.whole_history)
        return self._replacement_sql(self.whole_history)

    def _say_repeated_keys(self, query: AnalysedQuery) -> None:
        """A table created from rows that repeat a `unique_key` value keeps them all, as
        dbt's own materializations do, and the run says how many (unless the key is
        declared unique)."""
        if self._measures_keys:
            self._count_keys(query.sql, first_build=True)

    def _count_keys(self, rows_sql: str, first_build: bool) -> KeyCounts:
        """How the rows spread over `unique_key` values (only the key columns are read);
        keys that repeat are said, with what the run does about them."""
        row = self.warehouse.fetch(key_counts_sql(rows_sql, self.settings.unique_key))[0]
        counts = key_counts(row)
        if counts.repeated_keys:
            settings = self.settings
            logger.warning(
                counts.warning(self.name, settings.strategy, settings.watermark_column, first_build)
            )
        return counts

    @cached_property
    def _declared_uniqueness(self) -> KeyUniqueness:
        return key_uniqueness(
            self.settings.unique_key,
            self.settings.unique_key_is_unique,
            declared_unique_columns(self.model_node),
        )

    @property
    def _measures_keys(self) -> bool:
        """Whether this run counts the model's rows per key: a merge or scd2 model whose key
        is not declared unique (see key_uniqueness.py)."""
        return (
            self.settings.strategy in ("merge", "scd2")
            and bool(self.settings.unique_key)
            and not self._declared_uniqueness.source_unique
        )

    def _typed(self, query: AnalysedQuery) -> str:
        """The query with its untyped (NULL) columns cast to string. A contract's query
        arrives already cast to the contract's types."""
        if self.config.contract_enforced:
            return query.sql
        return typed_query(self.name, query.sql, list(query.schema.fields))

    def _build_sql(self, query: AnalysedQuery, typed: bool = True) -> str:
        """The query a new table is created from (scd2 adds its history columns)."""
        sql = self._typed(query) if typed else query.sql
        if self.settings.strategy != "scd2":
            return sql
        return (
            f"SELECT *, current_timestamp() AS {quote(self.settings.valid_from)}, "
            f"CAST(NULL AS TIMESTAMP) AS {quote(self.settings.valid_to)}"
            f" FROM (\n{sql}\n) AS dbt_scd2_source"
        )

    def _replacement_sql(self, query: AnalysedQuery, empty: bool = False) -> str:
        """The query a replacing `on_schema_change` mode rebuilds the table from: the
        query's rows (none if `empty`) plus, NULL-filled, every column the model no longer
        returns, so that no mode ever drops a column."""
        assert self.before is not None
        kept = self._diff(query.stored_schema).removed
        if kept:
            logger.warning(
                f"{self.name}: column(s) {', '.join(kept)} no longer returned by the model "
                "are kept in the new table (this adapter never drops a column), NULL-filled"
            )
        schema = self.before.schema
        nulls = "".join(
            f", CAST(NULL AS {spark_type_name(schema.find_field(c).field_type)}) AS {quote(c)}"
            for c in kept
        )
        where = " WHERE false" if empty else ""
        return f"SELECT *{nulls} FROM (\n{self._build_sql(query)}\n) AS dbt_model_rows{where}"

    # --- writing ---

    def write(self) -> IncrementalResponse | None:
        """The run's writes after the create statement (if any); the response to report
        instead of the create statement's, or None."""
        if self.action is Action.APPLY:
            return self._apply()
        if self.action in (Action.REBUILD_IN_CHUNKS, Action.RESUME_CHUNKS):
            assert self.whole_history is not None
            return self._write_chunks(self.whole_history)
        self._record_state(self.model.sql)
        return None

    def _source_unique(self) -> bool:
        """Whether merge and delete+insert may use the model's rows without dedup because
        the key is declared unique."""
        if self.settings.strategy not in ("merge", "delete+insert") or not self.settings.unique_key:
            return False
        decision = self._declared_uniqueness
        self.uniqueness_reason = decision.reason
        if decision.source_unique or not self._measures_keys:
            path = "used as they are" if decision.source_unique else "deduplicated per key"
            logger.debug(f"{self.name}: the model's rows are {path} ({decision.reason})")
        return decision.source_unique

    def _inspect_rows(self, rows: str, source_unique: bool) -> tuple[bool, bool]:
        """Whether the run's (cached) rows are none, and whether its statement may use them
        as they are: declared unique, or, for a merge, counted per key (a key repeating is
        said, and the rows are deduplicated)."""
        if not self._measures_keys:
            return self._is_empty(rows), source_unique
        counts = self._count_keys(rows, first_build=False)
        if counts.repeated_keys:
            self.uniqueness_reason = f"{counts.repeated_keys} key(s) repeat in this run's rows"
        else:
            self.uniqueness_reason = "no key repeats in this run's rows, counted"
        path = "deduplicated per key" if counts.repeated_keys else "used as they are"
        logger.debug(f"{self.name}: the model's rows are {path} ({self.uniqueness_reason})")
        return counts.rows == 0, not counts.repeated_keys

    def _apply(self) -> IncrementalResponse:
        """Schema evolution, the table's write properties, then the strategy's one
        statement (one commit), reported with the exact row counts of that commit."""
        assert self.before is not None
        self._evolve_schema()
        self._evolve_partitioning()
        self._apply_write_mode()
        write = IncrementalWrite(
            target=str(self.target),
            source_sql=self.model.sql,
            target_columns=self.target_columns,
            source_columns=self.model.columns,
            unique_key=self.settings.unique_key,
            predicates=self.settings.predicates,
            update_columns=merge_update_columns(self.settings, self.target_columns),
            watermark_column=self.settings.watermark_column,
            source_unique=self._source_unique(),
            check_columns=self.settings.check_columns,
            valid_from=self.settings.valid_from,
            valid_to=self.settings.valid_to,
            event_time=self.settings.event_time,
            window_start=self.batch_start,
            window_end=self.batch_end,
        )
        if self.settings.strategy not in SKIPPED_WHEN_EMPTY:
            return self._commit(write)
        with self._cached_source() as rows:
            empty, source_unique = self._inspect_rows(rows, write.source_unique)
            if empty:
                # Iceberg would commit an empty snapshot: an hourly job would pile up
                # thousands a year. The run is a no-op; the table stays at its snapshot.
                logger.info(f"{self.name}: the model returned no rows; nothing committed")
                self._record_state(self.model.sql, self.before.properties, rows)
                strategy = self.settings.strategy.upper()
                return IncrementalResponse(
                    _message=f"{strategy} 0 inserted, 0 updated, 0 deleted "
                    "(no rows, nothing committed)",
                    code=strategy,
                    rows_affected=0,
                    rows_inserted=0,
                    rows_updated=0,
                    rows_deleted=0,
                    snapshot_id=None,
                )
            return self._commit(
                replace(write, source_sql=rows, source_unique=source_unique), processed_rows=rows
            )

    def _evolve_schema(self) -> None:
        """Commit the planned schema changes with PyIceberg, before the data commit."""
        if self.plan.empty:
            return
        widened = [(c.path, c.new) for c in self.plan.changed]
        self.warehouse.iceberg.evolve_schema(
            str(self.target.schema), str(self.target.identifier), self.plan.added, widened
        )
        for line in self.plan.describe():
            logger.info(f"{self.name}: schema evolved: {line}")

    def _evolve_partitioning(self) -> None:
        """Commit the partition spec change with PyIceberg (one metadata commit, after the
        schema's: a new field may read a column just added), so the data commit uses it."""
        change = self.spec_change
        if change.empty:
            return
        self.warehouse.iceberg.evolve_partition_spec(
            str(self.target.schema),
            str(self.target.identifier),
            list(change.removed),
            [(term.source, term.transform) for term in change.added],
        )
        logger.info(f"{self.name}: partition spec evolved: {change.describe()}")

    def _apply_write_mode(self) -> None:
        """Bring the table's row-level write properties in line with `write_mode` (and the
        catalog's table defaults the model does not set itself); a change is one metadata
        commit, made only when a setting changed."""
        assert self.before is not None
        defaults = self.warehouse.iceberg.config.table_defaults()
        wanted = self.config.write_properties_to_apply(defaults)
        if self._set_properties(self.before.properties, wanted):
            logger.info(f"{self.name}: table write properties set: {wanted}")

    @contextmanager
    def _cached_source(self) -> Iterator[str]:
        """The model's rows computed once into Spark's cache (memory, spilling to disk),
        as a query over the cached view: emptiness is then known without evaluating the
        model twice. Dropping the view drops its cache too."""
        view = quote(f"dbt_source_{uuid.uuid4().hex}")
        self.warehouse.execute(f"CACHE TABLE {view} AS {self.model.sql}")
        try:
            yield f"SELECT * FROM {view}"
        finally:
            self.warehouse.execute(f"DROP VIEW IF EXISTS {view}")

    def _is_empty(self, rows_sql: str) -> bool:
        return not self.warehouse.fetch(f"SELECT 1 FROM ({rows_sql}) LIMIT 1")

    def _statement(self, write: IncrementalWrite) -> Statement:
        """The strategy's one statement: its MERGE or, without MERGE, its fallback; for
        insert_overwrite, dynamic overwrite unless files of an earlier partition spec are
        live (Iceberg's dynamic overwrite would leave their rows beside the new ones)."""
        strategy = self.settings.strategy
        builder, fallback = STRATEGY_BUILDERS[strategy], FALLBACK_BUILDERS.get(strategy)
        counted_as = strategy
        settings: dict[str, str] = {}
        if strategy == "insert_overwrite":
            target = (str(self.target.schema), str(self.target.identifier))
            if self.warehouse.iceberg.holds_files_of_other_specs(*target):
                logger.info(
                    f"{self.name}: the table holds files written under an earlier partition "
                    "spec, which Iceberg's dynamic overwrite would leave in place: the new "
                    "rows' partitions are replaced by their partition values instead"
                )
                builder = partition_values_overwrite_sql
                fallback = partition_values_overwrite_fallback_sql
                write = replace(
                    write,
                    partitioning=self.settings.partitioning,
                    function_catalog=quote(self.warehouse.iceberg.config.name),
                )
                counted_as = "delete+insert"
            else:
                settings = {"spark.sql.sources.partitionOverwriteMode": "dynamic"}
        if fallback is not None:
            use_merge, reason = resolve_use_merge(
                self.name, self.settings.use_merge, self.warehouse.engine.has_iceberg_extensions()
            )
            path = "MERGE INTO" if use_merge else "INSERT OVERWRITE of the whole table"
            logger.info(f"{self.name}: {strategy} writes with {path} ({reason})")
            if not use_merge:
                return Statement(fallback(write), counted_as, settings, rewrites_table=True)
        return Statement(builder(write), counted_as, settings)

    def _commit(
        self, write: IncrementalWrite, processed_rows: str | None = None
    ) -> IncrementalResponse:
        """The strategy's one statement (one commit) and the exact counts of that commit.
        `processed_rows`: a query over the rows the statement read (the cached source)."""
        assert self.before is not None
        strategy = self.settings.strategy
        statement = self._statement(write)
        with self.warehouse.engine.settings(statement.settings):
            try:
                self.warehouse.execute(statement.sql)
            except Exception as error:
                if write.source_unique and is_cardinality_violation(error):
                    raise DbtRuntimeError(
                        f"{self.name}: the model's rows hold a `unique_key` value more than "
                        "once, matching one table row several times, though the key was "
                        f"taken as unique ({self.uniqueness_reason}); nothing was committed. "
                        f"Fix: make the rows unique per key, or set `{UNIQUENESS_KEY}: "
                        "false` (the rows are then deduplicated per key)"
                    ) from error
                raise
        after = self._state()
        committed = after.snapshot_id != self.before.snapshot_id
        counts = (
            CommitCounts(None, None, None)
            if statement.rewrites_table
            else commit_counts(statement.counted_as, after.summary if committed else None)
        )
        self._record_state(self.model.sql, after.properties, processed_rows)
        logger.debug(f"{self.name}: {strategy} committed {after.snapshot_id}")
        return IncrementalResponse(
            _message=f"{strategy.upper()} {counts.inserted} inserted, "
            f"{counts.updated} updated, {counts.deleted} deleted",
            code=strategy.upper(),
            rows_affected=sum(n or 0 for n in (counts.inserted, counts.updated, counts.deleted)),
            rows_inserted=counts.inserted,
            rows_updated=counts.updated,
            rows_deleted=counts.deleted,
            snapshot_id=after.snapshot_id if committed else None,
        )

    def _write_chunks(self, whole_history: AnalysedQuery) -> IncrementalResponse:
        """Write the model's whole history into the (replaced) table, one INSERT per chunk,
        after the chunks the table already holds; then clear the rebuild marker."""
        state = self._state()
        plan = ChunkPlan.from_property(state.properties[REBUILD_PLAN])
        table_columns = [c.name for c in state.columns]
        table_event_time = next(
            (c for c in table_columns if c.lower() == plan.event_time.lower()), plan.event_time
        )
        count, last_chunk = self.warehouse.fetch(
            progress_sql(str(self.target), table_event_time, plan)
        )[0]
        progress = Progress.from_table(int(count), last_chunk, plan.chunk)
        if progress.started:
            logger.info(
                f"{self.name}: resuming full_incremental_refresh at "
                f"{progress.resume_from or 'the rows with an event time'} "
                f"({count} rows already committed)"
            )
        starts = self.warehouse.fetch(chunk_starts_sql(whole_history.sql, plan, progress))
        windows = chunk_windows([row[0] for row in starts], progress)
        source_columns = whole_history.columns + self.settings.history_columns
        inserted = 0
        for number, window in enumerate(windows, start=1):
            chunk = AnalysedQuery(
                chunk_sql(whole_history.sql, plan.event_time, window), whole_history.schema
            )
            write = IncrementalWrite(
                target=str(self.target),
                source_sql=self._build_sql(chunk, typed=False),
                target_columns=table_columns,
                source_columns=source_columns,
            )
            started = time.monotonic()
            try:
                self.warehouse.execute(append_sql(write))
            except Exception as error:
                raise DbtRuntimeError(
                    f"{self.name}: full_incremental_refresh stopped in chunk {number}/"
                    f"{len(windows)} {window.describe()}; the chunks before it are committed "
                    f"and the next run resumes with this one. Cause: {error}"
                ) from error
            rows = int(self._state().summary.get("added-records", 0))
            inserted += rows
            logger.info(
                f"{self.name}: chunk {number}/{len(windows)} {window.describe()}: "
                f"{rows} rows committed in {time.monotonic() - started:.1f}s"
            )
        self._record_state(whole_history.sql)
        return IncrementalResponse(
            _message=f"FULL INCREMENTAL REFRESH {inserted} inserted in {len(windows)} chunks",
            code="FULL_INCREMENTAL_REFRESH",
            rows_affected=inserted,
            rows_inserted=inserted,
            rows_updated=0,
            rows_deleted=0,
            snapshot_id=None,
        )

    # --- the state kept on the table ---

    def _record_state(
        self,
        model_sql: str,
        properties: dict[str, str] | None = None,
        processed_rows: str | None = None,
    ) -> None:
        """Keep the strategy, keys, hashes and last processed watermark on the table, for
        the next run to compare with (table properties: no data change, no snapshot).
        `properties`: the table's current ones, when this run already read them."""
        last_value = None
        if self.settings.watermark_column:
            last_value = self._last_processed_value(processed_rows)
        state = state_properties(self.settings, model_sql, last_value)
        if self.keep_state is not None:
            self.keep_state(state, (REBUILD_PLAN, *RETIRED))
            return
        self._set_properties(properties, state, remove=(REBUILD_PLAN, *RETIRED))

    def _last_processed_value(self, processed_rows: str | None) -> str | None:
        """The greatest `watermark_column` value the model has processed: the one recorded
        before this run, raised by this run's rows (a scan of those rows, not of the
        table); the table's own greatest value when none was recorded."""
        name = self.settings.watermark_column
        assert name is not None
        column = quote(name)
        recorded = self.before.properties.get(LAST_PROCESSED_VALUE) if self.before else None
        field = next((f for f in self.model.schema.fields if f.name.lower() == name.lower()), None)
        if processed_rows is None or recorded is None or field is None:
            sql = f"SELECT CAST(MAX({column}) AS STRING) FROM {self.target}"
        else:
            # GREATEST skips NULL: no rows with a value keep the recorded one.
            recorded_value = f"CAST({sql_string(recorded)} AS {field.dataType.simpleString()})"
            sql = (
                f"SELECT CAST(GREATEST(MAX({column}), {recorded_value}) AS STRING) "
                f"FROM ({processed_rows})"
            )
        value: str | None = self.warehouse.fetch(sql)[0][0]
        return value

    def _set_properties(
        self,
        current: dict[str, str] | None,
        wanted: dict[str, str],
        remove: tuple[str, ...] = (),
    ) -> bool:
        """Commit `wanted` table properties (and remove `remove`) unless the table already
        is that way: known from `current` without a catalog call, else compared on load."""
        if current is not None and (
            all(current.get(k) == v for k, v in wanted.items()) and not set(remove) & set(current)
        ):
            return False
        return self.warehouse.iceberg.set_properties_if_changed(
            str(self.target.schema), str(self.target.identifier), wanted, remove
        )
