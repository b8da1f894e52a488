"""SQL of the incremental strategies, built from names only."""

from __future__ import annotations

import re
from typing import Any

import pytest

from dbt.adapters.s3tables.incremental.statement_parts import (
    IncrementalWrite,
    without_deleted_rows,
)
from dbt.adapters.s3tables.incremental.strategies import (
    append_sql,
    delete_insert_sql,
    merge_fallback_sql,
    merge_sql,
    scd2_sql,
)
from dbt.adapters.s3tables.sql.text import quote

TARGET = "`analytics`.`orders`"
SOURCE_SQL = "select * from staging"


def write(**overrides: object) -> IncrementalWrite:
    values: dict = {
        "target": TARGET,
        "source_sql": SOURCE_SQL,
        "target_columns": ["id", "amount", "status"],
        "source_columns": ["status", "id", "amount"],
    }
    values.update(overrides)
    return IncrementalWrite(**values)


def select_list(sql: str) -> str:
    return re.search(r"SELECT (.*?) FROM \(", sql, re.S).group(1)


def on_clause(sql: str) -> str:
    return re.search(r"^ON (.*)$", sql, re.M).group(1)


@pytest.mark.parametrize(
    ("name", "quoted"),
    [("id", "`id`"), ("a`b", "`a``b`"), ("``", "``````"), ("with space", "`with space`")],
)
def test_quote_doubles_backticks(name: str, quoted: str) -> None:
    assert quote(name) == quoted


def test_append_lists_columns_in_target_order() -> None:
    sql = append_sql(write())
    assert sql.startswith(f"INSERT INTO {TARGET} (`id`, `amount`, `status`)\n")
    assert select_list(sql) == "`id` AS `id`, `amount` AS `amount`, `status` AS `status`"
    assert f"(\n{SOURCE_SQL}\n)" in sql


def test_target_column_missing_from_source_is_null() -> None:
    sql = append_sql(write(source_columns=["id", "amount"]))
    assert "NULL AS `status`" in select_list(sql)
    assert "`status` AS" not in select_list(sql)


def test_source_column_only_in_source_is_not_written() -> None:
    sql = append_sql(write(source_columns=["id", "amount", "status", "extra"]))
    assert "extra" not in sql


def test_source_columns_match_case_insensitively() -> None:
    w = write(target_columns=["customerid", "name"], source_columns=["Name", "CustomerID"])
    assert w.source_column("customerid") == "CustomerID"
    sql = append_sql(w)
    assert select_list(sql) == "`CustomerID` AS `customerid`, `Name` AS `name`"
    assert "NULL" not in sql


def test_merge_on_null_safe_equality_of_every_key() -> None:
    sql = merge_sql(write(unique_key=["id", "status"]))
    on = on_clause(sql)
    for key in ("id", "status"):
        assert f"DBT_INTERNAL_DEST.`{key}` <=> DBT_INTERNAL_SOURCE.`{key}`" in on
    assert " = " not in on


def test_merge_updates_non_key_columns_and_inserts_all() -> None:
    sql = merge_sql(write(unique_key=["ID"]))
    assert (
        "WHEN MATCHED THEN UPDATE SET DBT_INTERNAL_DEST.`amount` = DBT_INTERNAL_SOURCE.`amount`, "
        in sql
    )
    update = re.search(r"UPDATE SET (.*)$", sql, re.M).group(1)
    assert "`id`" not in update
    assert sql.endswith(
        "WHEN NOT MATCHED THEN INSERT (`id`, `amount`, `status`) "
        "VALUES (DBT_INTERNAL_SOURCE.`id`, DBT_INTERNAL_SOURCE.`amount`, "
        "DBT_INTERNAL_SOURCE.`status`)"
    )


def test_merge_source_is_aligned_to_target() -> None:
    sql = merge_sql(write(unique_key=["id"], source_columns=["ID", "amount"]))
    assert "`ID` AS `id`" in sql
    assert "NULL AS `status`" in sql


