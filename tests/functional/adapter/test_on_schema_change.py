"""dbt-tests-adapter's on_schema_change suite, plus the no-drop contract."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import (
    BaseIncrementalOnSchemaChange,
)
from dbt.tests.util import run_dbt


class TestIncrementalOnSchemaChange(BaseIncrementalOnSchemaChange):
    def test_run_incremental_sync_all_columns(self, project):
        """The base test expects sync_all_columns to drop a column the model no longer
        returns. This adapter never drops a column on its own: the column stays, its old
        values stay, and new rows get NULL there. Assert that instead."""
        select = "model_a incremental_sync_all_columns incremental_sync_all_columns_target"
        run_dbt(["run", "--select", select])
        run_dbt(["run", "--select", select])
        schema = project.test_schema
        columns = [
            c.name
            for c in project.adapter.get_columns_in_relation(
                project.adapter.Relation.create(
                    schema=schema, identifier="incremental_sync_all_columns"
                )
            )
        ]
        target = [
            c.name
            for c in project.adapter.get_columns_in_relation(
                project.adapter.Relation.create(
                    schema=schema, identifier="incremental_sync_all_columns_target"
                )
            )
        ]
        # Every column of dbt's expected table is there, plus `field2`, which dbt would drop.
        assert set(target) < set(columns)
        assert set(columns) - set(target) == {"field2"}
        shared = ", ".join(sorted(target))
        mismatched = project.run_sql(
            f"select count(*) from (select {shared} from {schema}.incremental_sync_all_columns "
            f"except select {shared} from {schema}.incremental_sync_all_columns_target)",
            fetch="one",
        )[0]
        assert mismatched == 0

    def test_run_incremental_sync_remove_only(self, project):
        """As above: the removed column is kept (NULL in new rows) rather than dropped."""
        select = "model_a incremental_sync_remove_only incremental_sync_remove_only_target"
        run_dbt(["run", "--select", select])
        run_dbt(["run", "--select", select])
        schema = project.test_schema
        rows = project.run_sql(
            f"select count(*) from {schema}.incremental_sync_remove_only where field1 is not null",
            fetch="one",
        )[0]
        assert rows > 0


PLACEHOLDER_MODEL = """
{{ config(materialized='incremental', incremental_strategy='delete+insert',
          unique_key='customerid', on_schema_change='append_new_columns') }}
{% if var('phase', 1) == 1 %}
select * from values (1, 'ann', 'p5-a'), (2, 'bob', 'p5-b') as t(CustomerID, name, placeholder5)
{% else %}
select * from values (2, 'bobby', 'p6-b'), (3, 'cy', 'p6-c') as t(customerid, name, placeholder6)
{% endif %}
"""


class TestAppendNewColumnsNeverDrops:
    @pytest.fixture(scope="class")
    def models(self):
        return {"customers.sql": PLACEHOLDER_MODEL}

    def test_placeholder_example(self, project):
        run_dbt(["run"])
        run_dbt(["run", "--vars", "{phase: 2}"])
        rows = project.run_sql(
            f"select * from {project.test_schema}.customers order by 1", fetch="all"
        )
        names = [
            c.name
            for c in project.adapter.get_columns_in_relation(
                project.adapter.Relation.create(schema=project.test_schema, identifier="customers")
            )
        ]
        assert [n.lower() for n in names] == ["customerid", "name", "placeholder5", "placeholder6"]
        assert [tuple(r) for r in rows] == [
            (1, "ann", "p5-a", None),
            (2, "bobby", None, "p6-b"),
            (3, "cy", None, "p6-c"),
        ]


EVOLVING_MODEL = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='sync_all_columns') }}
{% set phase = var('phase', 1) %}
{% if phase == 1 %}
select cast(1 as int) as id, cast(1.5 as float) as score, named_struct('city', 'Oslo') as address
{% elif phase == 2 %}
select cast(2 as bigint) as id, cast(2.5 as double) as score,
       named_struct('city', 'Bergen', 'zip', '5003') as address
{% else %}
select cast(3 as bigint) as id, 'high' as score,
       named_struct('city', 'Molde', 'zip', '6400') as address
{% endif %}
"""


def column_types(project, table: str) -> dict[str, str]:
    relation = project.adapter.Relation.create(schema=project.test_schema, identifier=table)
    return {c.name: c.dtype for c in project.adapter.get_columns_in_relation(relation)}


class TestSyncAllColumnsWidensAndRefusesNarrowing:
    @pytest.fixture(scope="class")
    def models(self):
        return {"evolving.sql": EVOLVING_MODEL}

    def test_widen_nested_add_then_refuse(self, project):
        run_dbt(["run"])
        run_dbt(["run", "--vars", "{phase: 2}"])
        assert column_types(project, "evolving") == {
            "id": "bigint",
            "score": "double",
            "address": "struct<city:string,zip:string>",
        }
        rows = project.run_sql(
            f"select id, score, address.city, address.zip from {project.test_schema}.evolving "
            "order by id",
            fetch="all",
        )
        assert [tuple(r) for r in rows] == [(1, 1.5, "Oslo", None), (2, 2.5, "Bergen", "5003")]

        snapshots = f"select count(*) from {project.test_schema}.evolving.snapshots"
        before = project.run_sql(snapshots, fetch="one")[0]
        result = run_dbt(["run", "--vars", "{phase: 3}"], expect_pass=False)
        assert "`score` from double to string" in result.results[0].message
        assert project.run_sql(snapshots, fetch="one")[0] == before
        assert column_types(project, "evolving")["score"] == "double"


SCD2_FAIL_MODEL = """
{{ config(materialized='incremental', incremental_strategy='scd2', unique_key='id',
          on_schema_change='fail') }}
select * from values (1, '{{ var("name", "a") }}') as t(id, name)
"""


class TestScd2HistoryColumnsAreNotASchemaChange:
    @pytest.fixture(scope="class")
    def models(self):
        return {"people.sql": SCD2_FAIL_MODEL}

    def test_fail_mode_accepts_scd2_tables(self, project):
        run_dbt(["run"])
        run_dbt(["run", "--vars", "{name: b}"])
        rows = project.run_sql(
            f"select name, valid_to is null from {project.test_schema}.people order by name",
            fetch="all",
        )
        assert [tuple(r) for r in rows] == [("a", False), ("b", True)]


CHECKED_FIRST_MODEL = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='append_new_columns',
          incremental_strategy=var('strategy', 'merge')) }}
select 1 as id{% if var('strategy', 'merge') == 'scd2' %}, 'new' as extra{% endif %}
"""


class TestRefusedRunLeavesSchemaAlone:
    @pytest.fixture(scope="class")
    def models(self):
        return {"checked.sql": CHECKED_FIRST_MODEL}

    def test_strategy_switch_refused_before_columns_are_added(self, project):
        run_dbt(["run"])
        result = run_dbt(["run", "--vars", "{strategy: scd2}"], expect_pass=False)
        assert "--full-refresh" in result.results[0].message
        assert list(column_types(project, "checked")) == ["id"]
