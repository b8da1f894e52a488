"""Run-level undo: every table one dbt invocation changed, back to its state before it.

Each commit carries its invocation in the snapshot summary (`engines/commit_tags.py`).
For one table, the plan (pure, from its snapshot log) is:

- the run's commits must be the newest entries of the log: a table changed since by
  another run (or by anything else) is refused by name, never overwritten blindly;
- its state before the run is the log entry just before the run's first commit: the table
  is set back to that snapshot (Iceberg keeps it; the run's snapshots stay in history);
- a table already back at that snapshot (undone before) is left as it is;
- a table whose first snapshot is the run's (and has no parent) was created by it, and is
  dropped; one whose earlier snapshots have expired is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from dbt.adapters.s3tables.sql_text import procedure_call, quote

# The snapshot summary keys every commit of the adapter's in-process engine carries.
INVOCATION_KEY = "dbt.invocation_id"
NODE_KEY = "dbt.unique_id"

UndoAction = Literal["restore", "drop", "refuse", "none"]


@dataclass(frozen=True)
class SnapshotEntry:
    """One entry of a table's snapshot log, oldest first."""

    snapshot_id: int
    invocation_id: str | None
    parent_id: int | None = None


@dataclass(frozen=True)
class UndoStep:
    table: str
    action: UndoAction
    # restore: the snapshot the table goes back to.
    snapshot_id: int | None = None
    # refuse: why.
    reason: str = ""

    def describe(self) -> str:
        if self.action == "restore":
            return f"{self.table}: back to snapshot {self.snapshot_id}"
        if self.action == "drop":
            return f"{self.table}: dropped (created by this run)"
        if self.action == "none":
            return f"{self.table}: already at its state before the run"
        return f"{self.table}: refused, {self.reason}"


def plan_undo(
    table: str, log: Sequence[SnapshotEntry], current_snapshot_id: int | None, invocation: str
) -> UndoStep | None:
    """What undoing `invocation` does to this table (None: the run did not change it)."""
    if not any(entry.invocation_id == invocation for entry in log):
        return None
    if not log or log[-1].snapshot_id != current_snapshot_id:
        return UndoStep(table, "refuse", reason="its current snapshot is not in its log")
    first = next(i for i, entry in enumerate(log) if entry.invocation_id == invocation)
    if first > 0 and log[first - 1].snapshot_id == current_snapshot_id:
        return UndoStep(table, "none")  # undone before: setting a snapshot is logged too
    later = [entry for entry in log[first:] if entry.invocation_id != invocation]
    if later:
        by = later[-1].invocation_id or "a writer outside dbt"
        return UndoStep(table, "refuse", reason=f"changed since by run {by}")
    if first == 0:
        if log[0].parent_id is not None:
            return UndoStep(table, "refuse", reason="its state before the run has expired")
        return UndoStep(table, "drop")
    return UndoStep(table, "restore", snapshot_id=log[first - 1].snapshot_id)


def undo_sql(catalog: str, namespace: str, name: str, step: UndoStep) -> str | None:
    """The statement carrying out `step` on the table (None: nothing to do)."""
    if step.action == "restore":
        return procedure_call(
            catalog, namespace, name, "set_current_snapshot", f"snapshot_id => {step.snapshot_id}"
        )
    if step.action == "drop":
        return f"DROP TABLE {quote(catalog)}.{quote(namespace)}.{quote(name)} PURGE"
    return None
