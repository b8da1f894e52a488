"""The plan of a run-level undo, per table, from its snapshot log (no Spark)."""

from __future__ import annotations

from dbt.adapters.s3tables.catalogs.snapshots import SnapshotEntry
from dbt.adapters.s3tables.lifecycle.undo import UndoStep, plan_undo, restored_state, undo_sql

RUN = "run-2"


def log(*entries: tuple) -> list[SnapshotEntry]:
    """A linear history: each snapshot's parent is the one before it, its sequence number
    its place; an entry is (snapshot, run) or (snapshot, run, operation)."""
    parents = [None] + [entry[0] for entry in entries[:-1]]
    return [
        SnapshotEntry(entry[0], entry[1], parent, entry[2] if len(entry) > 2 else "overwrite", n)
        for n, (entry, parent) in enumerate(zip(entries, parents, strict=True), start=1)
    ]


def plan(history: list[SnapshotEntry]) -> UndoStep | None:
    return plan_undo("t", history, history[-1].snapshot_id, RUN)


def test_a_table_the_run_did_not_change_has_no_step() -> None:
    assert plan(log((1, "run-1"))) is None


def test_the_runs_commits_are_undone_back_to_the_snapshot_before_its_first() -> None:
    assert plan(log((1, "run-1"), (2, RUN), (3, RUN))) == UndoStep("t", "restore", snapshot_id=1)


def test_a_table_changed_since_is_refused_naming_the_later_run_and_the_fix() -> None:
    step = plan(log((1, "run-1"), (2, RUN), (3, "run-3")))
    assert step is not None and step.action == "refuse"
    assert step.describe() == "t: refused, its rows were changed since by run run-3"
    assert step.fix.startswith("undo run run-3 first")


def test_a_commit_made_outside_dbt_is_refused_without_blaming_a_run() -> None:
    step = plan(log((1, "run-1"), (2, RUN), (3, None)))
    assert step is not None and "a writer outside dbt (snapshot 3" in step.reason
    assert "undo run" not in step.fix


def test_later_compactions_are_gone_back_across() -> None:
    history = log((1, "run-1"), (2, RUN), (3, None, "replace"), (4, "run-9", "replace"))
    step = plan(history)
    assert step == UndoStep("t", "restore", snapshot_id=1, rewrites_after=2)
    assert step is not None and "across 2 later compaction commit(s)" in step.describe()


def test_a_later_run_undone_since_is_no_reason_to_refuse() -> None:
    # run-3 changed the table after RUN, then was undone back to snapshot 3.
    history = log((1, "run-1"), (2, RUN), (3, None, "replace"), (4, "run-3"))
    history.append(SnapshotEntry(3, None, 2, "replace", 3))
    step = plan(history)
    assert step == UndoStep("t", "restore", snapshot_id=1, rewrites_after=1)


def test_a_table_created_by_the_run_is_dropped() -> None:
    assert plan(log((1, RUN), (2, RUN))) == UndoStep("t", "drop")


def test_a_table_whose_state_before_the_run_expired_is_refused_saying_so() -> None:
    # The first logged snapshot is the run's, but not the table's first commit ever (a
    # `table` model's replace has no parent; its sequence number tells).
    for entry in (
        SnapshotEntry(5, RUN, parent_id=4, sequence_number=5),
        SnapshotEntry(5, RUN, parent_id=None, sequence_number=5),
    ):
        step = plan([entry])
        assert step is not None and step.action == "refuse"
        assert "its state before the run has expired" in step.reason
    gone = [SnapshotEntry(1, None, exists=False), *log((2, RUN))[0:1]]
    step = plan_undo("t", gone, 2, RUN)
    assert step is not None and "expired" in step.reason


def test_an_undone_run_changes_nothing_again() -> None:
    # Setting the current snapshot back logs the old snapshot again.
    history = log((1, "run-1"), (2, RUN)) + [SnapshotEntry(1, "run-1", None, "overwrite", 1)]
    step = plan(history)
    assert step == UndoStep("t", "none")
    assert undo_sql("local", "s", "t", step) is None


def test_a_current_snapshot_missing_from_the_log_is_refused() -> None:
    step = plan_undo("t", log((1, "run-1"), (2, RUN)), 9, RUN)
    assert step is not None and step.action == "refuse"


def test_statements_quote_every_name() -> None:
    restore = UndoStep("t", "restore", snapshot_id=7)
    assert undo_sql("local", "my`s", "t", restore) == (
        "CALL `local`.system.set_current_snapshot(table => '`my``s`.`t`', snapshot_id => 7)"
    )
    assert undo_sql("local", "s", "t", UndoStep("t", "drop")) == (
        "DROP TABLE `local`.`s`.`t` PURGE"
    )


def test_a_restore_sets_the_run_state_back_and_leaves_other_properties() -> None:
    before = {
        "dbt.s3tables.last_processed_value": "3",
        "dbt.read.local.s.events": "u@1;on=10",
        "owner": "old",
    }
    current = {
        "dbt.s3tables.last_processed_value": "6",
        "dbt.read.local.s.events": "u@2;on=11",
        "dbt.read.local.s.other": "v@5;on=11",
        "dbt.s3tables.audit.dbt_audit_x": "{}",
        "owner": "new",
    }
    wanted, remove = restored_state(current, before)
    assert wanted == {
        "dbt.s3tables.last_processed_value": "3",
        "dbt.read.local.s.events": "u@1;on=10",
    }
    # An audit's record of a build in flight, and the table's own properties, stay.
    assert remove == ("dbt.read.local.s.other",)
    assert restored_state(before, before) == ({}, ())


def test_a_restore_step_knows_when_the_run_began() -> None:
    log = [
        SnapshotEntry(1, None, None, "append", 1, timestamp_ms=100),
        SnapshotEntry(2, "run", 1, "append", 2, timestamp_ms=200),
    ]
    step = plan_undo("t", log, 2, "run")
    assert step is not None and step.snapshot_id == 1 and step.run_started_ms == 200
