"""The state a successful run leaves on its table for the next one (the properties of
model_state.py: strategy, keys, hashes, the last processed watermark value), written
after the run's data commit; under write-audit-publish, kept for the publish instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dbt.adapters.s3tables.incremental.model_state import (
    REBUILD_PLAN,
    RETIRED,
    STATE_KEYS,
    state_properties,
)
from dbt.adapters.s3tables.sql.text import quote, sql_string

if TYPE_CHECKING:
    from dbt.adapters.s3tables.incremental.context import RunContext


@dataclass(frozen=True)
class ProcessedRows:
    """The rows this run's statement read (a query over them), and the `watermark_column`
    value the table recorded before the run (None: none)."""

    sql: str
    recorded: str | None
    # The value to record, when the pass that counted the rows' keys computed it.
    greatest: str | None = None


def record_state(
    run: RunContext,
    model_sql: str,
    properties: Mapping[str, str] | None = None,
    processed: ProcessedRows | None = None,
    *,
    built: bool = False,
) -> None:
    """Keep the strategy, keys, hashes and last processed watermark on the table, for
    the next run to compare with (table properties: no data change, no snapshot).
    `properties`: the table's current ones, when this run already read them. A run of
    dbt's `--empty` or `--sample` records nothing; one that `built` the table (created
    it, or replaced it: Iceberg's REPLACE keeps the properties) removes the state the
    replaced rows left, whose `last_processed_value` would make the next run skip every
    row up to it."""
    if not run.records_state:
        if built:
            run.table.set_properties(properties, {}, remove=STATE_KEYS)
        return
    last_value = None
    if run.settings.watermark_column:
        last_value = last_processed_value(run, run.settings.watermark_column, processed)
    state = state_properties(run.settings, model_sql, last_value)
    if run.keep_state is not None:
        run.keep_state(state, (REBUILD_PLAN, *RETIRED))
        return
    run.table.set_properties(properties, state, remove=(REBUILD_PLAN, *RETIRED))


def greatest_processed_sql(run: RunContext, name: str, recorded: str | None) -> str | None:
    """The aggregate (over processed rows) that gives the `watermark_column` (`name`) value
    to record: the recorded one raised by the rows' greatest, as a string. None when none
    was recorded or the model's rows lack the column: the table's own greatest is taken."""
    field = next((f for f in run.model.schema.fields if f.name.lower() == name.lower()), None)
    if recorded is None or field is None:
        return None
    # GREATEST skips NULL: no rows with a value keep the recorded one.
    floor = f"CAST({sql_string(recorded)} AS {field.dataType.simpleString()})"
    return f"CAST(GREATEST(MAX({quote(name)}), {floor}) AS STRING)"


def written_table(run: RunContext) -> str:
    """The table as the run leaves it: its run's branch once written (before its publish),
    else main (a run that committed nothing never opened its branch)."""
    branch = run.run_branch
    if branch is not None and not branch.opened:
        return str(branch.target)
    return str(run.table)


def last_processed_value(run: RunContext, name: str, processed: ProcessedRows | None) -> str | None:
    """The greatest `watermark_column` (`name`) value the model has processed: the one
    recorded before this run, raised by this run's rows (a scan of those rows, not of the
    table, unless the pass counting their keys gave it); the table's own greatest value
    when none was recorded."""
    if processed is not None and processed.greatest is not None:
        return processed.greatest
    aggregate = greatest_processed_sql(run, name, processed.recorded if processed else None)
    if processed is None or aggregate is None:
        sql = f"SELECT CAST(MAX({quote(name)}) AS STRING) FROM {written_table(run)}"
    else:
        sql = f"SELECT {aggregate} FROM ({processed.sql})"
    value: str | None = run.table.warehouse.fetch(sql)[0][0]
    return value
