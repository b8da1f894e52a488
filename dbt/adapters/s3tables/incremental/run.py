"""One incremental model run as one object, the one the materialization starts
(`adapter.incremental(this).run(...)`, see table.py) and executes. It is built once,
from the model's parsed config, the model's output schema (Spark analyses the model's SQL
once) and the table's state; the planner (plan.py) decides what the run does and checks
everything before anything is written; the executor of the plan's action (execute.py)
writes.

The materialization (incremental.sql) asks it once and executes:

    run = adapter.incremental(this).run(...) # plans; raises on any bad config or column
    if run.needs_whole_history:              # on_schema_change rebuilds from all history
        run.use_whole_history(<the model's SQL rendered as on a first build>)
    if run.creates_table:                    # one CREATE [OR REPLACE] TABLE ... AS commit
        CREATE ... AS run.create_sql, with run.table_properties
    run.write()                              # the strategy's statement, or the chunks

It also owns rendering the model's SQL as on a first build (`render_as_first_build`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from functools import cached_property
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.invocation import get_invocation_id

from dbt.adapters.s3tables.incremental.config import check_against_columns
from dbt.adapters.s3tables.incremental.context import (
    KeepState,
    ReadRecords,
    RunContext,
    no_reads,
)
from dbt.adapters.s3tables.incremental.execute import Executor, executor_for
from dbt.adapters.s3tables.incremental.plan import Action, Note, plan_run
from dbt.adapters.s3tables.incremental.run_bases import Base, RunBases, run_key
from dbt.adapters.s3tables.incremental.run_branch import RunBranch, conflict_error, rebasable
from dbt.adapters.s3tables.incremental.strategy_traits import Replaces
from dbt.adapters.s3tables.incremental.warehouse import AnalysedQuery, RunTable, analyse

if TYPE_CHECKING:
    from dbt.adapters.base.relation import BaseRelation

    from dbt.adapters.s3tables.catalogs.table_changes import TableState
    from dbt.adapters.s3tables.incremental.commit_counts import IncrementalResponse
    from dbt.adapters.s3tables.incremental.config import IncrementalConfig, ModelBuildConfig
    from dbt.adapters.s3tables.incremental.partition_evolution import SpecChange
    from dbt.adapters.s3tables.incremental.strategy_traits import StrategyMacro
    from dbt.adapters.s3tables.incremental.warehouse import Warehouse

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
        keep_state: KeepState | None = None,
        model_node: Mapping[str, Any] | None = None,
        reads_upstream_changes: bool = False,
        strategy_macro: StrategyMacro | None = None,
        bases: RunBases | None = None,
        read_records: ReadRecords = no_reads,
        records_state: bool = True,
    ) -> None:
        assert config.incremental is not None, "an incremental run needs an incremental model"
        self.config = config
        self.settings: IncrementalConfig = config.incremental
        self.table_exists = table_exists
        table = RunTable(target, warehouse)
        self.model = analyse(warehouse.engine, model_sql)
        # --full-refresh builds anew: the table's state is not even read.
        state = table.state() if table_exists and not full_refresh else None
        # The snapshot the run planned its rows from, when they depend on the table's
        # state (run_bases.py): its commit reaches main only while main is there.
        self.planned_from: int | None = None
        key, node = run_key(model_node or {}), str((model_node or {}).get("unique_id") or "")
        base = None
        if state is not None and bases is not None and self._reads_its_state(bases, key):
            base = self._check_base(bases, key, node, table, state)
            self.planned_from = state.snapshot_id
        # The plan's log lines are said even when the plan is refused.
        notes: list[Note] = []
        try:
            self.plan = plan_run(
                self.settings,
                self.model.schema,
                state,
                audited=bool(table.branch),
                model_node=model_node,
                notes=notes,
                reads_upstream_changes=reads_upstream_changes,
            )
        finally:
            for note in notes:
                (logger.warning if note.level == "warning" else logger.info)(note.text)
        run_branch = None
        if base is not None and self.plan.action is Action.APPLY and table.branch is None:
            if self.planned_from is None:
                logger.info(
                    f"{self.settings.model_name}: its table has no snapshot yet, so this "
                    "run's commit is not checked against another run's"
                )
            else:
                run_branch = RunBranch(
                    self.settings.model_name,
                    node,
                    target,
                    warehouse.iceberg,
                    self.planned_from,
                    base.read_by,
                    planned=state.loaded if state is not None else None,
                )
                table = RunTable(run_branch.relation, warehouse)
                keep_state = run_branch.keep_properties
        self._context = RunContext(
            config,
            self.settings,
            table,
            self.model,
            keep_state=keep_state,
            batch_start=batch_start,
            batch_end=batch_end,
            strategy_macro=strategy_macro,
            run_branch=run_branch,
            read_records=read_records if records_state else no_reads,
            node=node,
            records_state=records_state,
        )
        self.whole_history: AnalysedQuery | None = None

    def _reads_its_state(self, bases: RunBases, key: str) -> bool:
        """Whether the run's rows depend on its table's state (its SQL read it while it
        rendered, see run_bases.py), so that its commit must be validated against the
        snapshot it planned from. A microbatch batch replaces its own window, whatever the
        table holds: Iceberg's own validation of the overwrite serialises two of them."""
        if self.settings.strategy.replaces is Replaces.TIME_WINDOW:
            return False
        return bases.read_state(key)

    def _check_base(
        self, bases: RunBases, key: str, node: str, table: RunTable, state: TableState
    ) -> Base:
        """The table is still at the snapshot the run's SQL read while rendering (or only
        compaction, or the run's own pre-hooks, committed since): else another run
        committed in between, and the run is refused, with nothing written."""
        from dbt.adapters.s3tables.catalogs.table_changes import MainMoved, check_main_at

        base = bases.noted(key, state.snapshot_id, "the run's plan")
        if base.snapshot_id != state.snapshot_id:
            iceberg = table.warehouse.iceberg
            loaded = iceberg.load_table(table.namespace, table.name)
            try:
                check_main_at(loaded, base.snapshot_id)
            except MainMoved as moved:
                if not rebasable(moved, get_invocation_id(), node):
                    raise conflict_error(
                        self.settings.model_name, base.snapshot_id, moved, base.read_by
                    ) from None
        return base

    # --- what the materialization asks ---

    @property
    def name(self) -> str:
        return self.settings.model_name

    @property
    def action(self) -> Action:
        return self.plan.action

    @property
    def spec_change(self) -> SpecChange:
        """The partition spec change an incremental write commits."""
        return self.plan.spec_change

    @property
    def columns(self) -> list[str]:
        """The model's output columns."""
        return self.model.columns

    @property
    def needs_whole_history(self) -> bool:
        return self.plan.needs_whole_history

    def use_whole_history(self, sql: str) -> None:
        """The model's SQL as on a first build (is_incremental() false): what REBUILD,
        REBUILD_IN_CHUNKS and RESUME_CHUNKS write. Analysed once and checked here."""
        self.whole_history = analyse(self._context.table.warehouse.engine, sql)
        if self.plan.checks_whole_history:
            check_against_columns(self.settings, self.whole_history.columns)

    @property
    def creates_table(self) -> bool:
        return self.plan.creates_table

    @property
    def replaces_table(self) -> bool:
        """Whether the create statement replaces an existing table (CREATE OR REPLACE)."""
        return self.table_exists

    @property
    def table_properties(self) -> dict[str, str]:
        """Properties of the created table: defaults, write mode, the model's own and, for
        a chunked rebuild, the plan marking it in progress (in the same commit)."""
        defaults = self._context.table.warehouse.iceberg.config.table_defaults()
        properties = self.config.table_properties(defaults)
        properties.update(self.plan.marker_properties)
        return properties

    @cached_property
    def create_sql(self) -> str:
        """The query the table is created from (its rows counted per key first, when the
        plan says so): asked once, whatever asks again."""
        return self._executor.create_sql()

    def write(self) -> IncrementalResponse | None:
        """The run's writes after the create statement (if any); the response to report
        instead of the create statement's, or None."""
        return self._executor.write()

    @property
    def written_sql(self) -> str:
        """The statements `write()` executed (empty: none), for dbt's target/run file."""
        return ";\n\n".join(self._context.written_statements)

    @cached_property
    def _executor(self) -> Executor:
        """The plan's executor, once the whole-history query is known (when needed)."""
        return executor_for(self.plan, self._context, self.whole_history)
