"""dbt's custom-strategy hook: a `get_incremental_<name>_sql(arg_dict)` macro of the project
makes `incremental_strategy: <name>` run its SQL as the model's data statement (a built-in
name's macro overrides that strategy), with schema evolution before it, the state recorded
with its commit, write-audit-publish on the branch, and what cannot hold said in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.s3tables.lifecycle.audit import audit_branch
from tests.functional.harness import adapter_responses, last_invocation_id, table_rows

# Inserts the rows whose key the table does not hold yet, into the columns dbt names
# (`dest_columns`: the table's, after schema evolution).
INSERT_ONLY_MACRO = """
{% macro get_incremental_insert_only_sql(arg_dict) %}
  {%- set key = arg_dict["unique_key"][0] -%}
  {%- set columns = arg_dict["dest_columns"] | map(attribute="name") | join(", ") -%}
  insert into {{ arg_dict["target_relation"] }} ({{ columns }})
  select {{ columns }} from {{ arg_dict["temp_relation"] }} as s
  where not exists (select 1 from {{ arg_dict["target_relation"] }} as t
                    where t.{{ key }} = s.{{ key }})
{% endmacro %}
"""
# An override of append: it appends only the rows the table does not hold yet (the
# built-in append would add them twice).
APPEND_OVERRIDE_MACRO = """
{% macro get_incremental_append_sql(arg_dict) %}
  insert into {{ arg_dict["target_relation"] }}
  select * from {{ arg_dict["temp_relation"] }}
  except select * from {{ arg_dict["target_relation"] }}
{% endmacro %}
"""
# Two statements: each its own commit, said in one line.
TWICE_MACRO = """
{% macro get_incremental_twice_sql(arg_dict) %}
  insert into {{ arg_dict["target_relation"] }} select * from {{ arg_dict["temp_relation"] }};
  insert into {{ arg_dict["target_relation"] }} select * from {{ arg_dict["temp_relation"] }}
{% endmacro %}
"""

SOURCE = """
{{ config(materialized='table') }}
{% if var('round', 1) == 1 %}
select * from values (1, 'a', 10), (2, 'b', 20) as t(id, name, amount)
{% else %}
select * from values (1, 'changed', 11), (3, 'c', 30) as t(id, name, amount)
{% if var('round', 1) == 3 %} union all select 4, 'd', 40 {% endif %}
{% endif %}
"""
# Round 2 adds a column: append_new_columns evolves the table before the macro runs.
INSERT_ONLY = """
{{ config(materialized='incremental', incremental_strategy='insert_only', unique_key='id',
          on_schema_change='append_new_columns',
          incremental_strategy_traits={'replaces': 'nothing', 'counted_as': 'appended'}) }}
select id, name {% if var('round', 1) > 1 %}, amount {% endif %} from {{ ref('source_rows') }}
"""
APPENDED = """
{{ config(materialized='incremental') }}
select id, name from {{ ref('source_rows') }}
"""
TWICE = """
{{ config(materialized='incremental', incremental_strategy='twice') }}
select id from {{ ref('source_rows') }} where id = 1
"""
# No declared traits: what its statement replaces is unknown, so no read is exact.
UNDECLARED_READER = """
{{ config(materialized='incremental', incremental_strategy='insert_only', unique_key='id') }}
select id, name from {{ upstream_changes(ref('source_rows')) }}
"""
AUDITED = """
{{ config(materialized='incremental', incremental_strategy='insert_only', unique_key='id',
          audit_before_publish=true) }}
select id, name from {{ ref('source_rows') }}
"""
# Round 3's test fails: the audited run's rows stay on the branch.
AUDITED_YML = """
version: 2
models:
  - name: audited
    data_tests:
      - dbt_utils_free_check
