"""An incremental run whose model returns no rows commits nothing: a job scheduled
hourly must not add thousands of empty Iceberg snapshots a year. Microbatch is the
exception by design: an empty batch replaces its window with nothing."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, write_file

from tests.functional.harness import (
    adapter_responses,
    batch_model,
    described_columns,
    query_rows,
    relation,
    results_by_model,
    snapshot_count,
)

ROWS = "select 1 as id, 'a' as v, date'2024-01-01' as day"
NO_ROWS = f"{ROWS} where false"

CONFIGS = {
    "appended": "materialized='incremental', incremental_strategy='append'",
    "merged": "materialized='incremental', unique_key='id'",
    "deleted_inserted": "materialized='incremental', unique_key='id', "
    "incremental_strategy='delete+insert'",
    "history": "materialized='incremental', unique_key='id', incremental_strategy='scd2'",
    "overwritten": "materialized='incremental', incremental_strategy='insert_overwrite', "
    "partition_by=['day']",
    "merged_without_merge": "materialized='incremental', unique_key='id', use_merge=false",
}


class TestEmptyRunsCommitNothing:
    @pytest.fixture(scope="class")
    def models(self):
        models = {
            f"{name}.sql": batch_model(config, {1: ROWS, 2: NO_ROWS})
            for name, config in CONFIGS.items()
        }
        models["batched.sql"] = batch_model(
            "materialized='incremental', incremental_strategy='microbatch', "
            "event_time='ts', begin='2024-01-01', batch_size='day'",
            {
                1: "select 1 as id, timestamp'2024-01-01 10:00:00' as ts",
                2: "select 1 as id, timestamp'2024-01-01 10:00:00' as ts where false",
            },
        )
        return models

    def test_no_rows_no_snapshot(self, project):
        run_dbt(["run", "--exclude", "batched"])
        before = {name: snapshot_count(project, relation(project, name)) for name in CONFIGS}
        rows_before = {
            name: query_rows(project, f"select * from {relation(project, name)}")
            for name in CONFIGS
        }

        results = results_by_model(run_dbt(["run", "--exclude", "batched", "--vars", "batch: 2"]))
        responses = adapter_responses(project)
        for name in CONFIGS:
            table = relation(project, name)
            assert snapshot_count(project, table) == before[name], name
            assert query_rows(project, f"select * from {table}") == rows_before[name], name
            assert "nothing committed" in results[name].message, name
            assert responses[name].get("snapshot_id") is None, name
            assert responses[name]["rows_inserted"] == 0, name

    def test_an_empty_microbatch_still_replaces_its_window(self, project):
        window = ["--event-time-start", "2024-01-01", "--event-time-end", "2024-01-02"]
        run_dbt(["run", "--select", "batched", *window])
        table = relation(project, "batched")
        assert query_rows(project, f"select id from {table}") == [(1,)]
        run_dbt(["run", "--select", "batched", "--vars", "batch: 2", *window])
        assert query_rows(project, f"select id from {table}") == []


DOCUMENTED = """
version: 2
models:
  - name: documented
    description: Orders, one row per id.
    config:
      persist_docs: {relation: true, columns: true}
    columns:
      - name: id
        description: The order's id.
      - name: v
        description: Its value.
"""


def metadata_versions(project, table: str) -> int:
    """How many metadata files the table has had (Iceberg's metadata log, and its current
    one): each commit, data or metadata, adds one."""
    return project.run_sql(f"select count(*) from {table}.metadata_log_entries", fetch="one")[0]


class TestAnUnchangedRunCommitsNoMetadata:
    """A run with no rows, whose state and docs the table already holds, commits no
    metadata either (properties and comments set again would add a metadata version each
    run: thousands a year for an hourly job); a changed description is one commit."""

    @pytest.fixture(scope="class")
    def models(self):
        config = (
            "materialized='incremental', unique_key='id', watermark_column='id', "
            "persist_docs={'relation': true, 'columns': true}"
        )
        return {
            "documented.sql": batch_model(config, {1: ROWS, 2: NO_ROWS}),
            "schema.yml": DOCUMENTED,
        }

    def test_no_metadata_version(self, project):
        table = relation(project, "documented")
        run_dbt(["run"])
        run_dbt(["run", "--vars", "batch: 2"])
        before = metadata_versions(project, table)
        run_dbt(["run", "--vars", "batch: 2"])
        assert metadata_versions(project, table) == before
        write_file(
            DOCUMENTED.replace("Its value.", "Its value, in cents."),
            project.project_root,
            "models",
            "schema.yml",
        )
        run_dbt(["run", "--vars", "batch: 2"])
        assert metadata_versions(project, table) == before + 1
        comments = {name: comment for name, _, comment in described_columns(project, table)}
        assert comments == {"id": "The order's id.", "v": "Its value, in cents.", "day": None}
