"""dbt's relation and column macros that dbt-spark implements for Hive tables, as a
project or package calls them (`dbt run-operation`): answered through PyIceberg or with
Iceberg-correct SQL, each change committed whole or not at all."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

MACROS = """
{% macro listed() %}
  {% set relations = list_relations_without_caching(api.Relation.create(schema=target.schema)) %}
  {% do log('listed: ' ~ (relations | map(attribute='identifier') | sort | join(',')), info=True) %}
{% endmacro %}

{% macro columns_of(name) %}
  {% set relation = api.Relation.create(schema=target.schema, identifier=name, type='table') %}
  {% set cols = adapter.get_columns_in_relation(relation) %}
  {% do log('columns: ' ~ (cols | map(attribute='name') | join(',')) ~ ' types: '
            ~ (cols | map(attribute='dtype') | join(',')), info=True) %}
{% endmacro %}

{% macro add_and_remove(name) %}
  {% set relation = api.Relation.create(schema=target.schema, identifier=name, type='table') %}
  {% do alter_relation_add_remove_columns(relation, [api.Column('note', 'varchar')],
                                          [api.Column('old', 'int')]) %}
{% endmacro %}

{% macro widen(name, column, type) %}
  {% set relation = api.Relation.create(schema=target.schema, identifier=name, type='table') %}
  {% do alter_column_type(relation, column, type) %}
{% endmacro %}

{% macro truncate(name) %}
  {% do truncate_relation(api.Relation.create(schema=target.schema, identifier=name,
                                              type='table')) %}
{% endmacro %}

{% macro rename(name, new_name) %}
  {% set relation = api.Relation.create(schema=target.schema, identifier=name, type='table') %}
  {% do adapter.rename_relation(relation, relation.incorporate(path={'identifier': new_name})) %}
{% endmacro %}
"""


class TestInheritedMacros:
    @pytest.fixture(scope="class")
    def macros(self):
        return {"operations.sql": MACROS}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "wide.sql": "{{ config(materialized='table') }} "
            "select cast(1 as int) as id, cast(2 as int) as old",
            "shown.sql": "select 1 as id",
        }

    def columns(self, name: str) -> str:
        _, output = run_dbt_and_capture(
            ["run-operation", "columns_of", "--args", f"{{name: {name}}}"]
        )
        return output.split("columns: ")[1].splitlines()[0]

    def test_macros_work_on_iceberg(self, project):
        run_dbt(["run"])
        _, output = run_dbt_and_capture(["run-operation", "listed"])
        assert "listed: shown,wide" in output

        run_dbt(["run-operation", "add_and_remove", "--args", "{name: wide}"])
        assert self.columns("wide") == "id,note types: int,string"

        run_dbt(["run-operation", "widen", "--args", "{name: wide, column: ID, type: bigint}"])
        assert self.columns("wide") == "id,note types: bigint,string"
        # Narrowing is no in-place change in Iceberg: refused, nothing changed.
        _, output = run_dbt_and_capture(
            ["run-operation", "widen", "--args", "{name: wide, column: id, type: int}"],
            expect_pass=False,
        )
        assert "cannot change from bigint to int" in output
        assert self.columns("wide") == "id,note types: bigint,string"

        run_dbt(["run-operation", "truncate", "--args", "{name: wide}"])
        count = project.run_sql(f"select count(*) from {project.test_schema}.wide", fetch="one")
        assert count[0] == 0

        run_dbt(["run-operation", "rename", "--args", "{name: wide, new_name: narrow}"])
        _, output = run_dbt_and_capture(["run-operation", "listed"])
        assert "listed: narrow,shown" in output
