"""dbt-tests-adapter's dbt clone suite (Slim CI: `dbt clone --state ... --target ci`).

Where the catalog has views, a clone is a view over the state relation (the
"clone not possible" path). Under the S3 Tables rules there are no views, so a table's
clone is a table copy (the "clone possible" path); the suite's view model is then built
as a table too, and the clone holds four tables instead of three tables and a view.
"""

from __future__ import annotations

from collections import Counter
from copy import deepcopy

import pytest
from dbt.tests.adapter.dbt_clone import fixtures
from dbt.tests.adapter.dbt_clone.test_dbt_clone import (
    BaseCloneNotPossible,
    BaseClonePossible,
    BaseCloneSameSourceAndTarget,
    BaseCloneSameTargetAndState,
)
from dbt.tests.util import run_dbt, run_dbt_and_capture


class TestCloneNotPossible(BaseCloneNotPossible):
    pass


class TestCloneSameTargetAndState(BaseCloneSameTargetAndState):
    def test_clone_same_target_and_state(self, project, unique_schema, other_schema):
        """dbt warns that state and target are the same. The base expects the clone to
        fail as well: on Postgres it does, trying to replace each table with a view
        selecting from itself. Here a relation cloned onto itself is left as it is, so
        the clone succeeds and the tables keep their rows."""
        project.create_test_schema(other_schema)
        self.run_and_save_state(project.project_root)

        _, output = run_dbt_and_capture(["clone", "--defer", "--state", "target"])
        assert "The state and target directories are the same: 'target'" in output
        relations = project.adapter.list_relations(database=None, schema=unique_schema)
        assert {r.identifier: r.type for r in relations}["table_model"] == "table"
        rows = project.run_sql(f"select count(*) from {unique_schema}.table_model", fetch="one")
        assert rows[0] == 2


class TestCloneSameSourceAndTarget(BaseCloneSameSourceAndTarget):
    pass


class TestClonePossibleUnderS3TablesRules(BaseClonePossible):
    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target, unique_schema, other_schema):
        target = {**dbt_profile_target, "s3tables_rules": True}
        outputs = {"default": target, "otherschema": deepcopy(target)}
        outputs["default"]["schema"] = unique_schema
        outputs["otherschema"]["schema"] = other_schema
        return {"test": {"outputs": outputs, "target": "default"}}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "table_model.sql": fixtures.table_model_sql,
            # S3 Tables has no views.
            "view_model.sql": "{{ config(materialized='table') }}\n" + fixtures.view_model_sql,
            "ephemeral_model.sql": fixtures.ephemeral_model_sql,
            "schema.yml": fixtures.schema_yml,
            "exposures.yml": fixtures.exposures_yml,
        }

    def test_can_clone_true(self, project, unique_schema, other_schema):
        """Under the S3 Tables rules a clone is a table copy: four tables (the view
        model built as a table), each with the state's rows."""
        project.create_test_schema(other_schema)
        self.run_and_save_state(project.project_root, with_snapshot=True)
        clone_args = ["clone", "--state", "state", "--target", "otherschema"]

        results = run_dbt(clone_args)
        assert len(results) == 4
        relations = project.adapter.list_relations(database=None, schema=other_schema)
        assert Counter(r.type for r in relations) == Counter({"table": 4})
        # A copy: the same rows as the state's tables, in tables of their own.
        for name, source_schema in (
            ("table_model", unique_schema),
            ("view_model", unique_schema),
            ("seed", f"{unique_schema}_seeds"),
        ):
            state_rows = project.run_sql(
                f"select * from {source_schema}.{name} order by id", fetch="all"
            )
            clone_rows = project.run_sql(
                f"select * from {other_schema}.{name} order by id", fetch="all"
            )
            assert [tuple(r) for r in clone_rows] == [tuple(r) for r in state_rows], name
            assert len(state_rows) == 2, name

        # objects already exist, so this is a no-op
        results = run_dbt(clone_args)
        assert len(results) == 4
        assert all("no-op" in r.message.lower() for r in results)

        # recreate all objects
        results = run_dbt([*clone_args, "--full-refresh"])
        assert len(results) == 4

        # select only models this time
        results = run_dbt([*clone_args, "--resource-type", "model"])
        assert len(results) == 2
        assert all("no-op" in r.message.lower() for r in results)
