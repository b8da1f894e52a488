"""dbt-tests-adapter's simple_copy suite: a seed copied through views, tables and
incremental models stays equal after the seed changes, empty and disabled models are not
built, and upper-case model names work.

Adapted: Spark has no materialized views, so the "unrelated relations in the schema"
check uses an unrelated table and a view over it; the upper-case test keeps this
adapter's profile (the base swaps in a Postgres profile for a mixed-case database name, and
Spark relations have no database); the schema's tables are listed through the adapter,
as Spark has no information_schema.
"""

import pytest
from dbt.tests.adapter.simple_copy.test_copy_uppercase import BaseSimpleCopyUppercase
from dbt.tests.adapter.simple_copy.test_simple_copy import EmptyModelsArentRunBase, SimpleCopyBase
from dbt.tests.util import get_connection, run_dbt


class TestSimpleCopyBase(SimpleCopyBase):
    def test_simple_copy_with_materialized_views(self, project):
        """Relations dbt does not manage, one depending on another, sit in the target
        schema: seed and run still build everything. Spark has no materialized view, so
        the chain is table <- view instead of table <- materialized view <- view."""
        project.run_sql(f"create table {project.test_schema}.unrelated_table (id int)")
        project.run_sql(
            f"create view {project.test_schema}.unrelated_view as"
            f" select * from {project.test_schema}.unrelated_table"
        )
        results = run_dbt(["seed"])
        assert len(results) == 1
        results = run_dbt()
        assert len(results) == 7


def tables_in_schema(project) -> dict[str, str]:
    """`project.get_tables_in_schema()` for Spark, which has no information_schema: the
    schema's relations as {name: table|view}, listed by the adapter."""
    adapter = project.adapter
    schema = adapter.Relation.create(schema=project.test_schema)
    with get_connection(adapter):
        relations = adapter.list_relations_without_caching(schema)
    return {r.identifier: str(r.type) for r in relations}


class TestEmptyModelsArentRun(EmptyModelsArentRunBase):
    def test_dbt_doesnt_run_empty_models(self, project):
        """The base's check with the schema's relations listed through the adapter
        (Spark has no information_schema)."""
        results = run_dbt(["seed"])
        assert len(results) == 1
        results = run_dbt()
        assert len(results) == 7

        tables = tables_in_schema(project)

        # The listing must see what was built, or the checks below prove nothing.
        assert {"seed", "view_model", "materialized", "incremental"} <= tables.keys()
        assert "empty" not in tables.keys()
        assert "disabled" not in tables.keys()


class TestSimpleCopyUppercase(BaseSimpleCopyUppercase):
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, dbt_profile_target):
        # The conftest's profile, not the base's Postgres one.
        return dbt_profile_target
