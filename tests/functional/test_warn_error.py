"""The adapter's warnings under `--warn-error`, which dbt 1.12 applies to every warning
(`require_all_warnings_handled_by_warn_error`, on by default): a warning of a plan (here,
columns the model no longer returns, which are kept) fails the model before anything is
written, and `--warn-error-options` keeps it a warning (`AdapterEventWarning`)."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

KEEPS_A_COLUMN = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='append_new_columns') }}
{% if var('phase', 1) == 1 %}
select 1 as id, 'a' as name, 10 as score
{% else %}
select 2 as id, 'b' as name
{% endif %}
"""
KEPT_WARNING = "column(s) score no longer returned by the model are kept"
AS_A_WARNING = '{"error": "all", "warn": ["AdapterEventWarning"]}'


class TestAdapterWarningsUnderWarnError:
    @pytest.fixture(scope="class")
    def models(self):
        return {"scores.sql": KEEPS_A_COLUMN}

    def test_a_warning_fails_before_anything_is_written(self, project) -> None:
        run_dbt(["run"])
        table = f"{project.test_schema}.scores"
        [before] = project.run_sql(f"select count(*) from {table}.snapshots", fetch="all")
        _, output = run_dbt_and_capture(
            ["--warn-error", "run", "--vars", "{phase: 2}"], expect_pass=False
        )
        assert KEPT_WARNING in output, output
        [after] = project.run_sql(f"select count(*) from {table}.snapshots", fetch="all")
        assert after == before
        rows = project.run_sql(f"select id from {table}", fetch="all")
        assert [row[0] for row in rows] == [1]

        _, output = run_dbt_and_capture(
            ["--warn-error-options", AS_A_WARNING, "run", "--vars", "{phase: 2}"]
        )
        assert KEPT_WARNING in output, output
        rows = project.run_sql(f"select id, score from {table} order by id", fetch="all")
        assert [tuple(row) for row in rows] == [(1, 10), (2, None)]
