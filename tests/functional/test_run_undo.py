"""Run-level undo on the embedded catalog: every commit of a run carries its invocation in
the snapshot summary, and `s3tables_rollback` sets each table that run changed back to its
state before it (a table the run created is dropped), refusing, with nothing changed, when
a later run changed one of them since; `dry_run` only lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.harness import (
    last_invocation_id,
    latest_snapshot_summary,
    table_properties,
    table_rows,
)

SOURCE_SQL = """
{{ config(materialized='table') }}
select id, {{ var('round', 1) }} as round from range(3 * {{ var('round', 1) }}) as r(id)
"""
TOTALS_SQL = """
{{ config(materialized='table') }}
select max(round) as round, count(*) as n from {{ ref('source_rows') }}
"""
EVENTS_SQL = """
{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge') }}
select id, round from {{ ref('source_rows') }}
"""
MODELS = ("source_rows", "totals", "events")


def run(project, *args: str) -> str:
    """`dbt run` with `args`; the run's invocation id."""
    run_dbt(["run", *args])
    return last_invocation_id(project)


def contents(project) -> dict[str, list[tuple]]:
    return {name: table_rows(project, name) for name in MODELS}


def undo(project, invocation: str, dry_run: bool = False, expect_pass: bool = True) -> str:
    arguments = {"invocation_id": invocation, "dry_run": dry_run}
    _, output = run_dbt_and_capture(
        ["run-operation", "s3tables_rollback", "--args", json.dumps(arguments)],
        expect_pass=None,
    )
    failed = "Encountered an error while running operation" in output
    assert failed is not expect_pass, output
    return output


class TestRunUndo:
    @pytest.fixture(scope="class")
    def models(self):
        return {"source_rows.sql": SOURCE_SQL, "totals.sql": TOTALS_SQL, "events.sql": EVENTS_SQL}

    def test_commits_carry_the_run_and_the_node(self, project) -> None:
        # Two threads: each statement's tags are its own thread's.
        invocation = run(project, "--threads", "2")
        for name in MODELS:
            summary = latest_snapshot_summary(project, f"`{project.test_schema}`.{name}")
            assert summary["dbt.invocation_id"] == invocation
            assert summary["dbt.unique_id"] == f"model.test.{name}"

    def test_undo_of_a_three_model_run(self, project) -> None:
        run(project, "--vars", "{round: 1}")
        before = contents(project)
        second = run(project, "--vars", "{round: 2}")
        changed = contents(project)
        assert changed != before

        listed = undo(project, second, dry_run=True)
        assert all(
            "would undo: " in listed and f".`{name}`: back to snapshot" in listed for name in MODELS
        )
        assert contents(project) == changed  # a dry run changes nothing

        undo(project, second)
        assert contents(project) == before
        again = undo(project, second)
        assert "already at its state before the run" in again
        assert contents(project) == before
        # The undone run's snapshots stay in history; the next run builds on the restored state.
        run(project, "--vars", "{round: 3}")
        assert {row[1] for row in contents(project)["source_rows"]} == {3}

    def test_a_table_changed_since_is_refused_by_name(self, project) -> None:
        run(project, "--vars", "{round: 4}")
        fifth = run(project, "--vars", "{round: 5}")
        run(project, "--select", "totals", "--vars", "{round: 6}")
        state = contents(project)
        output = undo(project, fifth, expect_pass=False)
        assert "refused, nothing changed" in output
        assert "`totals`: refused, its rows were changed since by run" in output
        assert "Fix: undo run " in output
        # The other tables' steps are said as not done, never as done.
        assert "not done (the undo is refused): " in output
        assert "undone: " not in output
        assert contents(project) == state

    def test_maintenance_after_a_run_is_no_reason_to_refuse_its_undo(self, project) -> None:
        run(project, "--vars", "{round: 7}")
        before = contents(project)
        eighth = run(project, "--vars", "{round: 8}")
        # `events` (merge-on-read) holds data and delete files: the compaction rewrites them.
        maintain = {"models": list(MODELS), "operations": ["compact", "rewrite_manifests"]}
        run_dbt(["run-operation", "s3tables_maintain", "--args", json.dumps(maintain)])
        ninth = run(project, "--select", "events", "--vars", "{round: 8}")
        for invocation in (ninth, eighth):
            output = undo(project, invocation)
            assert "undone: " in output, output
        assert "later compaction commit(s), which change no row" in output
        assert contents(project) == before

    def test_an_expired_state_before_the_run_is_refused_saying_so(self, project) -> None:
        run(project, "--vars", "{round: 9}")
        tenth = run(project, "--vars", "{round: 10}")
        state = contents(project)
        # Every snapshot but the current (round 10's) expires.
        expire = {
            "models": list(MODELS),
            "operations": ["expire_snapshots"],
            "snapshots_older_than_days": 0,
            "retain_last": 1,
        }
        run_dbt(["run-operation", "s3tables_maintain", "--args", json.dumps(expire)])
        output = undo(project, tenth, expect_pass=False)
        for name in MODELS:
            assert f"`{name}`: refused, its state before the run has expired" in output, output
        assert "a writer outside dbt" not in output
        assert contents(project) == state

    def test_a_table_the_run_created_is_dropped(self, project) -> None:
        Path(project.project_root, "models", "extra.sql").write_text(
            "{{ config(materialized='table') }} select 1 as id"
        )
        try:
            created = run(project, "--select", "extra")
            output = undo(project, created)
        finally:
            Path(project.project_root, "models", "extra.sql").unlink()
        assert "`extra`: dropped (created by this run)" in output
        names = [r.name for r in project.adapter.iceberg.list_relations(project.test_schema)]
        assert "extra" not in names

    def test_an_unknown_run_is_one_sentence(self, project) -> None:
        output = undo(project, "00000000-not-a-run", expect_pass=False)
        assert "changed no table" in output and "Fix:" in output


# A watermark merge whose filter reads last_processed_value(); its upstream appends a batch
# a run (ids 3n-2 to 3n for batch n).
WATERMARK_EVENTS = """
{{ config(materialized='incremental', incremental_strategy='append') }}
{% set batch = var('batch', 1) | int %}
select cast(id as bigint) as id from range({{ batch * 3 - 2 }}, {{ batch * 3 + 1 }}) as r(id)
"""
WATERMARKED = """
{{ config(materialized='incremental', unique_key='id', watermark_column='id') }}
select id from {{ ref('watermark_events') }}
{% set last = last_processed_value() %}
{% if is_incremental() and last is not none %} where id > {{ last }} {% endif %}
"""
LAST_VALUE = "dbt.s3tables.last_processed_value"


class TestUndoOfAWatermarkMerge:
    @pytest.fixture(scope="class")
    def models(self):
        return {"watermark_events.sql": WATERMARK_EVENTS, "watermarked.sql": WATERMARKED}

    def test_its_last_processed_value_goes_back_with_its_rows(self, project) -> None:
        table = f"`{project.test_schema}`.watermarked"
        run(project)
        run(project, "-s", "watermark_events", "--vars", "{batch: 2}")
        assert table_properties(project, table)[LAST_VALUE] == "3"
        undone = run(project, "-s", "watermarked")
        assert [r[0] for r in table_rows(project, "watermarked")] == [1, 2, 3, 4, 5, 6]
        assert table_properties(project, table)[LAST_VALUE] == "6"
        output = undo(project, undone)
        assert [r[0] for r in table_rows(project, "watermarked")] == [1, 2, 3]
        assert table_properties(project, table)[LAST_VALUE] == "3"
        assert f"its state as before the run ({LAST_VALUE}" in output, output
        # The rows the undone run merged are read again.
        run(project, "-s", "watermarked")
        assert [r[0] for r in table_rows(project, "watermarked")] == [1, 2, 3, 4, 5, 6]
