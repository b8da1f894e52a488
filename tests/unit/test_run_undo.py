"""The plan of a run-level undo, per table, from its snapshot log (no Spark)."""

from __future__ import annotations

from dbt.adapters.s3tables.run_undo import SnapshotEntry, UndoStep, plan_undo, undo_sql

RUN = "run-2"


def log(*entries: tuple[int, str | None]) -> list[SnapshotEntry]:
    """Entries of a linear history: each snapshot's parent is the one before it."""
    parents = [None] + [snapshot for snapshot, _ in entries[:-1]]
    return [
        SnapshotEntry(snapshot, run, parent)
        for (snapshot, run), parent in zip(entries, parents, strict=True)
    ]


def test_a_table_the_run_did_not_change_has_no_step() -> None:
    assert plan_undo("t", log((1, "run-1")), 1, RUN) is None


def test_the_runs_commits_are_undone_back_to_the_snapshot_before_its_first() -> None:
    history = log((1, "run-1"), (2, RUN), (3, RUN))
    assert plan_undo("t", history, 3, RUN) == UndoStep("t", "restore", snapshot_id=1)


def test_a_table_changed_since_is_refused_naming_the_later_run() -> None:
    step = plan_undo("t", log((1, "run-1"), (2, RUN), (3, "run-3")), 3, RUN)
    assert step is not None and step.action == "refuse"
    assert step.describe() == "t: refused, changed since by run run-3"


def test_a_commit_made_outside_dbt_is_refused_too() -> None:
    step = plan_undo("t", log((1, "run-1"), (2, RUN), (3, None)), 3, RUN)
    assert step is not None and "a writer outside dbt" in step.reason


def test_a_table_created_by_the_run_is_dropped() -> None:
    assert plan_undo("t", log((1, RUN), (2, RUN)), 2, RUN) == UndoStep("t", "drop")


def test_a_table_whose_earlier_history_expired_is_refused() -> None:
    # The first kept snapshot has a parent: the table existed before, its state expired.
    history = [SnapshotEntry(5, RUN, parent_id=4)]
    step = plan_undo("t", history, 5, RUN)
    assert step is not None and step.action == "refuse" and "expired" in step.reason


def test_a_current_snapshot_missing_from_the_log_is_refused() -> None:
    step = plan_undo("t", log((1, "run-1"), (2, RUN)), 9, RUN)
    assert step is not None and step.action == "refuse"


def test_an_undo_run_again_changes_nothing() -> None:
    # Setting the current snapshot back logs the old snapshot again.
    history = log((1, "run-1"), (2, RUN)) + [SnapshotEntry(1, "run-1", None)]
    step = plan_undo("t", history, 1, RUN)
    assert step == UndoStep("t", "none")
    assert undo_sql("local", "s", "t", step) is None


def test_statements_quote_every_name() -> None:
    restore = UndoStep("t", "restore", snapshot_id=7)
    assert undo_sql("local", "my`s", "t", restore) == (
        "CALL `local`.system.set_current_snapshot(table => '`my``s`.`t`', snapshot_id => 7)"
    )
    assert undo_sql("local", "s", "t", UndoStep("t", "drop")) == (
        "DROP TABLE `local`.`s`.`t` PURGE"
    )
