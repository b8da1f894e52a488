"""Rows repeating a `unique_key` value: a first build keeps them all (as dbt's own does),
a merge or scd2 run takes one row per key (the greatest `watermark_column`), and each says
how many. A merge whose unique key is declared unique uses the model's rows without
counting; a broken promise on a key the table holds fails the run and commits nothing."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.harness import (
    assert_all_passed,
    batch_model,
    query_rows,
    relation,
    run_vars,
    snapshot_count,
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
            assert query_rows(project, query.format(table)) == [(1, "a"), (2, "B"), (3, "c")]
        assert "used as they are (`unique_key_is_unique: true`)" in debug_line(log, "configured")
        assert "used as they are (a unique constraint on id)" in debug_line(log, "constrained")
        # Undeclared, the rows were counted: no key repeats, so no dedup either.
        assert "used as they are (no key repeats in this run's rows, counted)" in debug_line(
            log, "deduplicated"
        )

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
        assert query_rows(project, query.format(table)) == [(1, "a"), (2, "B"), (3, "c")]


REPEATED_KEY_ROWS = {
    1: "select * from values (1, 'a', 1), (1, 'b', 2), (2, 'c', 1) as t(id, label, version)",
    2: "select * from values (2, 'd', 2), (2, 'e', 3), (2, 'f', 1), (3, 'g', 1) "
    "as t(id, label, version)",
    # Key 5 twice and new to the table: Iceberg's cardinality check would not see it.
    3: "select * from values (3, 'h', 2), (5, 'k', 1), (5, 'm', 2) as t(id, label, version)",
    4: "select * from values (3, 'n', 3) as t(id, label, version)",
}
KEYED = "materialized='incremental', unique_key='id', watermark_column='version'"
# A key of text and a date, counted in dbt's process from the collected keys: 'a' and 'A'
# are two keys, as are the same text on two days; NULL is equal to NULL.
TEXT_KEY_ROWS = {
    1: "select * from values ('a', date'2024-01-01', 1), ('A', date'2024-01-01', 1) "
    "as t(code, day, version)",
    2: "select * from values ('a', date'2024-01-01', 2), ('a', date'2024-01-01', 3), "
    "(null, date'2024-01-02', 1), (null, date'2024-01-02', 2), ('a', date'2024-01-02', 1), "
    "('A', date'2024-01-01', 2) "
    "as t(code, day, version)",
    3: "select * from values ('A', date'2024-01-01', 4) as t(code, day, version)",
    4: "select * from values (null, date'2024-01-02', 3) as t(code, day, version)",
}
TEXT_KEYED = "materialized='incremental', unique_key=['code', 'day'], watermark_column='version'"


class TestRepeatedKeys:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "repeated.sql": batch_model(KEYED, REPEATED_KEY_ROWS),
            "repeated_scd2.sql": batch_model(
                f"{KEYED}, incremental_strategy='scd2'", REPEATED_KEY_ROWS
            ),
            "repeated_text.sql": batch_model(TEXT_KEYED, TEXT_KEY_ROWS),
        }

    def test_first_build_keeps_them_merges_take_one_and_both_say_so(self, project):
        table = relation(project, "repeated")
        query = f"select id, label from {table}"
        warning = "`unique_key` value(s) appear in more than one of the model's rows"

        _, log = run_dbt_and_capture(["run"])
        assert query_rows(project, query) == [(1, "a"), (1, "b"), (2, "c")]
        assert (
            f"repeated: 1 {warning} (2 rows); a first build keeps every row, as dbt's does, "
            "and a later merge run treats all rows of such a key alike" in log
        )
        assert f"repeated_scd2: 1 {warning} (2 rows); a first build keeps every row" in log
        _, log = run_dbt_and_capture(["run", *run_vars(batch=2)])
        assert query_rows(project, query) == [(1, "a"), (1, "b"), (2, "e"), (3, "g")]
        assert (
            f"repeated: 1 {warning} (3 rows); this merge run takes one row per key: the one with "
            "the greatest `version`" in log
        )
        assert f"repeated_scd2: 1 {warning} (3 rows); this scd2 run takes one row per key" in log
        assert (
            f"repeated_text: 2 {warning} (4 rows); this merge run takes one row per key: the "
            "one with the greatest `version`" in log
        )
        _, log = run_dbt_and_capture(["run", *run_vars(batch=3)])
        assert query_rows(project, query) == [(1, "a"), (1, "b"), (2, "e"), (3, "h"), (5, "m")]
        assert f"repeated: 1 {warning} (2 rows); this merge run takes one row per key" in log
        assert f"repeated_scd2: 1 {warning} (2 rows); this scd2 run takes one row per key" in log
        _, log = run_dbt_and_capture(["run", *run_vars(batch=4)])
        assert query_rows(project, query) == [(1, "a"), (1, "b"), (2, "e"), (3, "n"), (5, "m")]
        assert warning not in log
        history = f"select id, label, valid_to is null from {relation(project, 'repeated_scd2')}"
        assert query_rows(project, history) == [
            (1, "a", True),
            (1, "b", True),
            (2, "c", False),
            (2, "e", True),
            (3, "g", False),
            (3, "h", False),
            (3, "n", True),
            (5, "m", True),
        ]
        text_keys = (
            f"select code, cast(day as string), version from {relation(project, 'repeated_text')}"
        )
        assert query_rows(project, text_keys) == [
            (None, "2024-01-02", 3),
            ("A", "2024-01-01", 4),
            ("a", "2024-01-01", 3),
            ("a", "2024-01-02", 1),
        ]
        # One commit per run, the first build's included.
        for model in ("repeated", "repeated_scd2", "repeated_text"):
            assert snapshot_count(project, relation(project, model)) == 4
