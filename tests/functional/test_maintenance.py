"""`s3tables_maintain` on the embedded catalog: a merge-on-read incremental table after 50
merges is compacted (no delete files left, fewer data files, the same rows), its old
snapshots expire down to `retain_last`, and only orphan files older than the safety window
are removed; bad arguments fail before anything runs."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.harness import table_rows

EVENTS_SQL = """
{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge') }}
select id, cast(id % 7 as string) as kind from range(500)
"""
MERGES = 50
DAY = 24 * 3600


class TestMaintenance:
    @pytest.fixture(scope="class")
    def models(self):
        return {"events.sql": EVENTS_SQL}

    def test_compaction_expiry_and_orphans(self, project) -> None:
        schema = project.test_schema
        run_dbt(["run"])
        for batch in range(MERGES):
            project.run_sql(
                f"merge into `{schema}`.events t using (select id, 'b{batch}' as kind "
                f"from range({batch * 10}, {batch * 10 + 5})) s on t.id = s.id "
                "when matched then update set kind = s.kind"
            )
        iceberg = project.adapter.iceberg
        before = iceberg.table_health(schema, "events")
        assert before.delete_files > 0 and before.snapshots > MERGES
        expected_rows = table_rows(project, "events", order_by="id")
        data = Path(iceberg.load_table(schema, "events").location().removeprefix("file:")) / "data"
        old_orphan, new_orphan = data / "old-orphan.parquet", data / "new-orphan.parquet"
        for orphan in (old_orphan, new_orphan):
            orphan.write_bytes(b"not referenced by any snapshot")
        os.utime(old_orphan, (time.time() - 10 * DAY, time.time() - 10 * DAY))

        _, output = run_dbt_and_capture(
            [
                "run-operation",
                "s3tables_maintain",
                "--args",
                "{models: [events], retain_last: 2, snapshots_older_than_days: 0}",
            ]
        )

        after = iceberg.table_health(schema, "events")
        assert after.delete_files == 0
        assert after.data_files < before.data_files
        assert after.snapshots == 2
        assert table_rows(project, "events", order_by="id") == expected_rows
        assert not old_orphan.exists() and new_orphan.exists()
        assert f"delete files {before.delete_files} -> 0" in output
        assert f"snapshots {before.snapshots} -> 2" in output
        assert "orphan files removed 1" in output

    def test_bad_arguments_fail_before_anything_runs(self, project) -> None:
        schema = project.test_schema
        run_dbt(["run"])
        snapshots = project.adapter.iceberg.table_health(schema, "events").snapshots
        for arguments, words in (
            ("{models: [events], orphans_older_than_days: 0.5}", "`orphans_older_than_days`"),
            ("{models: [events], operations: [vacuum]}", "`operations`: names `vacuum`"),
            ("{models: [nothing_here]}", "no model, seed or snapshot named nothing_here"),
            ("{}", "`models`: names no table"),
        ):
            _, output = run_dbt_and_capture(
                ["run-operation", "s3tables_maintain", "--args", arguments], expect_pass=False
            )
            assert words in output and "Fix:" in output, output
        assert project.adapter.iceberg.table_health(schema, "events").snapshots == snapshots
