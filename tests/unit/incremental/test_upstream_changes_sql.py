"""The SQL of a keyed read's row changes: each end of the range scanned once, rows compared
whole, one change per key."""

from __future__ import annotations

from dbt.adapters.s3tables.incremental.upstream_changes import row_changes_sql

BEFORE = "`s`.`customers` VERSION AS OF 1"
AFTER = "`s`.`customers` VERSION AS OF 2"


def test_each_end_is_scanned_once_and_rows_are_grouped_whole() -> None:
    sql = row_changes_sql(BEFORE, AFTER, ["id", "name"], ["id"])
    assert sql.count(f"FROM {BEFORE}") == 1 and sql.count(f"FROM {AFTER}") == 1
    assert "GROUP BY `id`, `name` HAVING sum(dbt_side) <> 0" in sql
    assert "EXCEPT" not in sql


def test_changes_are_typed_per_key() -> None:
    sql = row_changes_sql(BEFORE, AFTER, ["a", "b", "v"], ["a", "b"])
    assert sql.startswith(
        "SELECT `a`, `b`, `v`, CASE WHEN dbt_net < 0 THEN 'DELETE' WHEN dbt_key_removed "
        "THEN 'UPDATE' ELSE 'INSERT' END AS _change_type"
    )
    assert "max(dbt_net < 0) OVER (PARTITION BY `a`, `b`) AS dbt_key_removed" in sql
    # A removed row is its key's DELETE only when the key has no added row.
    assert sql.endswith("WHERE dbt_net > 0 OR NOT dbt_key_added")
