"""A merge whose unique key is declared unique uses the model's rows without dedup; a
broken promise on a key the table holds fails the run and commits nothing."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.test_incremental_strategies import (
    assert_all_passed,
    batch_model,
    relation,
    run_vars,
    snapshot_count,
    table_rows,
)

BATCHES = {
    1: "select * from values (1, 'a'), (2, 'b') as t(id, label)",
    2: "select * from values (2, 'B'), (3, 'c') as t(id, label)",
    # Key 2 twice: a broken promise on a key the table holds.
    3: "select * from values (2, 'x'), (2, 'y') as t(id, label)",
}
CONFIGURED = batch_model(
    "materialized='incremental', unique_key='id', unique_key_is_unique=true", BATCHES
)
CONSTRAINED = batch_model("materialized='incremental', unique_key='id'", BATCHES)
DEFAULT = batch_model("materialized='incremental', unique_key='id'", BATCHES)
SCHEMA_YML = """
models:
  - name: constrained
    config:
      contract: {enforced: true}
      on_schema_change: fail
    columns:
      - name: id
        data_type: int
        constraints: [{type: primary_key}]
      - name: label
        data_type: string
"""


def debug_line(log: str, model: str) -> str:
    return next(line for line in log.splitlines() if f"{model}: the model's rows" in line)


class TestDeclaredUniqueKey:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "configured.sql": CONFIGURED,
            "constrained.sql": CONSTRAINED,
            "deduplicated.sql": DEFAULT,
            "schema.yml": SCHEMA_YML,
        }

    def test_declared_keys_skip_the_dedup_and_a_broken_promise_commits_nothing(self, project):
        query = "select id, label from {}"
        assert_all_passed(run_dbt(["run"]), 3)
        results, log = run_dbt_and_capture(["run", "--debug", *run_vars(batch=2)])
        assert_all_passed(results, 3)
        for model in ("configured", "constrained", "deduplicated"):
            table = relation(project, model)
            assert table_rows(project, query.format(table)) == [(1, "a"), (2, "B"), (3, "c")]
        assert "used as they are (`unique_key_is_unique: true`)" in debug_line(log, "configured")
        assert "used as they are (a unique constraint on id)" in debug_line(log, "constrained")
        assert "deduplicated per key" in debug_line(log, "deduplicated")

        snapshots = {m: snapshot_count(project, relation(project, m)) for m in ("configured",)}
        results = run_dbt(["run", *run_vars(batch=3)], expect_pass=False)
        outcome = {r.node.name: r for r in results}
        assert outcome["deduplicated"].status == "success"
        failed = outcome["configured"]
        assert failed.status == "error"
        assert "configured" in failed.message and "unique_key_is_unique" in failed.message
        assert "nothing was committed" in failed.message
        table = relation(project, "configured")
        assert snapshot_count(project, table) == snapshots["configured"]
        assert table_rows(project, query.format(table)) == [(1, "a"), (2, "B"), (3, "c")]
