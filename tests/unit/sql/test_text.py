"""Splitting a script into Spark statements (a model's sql_header comes first)."""

from __future__ import annotations

import pytest

from dbt.adapters.s3tables.sql.text import expression_problem, qualify_columns, split_statements


@pytest.mark.parametrize(
    ("script", "statements"),
    [
        ("select 1", ["select 1"]),
        ("select 1;", ["select 1"]),
        (
            '/* {"app": "dbt"} */\nset time zone \'Asia/Kolkata\';\nselect 1',
            ['/* {"app": "dbt"} */\nset time zone \'Asia/Kolkata\'', "select 1"],
        ),
        ("select ';', \"x;y\", `c;d` from t", ["select ';', \"x;y\", `c;d` from t"]),
        ("select 'it\\'s;' as a; select 2", ["select 'it\\'s;' as a", "select 2"]),
        ("select 1 -- a; comment\n, 2", ["select 1 -- a; comment\n, 2"]),
        ("select /* a; b */ 1; ; -- trailing\n", ["select /* a; b */ 1"]),
        ("select `a``;b` from t", ["select `a``;b` from t"]),
        ("  ", []),
    ],
)
def test_split_statements(script: str, statements: list[str]) -> None:
    assert split_statements(script) == statements


def test_long_statements_split_in_linear_time() -> None:
    script = "select 1" + " \n" * 20000 + "from t; " + "-- note\n" * 2000
    assert split_statements(script) == ["select 1" + " \n" * 20000 + "from t"]


@pytest.mark.parametrize(
    "predicate",
    [
        "DBT_INTERNAL_DEST.day > date_sub(current_date(), 3)",
        "a = 1 or b = 2",
        "name = 'x) or (1=1'",
        "`odd)name` = 1",
        "name = 'it\\'s'",
        "a in (1, (2))",
    ],
)
def test_one_expression_passes(predicate: str) -> None:
    assert expression_problem(predicate) is None


@pytest.mark.parametrize(
    ("predicate", "problem"),
    [
        ("1=1) OR (1=1", "closes a parenthesis it did not open"),
        ("(a = 1", "leaves a parenthesis open"),
        ("a = 1; drop table t", "contains `;`"),
        ("a = 1 --", "contains a comment"),
        ("a = 1 /* x */", "contains a comment"),
        ("a = 'open", "has an unterminated ' quote"),
        ("  ", "is empty"),
    ],
)
def test_expressions_that_could_escape_their_parentheses(predicate: str, problem: str) -> None:
    assert expression_problem(predicate) == problem


@pytest.mark.parametrize(
    ("predicate", "qualified"),
    [
        ("id != 2", "T.`id` != 2"),
        ("`id` > 1 AND upper(s) = 'id'", "T.`id` > 1 AND upper(T.`s`) = 'id'"),
        ("ID >= date_add(current_date(), -3)", "T.`ID` >= date_add(current_date(), -3)"),
        ("DBT_INTERNAL_DEST.id != 2", "DBT_INTERNAL_DEST.id != 2"),
        ("DBT_INTERNAL_SOURCE.id > 0 OR true", "DBT_INTERNAL_SOURCE.id > 0 OR true"),
        ("cast(id as s) > 1", "cast(T.`id` as s) > 1"),
        ("id in (select id from other)", "T.`id` in (select id from other)"),
        ("exists(xs, id -> id > 1) and id > 2", "exists(xs, id -> id > 1) and T.`id` > 2"),
        ("s.field = 1", "T.`s`.field = 1"),
        ("id > 1e5 and other = 1", "T.`id` > 1e5 and other = 1"),
        ("s(1) = 2", "s(1) = 2"),
    ],
)
def test_qualify_columns(predicate: str, qualified: str) -> None:
    assert qualify_columns(predicate, ["id", "s"], "T") == qualified
