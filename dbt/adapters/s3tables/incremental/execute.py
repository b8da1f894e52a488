"""Carrying out a `RunPlan`: one executor per kind of action, picked once by
`executor_for`. Each gives the query the table is created from (for the actions that
create it, see `RunPlan.creates_table`) and makes the run's writes after that:

- `CreateTable` (BUILD, RECREATE_EMPTY, REBUILD): the CREATE ... AS query, from the
  model's rows or its whole history; then the model's state is recorded;
- `ChunkedRebuild` (REBUILD_IN_CHUNKS, RESUME_CHUNKS): an empty replacement table (only
  when starting), then the chunk loop (chunk_loop.py) and the state;
- `Apply` (APPLY, apply.py): evolution, then the strategy's one statement.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from dbt_common.exceptions import DbtInternalError

from dbt.adapters.s3tables.incremental.apply import Apply
from dbt.adapters.s3tables.incremental.chunk_loop import write_chunks
from dbt.adapters.s3tables.incremental.plan import Action, RunPlan
from dbt.adapters.s3tables.incremental.state_record import record_state
from dbt.adapters.s3tables.incremental.statement_parts import without_deleted_rows

if TYPE_CHECKING:
    from pyiceberg.schema import Schema

    from dbt.adapters.s3tables.incremental.commit_counts import IncrementalResponse
    from dbt.adapters.s3tables.incremental.context import RunContext
    from dbt.adapters.s3tables.incremental.warehouse import AnalysedQuery


class Executor(Protocol):
    def create_sql(self) -> str:
        """The query the table is created from (actions that create it)."""
        ...

    def write(self) -> IncrementalResponse | None:
        """The run's writes after the create statement (if any); the response to report
        instead of the create statement's, or None."""
        ...


@dataclass(frozen=True)
class CreateTable:
    """A table created from `rows` (the model's, or its whole history): new, or replacing
    one of schema `replaced`, whose columns the rows no longer have are kept. Rows that
    repeat a key are kept all, as dbt's own materializations do, and counted when
    `counts_keys` (the run then says how many)."""

    run: RunContext
    rows: AnalysedQuery
    replaced: Schema | None
    counts_keys: bool

    def create_sql(self) -> str:
        rows = self.rows
        delete_when = self.run.settings.delete_when
        if delete_when is not None:
            rows = replace(rows, sql=without_deleted_rows(rows.sql, delete_when))
        if self.counts_keys:
            self.run.count_keys(rows.sql, rows.schema, first_build=True)
        if self.replaced is None:
            return self.run.build_sql(self.run.typed(rows))
        return self.run.replacement_sql(rows, self.replaced)

    def write(self) -> None:
        record_state(self.run, self.run.model.sql, built=True)


@dataclass(frozen=True)
class ChunkedRebuild:
    """The whole history written in time chunks into an empty table replacing one of
    schema `replaced` (None: the table replaced by an earlier run, resumed)."""

    run: RunContext
    whole_history: AnalysedQuery
    replaced: Schema | None

    def create_sql(self) -> str:
        if self.replaced is None:
            raise DbtInternalError(f"{self.run.name}: a resumed rebuild creates no table")
        return self.run.replacement_sql(self.whole_history, self.replaced, empty=True)

    def write(self) -> IncrementalResponse:
        response = write_chunks(self.run, self.whole_history)
        record_state(self.run, self.whole_history.sql)
        return response


def executor_for(plan: RunPlan, run: RunContext, whole_history: AnalysedQuery | None) -> Executor:
    """The executor of the plan's action: the one place a run dispatches on it.
    `whole_history`: the model's whole-history query (the actions that need it)."""
    table = plan.table
    if table is None:  # BUILD, the one action planned without a table
        return CreateTable(run, run.model, None, plan.counts_keys)
    if plan.action is Action.APPLY:
        return Apply(run, plan, table, whole_history)
    if plan.action is Action.RECREATE_EMPTY:
        return CreateTable(run, run.model, table.schema, plan.counts_keys)
    assert whole_history is not None, "use_whole_history() comes first"
    if plan.action is Action.REBUILD:
        return CreateTable(run, whole_history, table.schema, plan.counts_keys)
    starting = plan.action is Action.REBUILD_IN_CHUNKS
    return ChunkedRebuild(run, whole_history, table.schema if starting else None)