def test_incremental_predicates_are_anded_into_on() -> None:
    predicates = ["DBT_INTERNAL_DEST.day >= '2024-01-01'", "DBT_INTERNAL_SOURCE.amount > 0 OR true"]
    on = on_clause(merge_sql(write(unique_key=["id"], predicates=predicates)))
    assert on == (
        "(DBT_INTERNAL_DEST.`id` <=> DBT_INTERNAL_SOURCE.`id`) "
        "AND (DBT_INTERNAL_DEST.day >= '2024-01-01') "
        "AND (DBT_INTERNAL_SOURCE.amount > 0 OR true)"
    )


def test_merge_with_only_key_columns_has_no_update() -> None:
    sql = merge_sql(write(target_columns=["id"], source_columns=["id"], unique_key=["id"]))
    assert "WHEN MATCHED" not in sql
    assert "UPDATE" not in sql
    assert "WHEN NOT MATCHED THEN INSERT (`id`)" in sql


@pytest.mark.parametrize("build", [append_sql, merge_sql])
def test_exactly_one_statement(build) -> None:
    sql = build(write(unique_key=["id"]))
    assert ";" not in sql
    assert sql.count("INSERT") == 1


@pytest.mark.parametrize("build", [append_sql, merge_sql])
def test_source_ending_in_line_comment_keeps_statement_intact(build) -> None:
    # dbt's Jinja drops the model file's trailing newline, so a model whose last line is a
    # `-- comment` reaches here without one; the closing `) AS ...` must not be swallowed.
    source_sql = "select 1 as id, 2 as amount, 'x' as status\n-- where id > 10"
    sql = build(write(source_sql=source_sql, unique_key=["id"]))
    without_comments = re.sub(r"--[^\n]*", "", sql)
    assert "AS DBT_INTERNAL_SOURCE_raw" in without_comments
    assert without_comments.count("(") == without_comments.count(")")


def test_merge_deduplicates_its_source_per_key_by_default() -> None:
    sql = merge_sql(write(unique_key=["id"], watermark_column="amount"))
    assert "PARTITION BY `id` ORDER BY `amount` DESC NULLS LAST" in sql


def test_merge_of_a_unique_source_uses_the_rows_as_they_are() -> None:
    sql = merge_sql(write(unique_key=["id"], watermark_column="amount", source_unique=True))
    assert "ROW_NUMBER" not in sql and "GROUP BY" not in sql
    aligned = "SELECT `id` AS `id`, `amount` AS `amount`, `status` AS `status` FROM ("
    assert f"USING ({aligned}\n{SOURCE_SQL}\n)" in sql


@pytest.mark.parametrize(("source_unique", "distinct"), [(False, True), (True, False)])
def test_delete_insert_delete_rows_are_distinct_unless_the_source_is_unique(
    source_unique: bool, distinct: bool
) -> None:
    sql = delete_insert_sql(write(unique_key=["id"], source_unique=source_unique))
    assert ("SELECT DISTINCT `id`, NULL AS `amount`" in sql) is distinct
    assert "'delete' AS dbt_internal_action" in sql


def test_merge_leaves_a_column_the_model_no_longer_returns_as_it_is() -> None:
    # The table has `status`, the model stopped returning it: matched rows keep theirs,
    # new rows get NULL.
    sql = merge_sql(write(unique_key=["id"], source_columns=["id", "amount"]))
    update = re.search(r"UPDATE SET (.*)$", sql, re.M).group(1)
    assert update == "DBT_INTERNAL_DEST.`amount` = DBT_INTERNAL_SOURCE.`amount`"
    assert "NULL AS `status`" in sql


def test_merge_exclude_path_also_skips_columns_the_model_lacks() -> None:
    w = write(
        unique_key=["id"], source_columns=["id", "amount"], update_columns=["amount", "status"]
    )
    assert w.columns_to_update == ["amount"]