"""
FAILS_IN_ROUND_3 = """
{% test dbt_utils_free_check(model) %}
select * from {{ model }} where {{ var('round', 1) }} = 3
{% endtest %}
"""


class TestCustomStrategies:
    @pytest.fixture(scope="class")
    def macros(self):
        return {
            "insert_only.sql": INSERT_ONLY_MACRO,
            "append_override.sql": APPEND_OVERRIDE_MACRO,
            "twice.sql": TWICE_MACRO,
            "checks.sql": FAILS_IN_ROUND_3,
        }

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "source_rows.sql": SOURCE,
            "insert_only_copy.sql": INSERT_ONLY,
            "appended.sql": APPENDED,
            "twice_copy.sql": TWICE,
            "audited.sql": AUDITED,
            "audited.yml": AUDITED_YML,
        }

    def test_custom_and_overridden_strategies_run_their_macros(self, project) -> None:
        run_dbt(["build"])
        _, output = run_dbt_and_capture(["build", "--vars", "{round: 2}"])

        # insert_only: key 1 kept as it was, key 3 inserted, with the column added before
        # the macro ran (its `dest_columns` hold it).
        assert table_rows(project, "insert_only_copy", "id, name, amount") == [
            (1, "a", None),
            (2, "b", None),
            (3, "c", 30),
        ]
        response = adapter_responses(project)["insert_only_copy"]
        assert response["code"] == "INSERT_ONLY"
        assert (response["rows_inserted"], response["rows_deleted"]) == (1, 0)

        # The override of append ran: the row of round 1 that round 2 repeats is not twice.
        run_dbt(["run", "--select", "appended", "--vars", "{round: 2}"])
        assert table_rows(project, "appended") == [(1, "a"), (1, "changed"), (2, "b"), (3, "c")]

        # Two statements, two commits: said in one line.
        assert "strategy `twice` renders 2 statements, each its own commit" in output
        assert table_rows(project, "twice_copy") == [(1,), (1,), (1,)]

        # Audited: published after its test passed; in round 3 the test fails and main
        # keeps round 2's rows (the custom statement wrote the audit branch).
        assert table_rows(project, "audited") == [(1, "a"), (2, "b"), (3, "c")]
        results, _ = run_dbt_and_capture(
            ["build", "--select", "source_rows", "audited", "--vars", "{round: 3}"],
            expect_pass=False,
        )
        assert {r.node.name: str(r.status) for r in results}["audited"] == "success"
        assert table_rows(project, "audited") == [(1, "a"), (2, "b"), (3, "c")]
        branch = audit_branch(last_invocation_id(project))
        assert (4, "d") in table_rows(project, "audited", branch=branch)

    def test_an_undeclared_custom_strategy_refuses_upstream_changes(self, project) -> None:
        run_dbt(["run", "--select", "source_rows"])
        project_models = Path(project.project_root) / "models"
        (project_models / "undeclared_reader.sql").write_text(UNDECLARED_READER)
        try:
            _, output = run_dbt_and_capture(
                ["run", "--select", "undeclared_reader"], expect_pass=False
            )
        finally:
            (project_models / "undeclared_reader.sql").unlink()
        assert (
            "the custom strategy `insert_only` does not declare what its statement replaces"
            in output
        )
        assert "incremental_strategy_traits: {replaces: rows_by_key}" in output


# Two statements, the second failing when told: under a reader of upstream_changes() they
# commit on the run's branch and reach main together, or not at all.
TWO_STEP_MACRO = """
{% macro get_incremental_two_step_sql(arg_dict) %}
  insert into {{ arg_dict["target_relation"] }} select * from {{ arg_dict["temp_relation"] }};
  insert into {{ arg_dict["target_relation"] }}
  select * from {{ arg_dict["temp_relation"] }}
  where assert_true(not {{ var('fail', false) }}) is null
{% endmacro %}
"""
BATCHES = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select cast({{ var('batch', 1) }} as bigint) as id
"""
TWO_STEP_READER = """
{{ config(materialized='incremental', incremental_strategy='two_step',
          incremental_strategy_traits={'replaces': 'nothing', 'counted_as': 'appended'}) }}
select id from {{ upstream_changes(ref('batches')) }}
"""


class TestSeveralStatementsOfAReader:
    @pytest.fixture(scope="class")
    def macros(self):
        return {"two_step.sql": TWO_STEP_MACRO}

    @pytest.fixture(scope="class")
    def models(self):
        return {"batches.sql": BATCHES, "two_step_reader.sql": TWO_STEP_READER}

    def test_a_failure_after_the_first_statement_leaves_main_and_its_read_as_they_were(
        self, project
    ) -> None:
        run_dbt(["run"])  # a first build: one CREATE TABLE ... AS
        assert table_rows(project, "two_step_reader") == [(1,)]
        run_dbt(["run", "-s", "batches", "--vars", "{batch: 2}"])
        _, output = run_dbt_and_capture(
            ["run", "-s", "two_step_reader", "--vars", "{fail: true}"], expect_pass=False
        )
        assert table_rows(project, "two_step_reader") == [(1,)]
        assert "statements: they commit on branch" in output
        run_dbt(["run", "-s", "two_step_reader"])
        assert table_rows(project, "two_step_reader") == [(1,), (2,), (2,)]
        branches = project.adapter.iceberg.branches(project.test_schema, "two_step_reader")
        assert branches.heads == {}
