"""Splitting a script into Spark statements (a model's sql_header comes first)."""

from __future__ import annotations

import pytest

from dbt.adapters.s3tables.sql_text import split_statements


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