def test_merge_fallback_keeps_a_column_the_model_no_longer_returns() -> None:
    sql = merge_fallback_sql(write(unique_key=["id"], source_columns=["id", "amount"]))
    assert (
        "CASE WHEN DBT_INTERNAL_DEST.dbt_internal_matched THEN DBT_INTERNAL_DEST.`status` "
        "ELSE DBT_INTERNAL_SOURCE.`status` END" in sql
    )
    assert "ELSE DBT_INTERNAL_SOURCE.`amount` END" not in sql


def test_scd2_does_not_compare_a_column_the_model_no_longer_returns() -> None:
    sql = scd2_sql(write(unique_key=["id"], source_columns=["id", "amount"]))
    assert "NOT (DBT_INTERNAL_DEST.`amount` <=> DBT_INTERNAL_SOURCE.`amount`)" in sql
    assert "`status` <=>" not in sql


def test_unqualified_predicate_columns_are_the_targets() -> None:
    on = on_clause(delete_insert_sql(write(unique_key=["id"], predicates=["id != 2"])))
    assert on.endswith("AND (DBT_INTERNAL_DEST.`id` != 2)")


def test_merge_delete_when_deletes_matched_rows_and_never_inserts_them() -> None:
    sql = merge_sql(write(unique_key=["id"], delete_when="status = 'DELETE'"))
    # Evaluated on the model's own row, once, in the merge's source.
    assert "coalesce((status = 'DELETE'), false) AS dbt_internal_delete" in sql
    deletes = "DBT_INTERNAL_SOURCE.dbt_internal_delete"
    clauses = [line for line in sql.splitlines() if line.startswith("WHEN")]
    assert clauses[0] == f"WHEN MATCHED AND {deletes} THEN DELETE"
    assert clauses[1].startswith("WHEN MATCHED THEN UPDATE SET")
    assert clauses[2].startswith(f"WHEN NOT MATCHED AND NOT {deletes} THEN INSERT")
    assert "dbt_internal_delete" not in clauses[2].split("INSERT", 1)[1]


def test_merge_delete_when_sees_a_model_column_the_table_does_not_store() -> None:
    sql = merge_sql(
        write(
            unique_key=["id"],
            target_columns=["id", "amount"],
            source_columns=["id", "amount", "_change_type"],
            delete_when="_change_type = 'DELETE'",
        )
    )
    assert "coalesce((_change_type = 'DELETE'), false) AS dbt_internal_delete" in sql
    assert "`_change_type`" not in sql  # not written to the table


def test_merge_fallback_leaves_out_the_rows_delete_when_deletes() -> None:
    sql = merge_fallback_sql(write(unique_key=["id"], delete_when="status = 'DELETE'"))
    assert "coalesce((status = 'DELETE'), false) AS dbt_internal_delete" in sql
    assert "WHERE NOT DBT_INTERNAL_SOURCE.dbt_internal_delete" in sql


def test_a_created_table_leaves_out_the_rows_delete_when_deletes() -> None:
    sql = without_deleted_rows(SOURCE_SQL, "status = 'DELETE'")
    assert sql == (
        f"SELECT * FROM ({SOURCE_SQL}) AS DBT_INTERNAL_SOURCE\n"
        "WHERE NOT coalesce((status = 'DELETE'), false)"
    )


@pytest.mark.parametrize("statement", [merge_sql, delete_insert_sql])
def test_a_keyed_statement_matches_target_rows_within_the_key_span(statement: Any) -> None:
    span = "DBT_INTERNAL_DEST.`id` BETWEEN CAST('1' AS int) AND CAST('9' AS int)"
    sql = statement(write(unique_key=["id"], key_span=span, predicates=["status = 'x'"]))
    on = on_clause(sql)
    assert f"DBT_INTERNAL_DEST.`id` <=> DBT_INTERNAL_SOURCE.`id` AND {span}" in on
    assert "DBT_INTERNAL_DEST.`status` = 'x'" in on
    assert "BETWEEN" not in statement(write(unique_key=["id"]))
