"""The loop of a chunked rebuild (`on_schema_change: full_incremental_refresh`): read
how far the table's rebuild got, then write the model's whole history into it one INSERT
(one commit) per time chunk still missing. The chunk plan, windows and SQL are the pure
functions of chunked_refresh.py.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.s3tables.incremental.chunked_refresh import (
    ChunkPlan,
    Progress,
    chunk_sql,
    chunk_starts_sql,
    chunk_windows,
    progress_sql,
)
from dbt.adapters.s3tables.incremental.commit_counts import IncrementalResponse
from dbt.adapters.s3tables.incremental.model_state import REBUILD_PLAN
from dbt.adapters.s3tables.incremental.run_branch import RunBranch
from dbt.adapters.s3tables.incremental.statement_parts import IncrementalWrite
from dbt.adapters.s3tables.incremental.strategies import append_sql

if TYPE_CHECKING:
    from dbt.adapters.s3tables.catalogs.table_changes import TableState
    from dbt.adapters.s3tables.incremental.context import RunContext
    from dbt.adapters.s3tables.incremental.warehouse import AnalysedQuery

logger = AdapterLogger("s3tables")


def write_chunks(run: RunContext, whole_history: AnalysedQuery) -> IncrementalResponse:
    """Write the model's whole history into the (replaced) table, one INSERT per chunk,
    after the chunks the table already holds, following the plan the table keeps."""
    table, fetch = run.table, run.table.warehouse.fetch
    state = table.state()
    plan = ChunkPlan.from_property(state.properties[REBUILD_PLAN])
    table_columns = [c.name for c in state.columns]
    table_event_time = next(
        (c for c in table_columns if c.lower() == plan.event_time.lower()), plan.event_time
    )
    count, last_chunk = fetch(progress_sql(str(table), table_event_time, plan))[0]
    progress = Progress.from_table(int(count), last_chunk, plan.chunk)
    if progress.started:
        logger.info(
            f"{run.name}: resuming full_incremental_refresh at "
            f"{progress.resume_from or 'the rows with an event time'} "
            f"({count} rows already committed)"
        )
    starts = fetch(chunk_starts_sql(whole_history.sql, plan, progress))
    windows = chunk_windows([row[0] for row in starts], progress)
    source_columns = whole_history.columns + run.settings.history_columns
    branch = chunk_branch(run, state.snapshot_id)
    target = str(branch.relation) if branch is not None else str(table)
    inserted = 0
    for number, window in enumerate(windows, start=1):
        write = IncrementalWrite(
            target=target,
            source_sql=run.build_sql(chunk_sql(whole_history.sql, plan.event_time, window)),
            target_columns=table_columns,
            source_columns=source_columns,
        )
        started = time.monotonic()
        try:
            rows = write_chunk(run, branch, append_sql(write))
        except Exception as error:
            raise DbtRuntimeError(
                f"{run.name}: full_incremental_refresh stopped in chunk {number}/"
                f"{len(windows)} {window.describe()}; the chunks before it are committed "
                f"and the next run resumes with this one. Cause: {error}"
            ) from error
        inserted += rows
        logger.info(
            f"{run.name}: chunk {number}/{len(windows)} {window.describe()}: "
            f"{rows} rows committed in {time.monotonic() - started:.1f}s"
        )
    return IncrementalResponse(
        _message=f"FULL INCREMENTAL REFRESH {inserted} inserted in {len(windows)} chunks",
        code="FULL_INCREMENTAL_REFRESH",
        rows_affected=inserted,
        rows_inserted=inserted,
        rows_updated=0,
        rows_deleted=0,
        snapshot_id=None,
    )


def chunk_branch(run: RunContext, base: int | None) -> RunBranch | None:
    """The branch each chunk is written through: a chunk follows the table's state (the
    chunks already committed), so two rebuilds at once must not both append it (None: the
    table has no snapshot to branch from)."""
    if base is None:
        return None
    table = run.table
    return RunBranch(
        run.name,
        run.node,
        table.relation,
        table.warehouse.iceberg,
        base,
        "the rebuild's progress",
    )


def write_chunk(run: RunContext, branch: RunBranch | None, sql: str) -> int:
    """One chunk's INSERT, its rows published into main only from the snapshot the chunk
    followed (run_branch.py); the rows it committed."""
    table = run.table
    if branch is None:
        run.execute_write(sql)
        return int(table.state().summary.get("added-records", 0))

    def insert() -> TableState:
        run.execute_write(sql)
        return table.warehouse.iceberg.table_state(table.namespace, table.name, branch.name)

    written = branch.written_through(insert, lambda _: {})
    assert written.snapshot_id is not None, "a chunk's INSERT commits"
    branch.base = written.snapshot_id  # the next chunk follows this one
    return int(written.summary.get("added-records", 0))
