"""The SQL of a keyed read's row changes: each end of the range scanned once, rows compared
whole, one change per key; whole snapshots window only the changed keys' rows, the few rows
of the changed files are shuffled once, by key."""

from __future__ import annotations

import pytest

from dbt.adapters.s3tables.incremental.upstream_changes import row_changes_sql

BEFORE = "`s`.`customers` VERSION AS OF 1"
AFTER = "`s`.`customers` VERSION AS OF 2"


@pytest.mark.parametrize("whole_snapshots", [True, False])
def test_each_end_is_scanned_once_and_rows_are_counted_whole(whole_snapshots: bool) -> None:
    sql = row_changes_sql(BEFORE, AFTER, ["id", "name"], ["id"], whole_snapshots)
    assert sql.count(f"FROM {BEFORE}") == 1 and sql.count(f"FROM {AFTER}") == 1
    assert "GROUP BY `id`, `name`)" in sql
    assert "EXCEPT" not in sql


def test_whole_snapshots_window_only_the_changed_keys_rows() -> None:
    sql = row_changes_sql(BEFORE, AFTER, ["a", "b", "v"], ["a", "b"], whole_snapshots=True)
    assert (
        "dbt_changed AS (SELECT DISTINCT `a`, `b` FROM dbt_rows WHERE dbt_after <> dbt_before)"
        in sql
    )
    assert (
        "FROM dbt_rows LEFT SEMI JOIN dbt_changed ON dbt_rows.`a` <=> dbt_changed.`a` AND "
        "dbt_rows.`b` <=> dbt_changed.`b`)" in sql
    )
    assert "sum(dbt_after) OVER (PARTITION BY `a`, `b`) AS dbt_key_after" in sql
    assert "DISTRIBUTE BY" not in sql


def test_changed_files_rows_are_shuffled_once_by_key() -> None:
    sql = row_changes_sql(BEFORE, AFTER, ["a", "b", "v"], ["a", "b"], whole_snapshots=False)
    # Partitioned by the key before the grouping by every column, which keeps it; the
    # key's changed flag is a window in the same partitioning, not a join.
    assert "AS dbt_both DISTRIBUTE BY `a`, `b`) AS dbt_by_key\nGROUP BY `a`, `b`, `v`)" in sql
    assert (
        "max(CASE WHEN dbt_after <> dbt_before THEN 1 ELSE 0 END) "
        "OVER (PARTITION BY `a`, `b`) AS dbt_key_changed" in sql
    )
    assert "JOIN" not in sql and "DISTINCT" not in sql
    assert "WHERE dbt_key_changed = 1 AND (" in sql


@pytest.mark.parametrize("whole_snapshots", [True, False])
def test_a_key_is_deleted_only_when_no_row_of_it_is_left(whole_snapshots: bool) -> None:
    sql = row_changes_sql(BEFORE, AFTER, ["id", "v"], ["id"], whole_snapshots)
    assert (
        "CASE WHEN dbt_key_after = 0 THEN 'DELETE' WHEN dbt_key_before = 0 THEN 'INSERT' "
        "ELSE 'UPDATE' END AS _change_type" in sql
    )
    # A kept key gives each of its rows at the end (all of them, as often as held); a
    # deleted key its rows at the start.
    assert sql.endswith(
        "((dbt_key_after > 0 AND dbt_after > 0) OR (dbt_key_after = 0 AND dbt_before > 0))"
    )
