"""Run-level undo: every table one dbt invocation changed, back to its state before it.

Each commit carries its invocation in the snapshot summary (`engines/commit_tags.py`).
For one table, the plan (pure) reads its snapshot log: the states the table went through,
in order. A later entry that sets the table back to a state the log already named (an
undo, a rollback) drops the entries after that state: what remains is the history that
led to the current state. Then:

- the run's commits must be the newest in that history, except for later `replace`
  commits: Iceberg's name for a rewrite that changes no row (compaction, by this
  adapter's maintenance or by S3 Tables itself), which the undo goes back across. A table
  whose rows were changed since by another run (or by anything else) is refused by name,
  never overwritten blindly, with the fix that applies;
- its state before the run is the entry just before the run's first commit: the table is
  set back to that snapshot (Iceberg keeps it; the run's snapshots stay in history);
- a table whose history no longer holds the run's commits (undone before) is left as it
  is;
- a table whose first snapshot is the run's and was the table's first commit ever was
  created by it, and is dropped; one whose state before the run has expired is refused;
- a restored table's run state (its incremental state such as `last_processed_value()`,
  its records of what it read of its upstreams) is set back to what its metadata held
  just before the run's first commit (`restored_state`), read from the table's metadata
  log.

(Maintenance commits cannot carry the run's tags: Iceberg's SQL procedures take no
snapshot properties. Their operation tells them apart.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from dbt.adapters.s3tables.catalogs.snapshots import SnapshotEntry
from dbt.adapters.s3tables.incremental.model_state import STATE_KEYS
from dbt.adapters.s3tables.incremental.upstream_reads import READ_TAG_PREFIX
from dbt.adapters.s3tables.sql.text import procedure_call, table_identifier

# Iceberg's operation of a commit that rewrites files without changing any row.
REWRITE_OPERATION = "replace"

UndoAction = Literal["restore", "drop", "refuse", "none"]


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
    # restore: when the run's first commit to the table was made (its state before it is
    # the table's metadata just before then).
    run_started_ms: int = 0

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


def _changed_by(entry: SnapshotEntry, table: str, what: str) -> UndoStep:
    """The refusal naming who changed (or replaced) the table since the run."""
    if entry.invocation_id is not None:
        return UndoStep(
            table,
            "refuse",
            reason=f"{what} since by run {entry.invocation_id}",
            fix=f"undo run {entry.invocation_id} first (later runs before earlier ones)",
        )
    return UndoStep(
        table,
        "refuse",
        reason=(
            f"{what} since by a writer outside dbt (snapshot {entry.snapshot_id}, "
            f"operation {entry.operation or 'unknown'})"
        ),
        fix="only that writer's change can be undone first, by hand (CALL "
        "<catalog>.system.set_current_snapshot), or leave the table as it is",
    )


def effective_history(log: Sequence[SnapshotEntry]) -> list[SnapshotEntry]:
    """The log's entries that led to the current state (see the module docstring)."""
    history: list[SnapshotEntry] = []
    for entry in log:
        earlier = next(
            (i for i, e in enumerate(history) if e.snapshot_id == entry.snapshot_id), None
        )
        if earlier is None:
            history.append(entry)
        else:
            del history[earlier + 1 :]
    return history


def plan_undo(
    table: str, log: Sequence[SnapshotEntry], current_snapshot_id: int | None, invocation: str
) -> UndoStep | None:
    """What undoing `invocation` does to this table (None: the run did not change it)."""
    if not any(entry.invocation_id == invocation for entry in log):
        return None
    history = effective_history(log)
    if not history or history[-1].snapshot_id != current_snapshot_id:
        return UndoStep(
            table,
            "refuse",
            reason="its current snapshot is not in its log",
            fix="set the table's snapshot by hand (CALL <catalog>.system.set_current_snapshot)",
        )
    if not any(entry.invocation_id == invocation for entry in history):
        return UndoStep(table, "none")  # undone before: the log went back past the run
    first = next(i for i, entry in enumerate(history) if entry.invocation_id == invocation)
    later = [entry for entry in history[first:] if entry.invocation_id != invocation]
    changed = [entry for entry in later if entry.operation != REWRITE_OPERATION]
    if changed:
        return _changed_by(changed[-1], table, "its rows were changed")
    expired = "its state before the run has expired (snapshot expiry removed it)"
    no_fix = "none: the snapshot is gone; rebuild the model if its state before the run matters"
    if first == 0:
        if not history[0].creates_the_table:
            return UndoStep(table, "refuse", reason=expired, fix=no_fix)
        return UndoStep(table, "drop")
    before = history[first - 1]
    if not before.exists:
        return UndoStep(table, "refuse", reason=expired, fix=no_fix)
    return UndoStep(
        table,
        "restore",
        snapshot_id=before.snapshot_id,
        rewrites_after=len(later),
        run_started_ms=history[first].timestamp_ms,
    )


def is_run_state(key: str) -> bool:
    """Whether a table property is state a run keeps (an incremental model's state, what
    it read of its upstreams), which an undo of the run sets back with the data; not an
    audit's record of a build in flight."""
    return key in STATE_KEYS or key.startswith(READ_TAG_PREFIX)


def restored_state(
    current: Mapping[str, str], before: Mapping[str, str]
) -> tuple[dict[str, str], tuple[str, ...]]:
    """The run state to set back, and to remove, so that the table's run state is as it
    was `before` the run (its other properties stay as they are)."""
    wanted = {k: v for k, v in before.items() if is_run_state(k) and current.get(k) != v}
    remove = tuple(sorted(k for k in current if is_run_state(k) and k not in before))
    return wanted, remove


def undo_sql(catalog: str, namespace: str, name: str, step: UndoStep) -> str | None:
    """The statement carrying out `step` on the table (None: nothing to do)."""
    if step.action == "restore":
        return procedure_call(
            catalog, namespace, name, "set_current_snapshot", f"snapshot_id => {step.snapshot_id}"
        )
    if step.action == "drop":
        return f"DROP TABLE {table_identifier(catalog, namespace, name)} PURGE"
    return None
