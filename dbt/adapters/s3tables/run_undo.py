"""Run-level undo: every table one dbt invocation changed, back to its state before it.

Each commit carries its invocation in the snapshot summary (`engines/commit_tags.py`).
For one table, the plan (pure, from its snapshot log) is:

- the run's commits must be the newest entries of the log, except for later `replace`
  commits: Iceberg's name for a rewrite that changes no row (compaction, by this
  adapter's maintenance or by S3 Tables itself), which the undo goes back across. A table
  whose rows were changed since by another run (or by anything else) is refused by name,
  never overwritten blindly, with the fix that applies;
- its state before the run is the log entry just before the run's first commit: the table
  is set back to that snapshot (Iceberg keeps it; the run's snapshots stay in history);
- a table already back at that snapshot (undone before) is left as it is;
- a table whose first snapshot is the run's (and has no parent) was created by it, and is
  dropped; one whose state before the run has expired is refused.

(Maintenance commits cannot carry the run's tags: Iceberg's SQL procedures take no
snapshot properties. Their operation tells them apart.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from dbt.adapters.s3tables.sql_text import procedure_call, quote

# The snapshot summary keys every commit of the adapter's in-process engine carries.
INVOCATION_KEY = "dbt.invocation_id"
NODE_KEY = "dbt.unique_id"
# Iceberg's operation of a commit that rewrites files without changing any row.
REWRITE_OPERATION = "replace"

UndoAction = Literal["restore", "drop", "refuse", "none"]


@dataclass(frozen=True)
class SnapshotEntry:
    """One entry of a table's snapshot log, oldest first."""

    snapshot_id: int
    invocation_id: str | None
    parent_id: int | None = None
    # The commit's Iceberg operation (append, overwrite, delete, replace).
    operation: str | None = None
    # False once the snapshot has expired (its log entry can outlive it).
    exists: bool = True


@dataclass(frozen=True)
class UndoStep:
    table: str
    action: UndoAction
    # restore: the snapshot the table goes back to.
    snapshot_id: int | None = None
    # refuse: why, and what to do.
    reason: str = ""
    fix: str = ""
    # restore: the rewrites (compactions) after the run that the restore goes back across.
    rewrites_after: int = 0

    def describe(self) -> str:
        """The step as planned (`planned`: the wording before it is carried out)."""
        if self.action == "restore":
            across = (
                f" (across {self.rewrites_after} later compaction commit(s), which change no row)"
                if self.rewrites_after
                else ""
            )
            return f"{self.table}: back to snapshot {self.snapshot_id}{across}"
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
    changed = [entry for entry in later if entry.operation != REWRITE_OPERATION]
    if changed:
        by = changed[-1].invocation_id
        if by is not None:
            return UndoStep(
                table,
                "refuse",
                reason=f"changed since by run {by}",
                fix=f"undo run {by} first (later runs before earlier ones)",
            )
        return UndoStep(
            table,
            "refuse",
            reason=(
                f"its rows were changed since by a writer outside dbt (snapshot "
                f"{changed[-1].snapshot_id}, operation {changed[-1].operation or 'unknown'})"
            ),
            fix="only that writer's change can be undone first, by hand (CALL "
            "<catalog>.system.set_current_snapshot), or leave the table as it is",
        )
    expired = "its state before the run has expired (snapshot expiry removed it)"
    no_fix = "none: the snapshot is gone; rebuild the model if its state before the run matters"
    if first == 0:
        if log[0].parent_id is not None:
            return UndoStep(table, "refuse", reason=expired, fix=no_fix)
        return UndoStep(table, "drop")
    before = log[first - 1]
    if not before.exists:
        return UndoStep(table, "refuse", reason=expired, fix=no_fix)
    return UndoStep(table, "restore", snapshot_id=before.snapshot_id, rewrites_after=len(later))


def undo_sql(catalog: str, namespace: str, name: str, step: UndoStep) -> str | None:
    """The statement carrying out `step` on the table (None: nothing to do)."""
    if step.action == "restore":
        return procedure_call(
            catalog, namespace, name, "set_current_snapshot", f"snapshot_id => {step.snapshot_id}"
        )
    if step.action == "drop":
        return f"DROP TABLE {quote(catalog)}.{quote(namespace)}.{quote(name)} PURGE"
    return None
