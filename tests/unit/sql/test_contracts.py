"""Enforced contracts' SQL: the typed column list of a CREATE TABLE declaring the
contract's NOT NULL columns."""

from __future__ import annotations

from dbt.adapters.s3tables.sql.contracts import declared_columns_sql


def test_the_column_list_declares_the_not_null_columns_with_quoted_names() -> None:
    columns = [("id", "int", True), ("the note", "string", False), ("a`b", "array<int>", True)]
    assert declared_columns_sql(columns) == (
        "`id` int NOT NULL, `the note` string, `a``b` array<int> NOT NULL"
    )
