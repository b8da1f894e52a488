"""Hooks with `transaction: false` run, and in dbt's order, on every materialization.

dbt runs a model's `transaction: false` pre-hooks before its `transaction: true` ones, and
its `transaction: false` post-hooks last. dbt-spark's table, view, incremental and seed
materializations run only the `transaction: true` hooks, so the others never ran.
"""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

from tests.functional.harness import query_rows


def hook(moment: str, transaction: bool) -> dict[str, object]:
    """A hook recording the model, the moment and its place in the model's hook order."""
    sql = (
        "insert into {{ target.schema }}.hook_log "
        f"select '{{{{ this.identifier }}}}', '{moment}', count(*) + 1 "
        "from {{ target.schema }}.hook_log where model = '{{ this.identifier }}'"
    )
    return {"sql": sql, "transaction": transaction}


HOOKS = {
    "+pre-hook": [hook("pre inside", True), hook("pre outside", False)],
    "+post-hook": [hook("post outside", False), hook("post inside", True)],
}
ORDER = [("pre outside", 1), ("pre inside", 2), ("post inside", 3), ("post outside", 4)]


class TestHooksOutsideTheTransaction:
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": HOOKS, "seeds": HOOKS, "snapshots": HOOKS}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "as_table.sql": "{{ config(materialized='table') }} select 1 as id",
            "as_view.sql": "{{ config(materialized='view') }} select 1 as id",
            "as_incremental.sql": (
                "{{ config(materialized='incremental', unique_key='id') }} select 1 as id"
            ),
        }

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"as_seed.csv": "id\n1\n"}

    @pytest.fixture(scope="class")
    def snapshots(self):
        return {
            "as_snapshot.sql": (
                "{% snapshot as_snapshot %}{{ config(unique_key='id', strategy='check', "
                "check_cols='all', target_schema=target.schema) }}"
                "select 1 as id{% endsnapshot %}"
            )
        }

    def test_every_hook_runs_in_dbts_order(self, project):
        project.run_sql(
            f"create table {project.test_schema}.hook_log (model string, moment string, "
            "position bigint) using iceberg"
        )
        run_dbt(["seed"])
        run_dbt(["run"])
        run_dbt(["snapshot"])
        rows = query_rows(
            project, f"select model, moment, position from {project.test_schema}.hook_log"
        )
        by_model: dict[str, list[tuple[str, int]]] = {}
        for model, moment, position in sorted(rows, key=lambda r: (r[0], r[2])):
            by_model.setdefault(model, []).append((moment, position))
        names = ["as_incremental", "as_seed", "as_snapshot", "as_table", "as_view"]
        assert by_model == {name: ORDER for name in names}
