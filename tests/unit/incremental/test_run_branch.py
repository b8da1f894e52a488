"""A run branch's name, which says whose it is, the branches a new run removes as left by
killed runs, and the loser's sentence (pure parts of incremental/run_branch.py)."""

from __future__ import annotations

from dbt.adapters.s3tables.catalogs.table_changes import Commit, MainMoved
from dbt.adapters.s3tables.incremental.run_branch import (
    ABANDONED_AFTER_SECONDS,
    RUN_BRANCH_PREFIX,
    conflict_error,
    host_mark,
    rebasable,
    run_branch_name,
    stale_run_branches,
)

NOW = 1_800_000_000.0


def test_a_name_says_the_machine_the_process_and_the_time() -> None:
    name = run_branch_name("builder-7.example.com", 4242, NOW)
    assert name.startswith(f"{RUN_BRANCH_PREFIX}{host_mark('builder-7.example.com')}_4242_")
    assert name != run_branch_name("builder-7.example.com", 4242, NOW)  # random part


def test_only_branches_of_gone_processes_or_a_day_old_elsewhere_are_stale() -> None:
    here, alive = "here", {1}
    mine_alive = run_branch_name(here, 1, NOW)
    mine_gone = run_branch_name(here, 2, NOW)
    elsewhere_recent = run_branch_name("there", 3, NOW - 60)
    elsewhere_old = run_branch_name("there", 3, NOW - ABANDONED_AFTER_SECONDS - 1)
    others = ["main", "dbt_audit_x", f"{RUN_BRANCH_PREFIX}not_a_run"]
    stale = stale_run_branches(
        [mine_alive, mine_gone, elsewhere_recent, elsewhere_old, *others],
        NOW,
        here,
        lambda pid: pid in alive,
    )
    assert stale == [mine_gone, elsewhere_old]


def test_only_commits_that_change_no_row_or_are_the_runs_own_are_no_conflict() -> None:
    compaction, own = Commit("replace"), Commit("append", "inv-1", "model.p.m")
    assert rebasable(MainMoved(5, [compaction, own]), "inv-1", "model.p.m")
    other_node = Commit("append", "inv-1", "model.p.other")
    for since in ([compaction, Commit("append")], [other_node], None):
        assert not rebasable(MainMoved(5, since), "inv-1", "model.p.m")
    assert not rebasable(
        MainMoved(5, [Commit("append", "inv-0", "model.p.m")]), "inv-1", "model.p.m"
    )


def test_the_losers_sentence_names_the_model_the_winner_and_the_fix() -> None:
    moved = MainMoved(11, [Commit("append", "inv-1", "model.p.m")])
    text = str(conflict_error("orders", 10, moved, "is_incremental()"))
    assert "Model `orders`" in text and "snapshot 10" in text and "run inv-1" in text
    assert "nothing was written" in text and "dbt retry" in text
    outside = str(conflict_error("orders", 10, MainMoved(11, [Commit("overwrite")]), "x"))
    assert "a writer outside this run" in outside
    rolled_back = str(conflict_error("orders", 10, MainMoved(9, None), "x"))
    assert "rolled back or replaced" in rolled_back
