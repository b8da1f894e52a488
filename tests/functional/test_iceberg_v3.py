"""Iceberg format v3 on the embedded catalog, through real `dbt` commands.

PyIceberg 0.12 reads v3 tables but cannot write their metadata, and the embedded catalog's
metadata files are written by PyIceberg: every change the adapter makes to a v3 table's
metadata (the incremental state, schema evolution, column docs, partition evolution) goes
through Spark SQL there. Each is read back through PyIceberg: the table stays at v3, a
merge-on-read merge writes deletion vectors (Puffin files) and no position-delete files,
and the rows are the expected ones; write-audit-publish, run-level undo, maintenance
(compacting the deletion vectors away) and the docs catalog (its row count exact) work on
v3 tables. A v2 table is upgraded in place by
`s3tables_upgrade_format_version` (one commit, its data files untouched), never downgraded.
"""

from __future__ import annotations

import json

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture
from pyiceberg.manifest import FileFormat

from tests.functional.harness import (
    adapter_responses,
    delete_file_formats,
    iceberg_table,
    last_invocation_id,
    not_null_id_tests,
    table_rows,
)

EVENTS = """{{ config(
    materialized='incremental', unique_key='id', incremental_strategy='merge',
    write_mode='merge_on_read', format_version=3, on_schema_change='append_new_columns',
    partition_by=(['label'] if var('phase', 1) == 3 else []),
    persist_docs={'relation': true, 'columns': true}
) }}
{% if var('phase', 1) == 1 %}
select id, concat('e', id) as label from range(1, 101) as t(id)
{% else %}
select id, 'changed' as label, id * 10 as score from range(1, 3) as t(id)
{% endif %}
"""
# Write-audit-publish on a v3 table: its audit record and state are property commits.
AUDITED = """{{ config(
    materialized='incremental', unique_key='id', format_version=3, audit_before_publish=true
) }}
select id, {{ var('phase', 1) }} as phase from range(1, 4) as t(id)
"""
# Copy-on-write on v3: the commit counts come from the row lineage of the files it added.
COPY_ON_WRITE = """{{ config(
    materialized='incremental', unique_key='id', format_version=3, write_mode='copy_on_write'
) }}
{% if var('phase', 1) == 1 %}
select id, 'a' as v from range(1, 11) as t(id)
{% else %}
select id, 'b' as v from range(9, 13) as t(id)
{% endif %}
"""
SCHEMA_YML = """
version: 2
models:
  - name: events
    description: events at format v3
    columns:
      - name: id
        description: the event's key
"""


def run_phase(phase: int) -> str:
    args = ["build", "--vars", json.dumps({"phase": phase})]
    results, log = run_dbt_and_capture(args, expect_pass=None)  # type: ignore[arg-type]  # None: either, the log says why
    assert results and all(str(r.status) in ("success", "pass") for r in results), log
    return log


def operation(*args: str, expect_pass: bool = True) -> str:
    result, log = run_dbt_and_capture(["run-operation", *args], expect_pass=None)  # type: ignore[arg-type]  # None: either, the log says why
    assert all(str(r.status) == "success" for r in result.results) == expect_pass, log
    return log


class TestIcebergV3:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "events.sql": EVENTS,
            "schema.yml": SCHEMA_YML,
            "plain.sql": (
                "{{ config(materialized='table', format_version=var('plain_version', none)) }}"
                " select 1 as id"
            ),
            "audited.sql": AUDITED,
            "copy_on_write.sql": COPY_ON_WRITE,
            "audited.yml": not_null_id_tests("audited"),
        }

    def test_v3_tables_evolve_merge_with_deletion_vectors_and_upgrade(self, project) -> None:
        run_phase(1)
        events = iceberg_table(project, "events")
        assert events.format_version == 3
        assert events.schema().find_field("id").doc == "the event's key"
        assert events.properties["comment"] == "events at format v3"
        assert iceberg_table(project, "plain").format_version == 2

        # A merge of 2 changed rows, a new column: schema evolution and the run's state
        # are metadata commits Spark SQL makes; the delete is a deletion vector.
        log = run_phase(2)
        assert "schema evolved" in log
        events = iceberg_table(project, "events")
        assert events.format_version == 3
        assert [f.name for f in events.schema().fields] == ["id", "label", "score"]
        assert delete_file_formats(events) == [FileFormat.PUFFIN]
        rows = table_rows(project, "events", order_by="id")
        assert len(rows) == 100
        assert rows[:3] == [(1, "changed", 10), (2, "changed", 20), (3, "e3", None)]
        assert "audited: staged on branch" in log and "audited: audited" in log
        # Rows 9 and 10 updated, 11 and 12 inserted: exact on v3 (v2 says `None updated`).
        response = adapter_responses(project)["copy_on_write"]
        assert (response["rows_inserted"], response["rows_updated"]) == (2, 2), response
        assert response["rows_deleted"] == 0, response
        assert iceberg_table(project, "audited").format_version == 3
        assert table_rows(project, "audited") == [(1, 2), (2, 2), (3, 2)]

        # Run-level undo of that run: the merge is set back (the added column stays).
        undo = {"invocation_id": last_invocation_id(project)}
        operation("s3tables_rollback", "--args", json.dumps(undo))
        undone = table_rows(project, "events", order_by="id")
        assert undone[:2] == [(1, "e1", None), (2, "e2", None)]
        assert table_rows(project, "audited") == [(1, 1), (2, 1), (3, 1)]
        run_phase(2)

        # The docs catalog reads v3 tables through PyIceberg.
        catalog = run_dbt(["docs", "generate"])
        documented = {node.metadata.name: node for node in catalog.nodes.values()}
        assert list(documented["events"].columns) == ["id", "label", "score"]
        assert documented["events"].stats["rows"].value == 100, documented["events"].stats

        # Partition evolution of a v3 table.
        run_phase(3)
        events = iceberg_table(project, "events")
        assert [f.name for f in events.spec().fields] == ["label"]
        assert len(table_rows(project, "events")) == 100

        # Maintenance counts the deletion vectors as delete files and compacts them away.
        health = project.adapter.iceberg.table_health(project.test_schema, "events")
        assert health.delete_files >= 1
        operation("s3tables_maintain", "--args", "{models: [events], retain_last: 1}")
        health = project.adapter.iceberg.table_health(project.test_schema, "events")
        assert health.delete_files == 0
        assert iceberg_table(project, "events").format_version == 3
        assert len(table_rows(project, "events")) == 100

        plain = f"{project.test_schema}.plain"
        before = iceberg_table(project, "plain")
        files = sorted(f["file_path"] for f in before.inspect.data_files().to_pylist())
        log = operation("s3tables_upgrade_format_version", "--args", f"{{table: {plain}}}")
        assert f"upgraded `{plain}` from Iceberg format v2 to v3" in log, log
        after = iceberg_table(project, "plain")
        assert after.format_version == 3
        assert len(after.metadata.metadata_log) == len(before.metadata.metadata_log) + 1
        assert sorted(f["file_path"] for f in after.inspect.data_files().to_pylist()) == files
        log = operation("s3tables_upgrade_format_version", "--args", f"{{table: {plain}}}")
        assert f"`{plain}` is already at Iceberg format v3: nothing changed" in log, log
        log = operation(
            "s3tables_upgrade_format_version",
            "--args",
            f"{{table: {plain}, version: 2}}",
            expect_pass=False,
        )
        assert "a table's format version never goes down (to v2)" in log, log
        # The table model rebuilt: a replace keeps v3 (a default never downgrades).
        run_dbt(["run", "--select", "plain"])
        assert iceberg_table(project, "plain").format_version == 3
        # A model asking for v2 on it fails before writing, in one sentence with the fix.
        snapshot = iceberg_table(project, "plain").current_snapshot()
        _, log = run_dbt_and_capture(
            ["run", "--select", "plain", "--vars", "{plain_version: 2}"], expect_pass=False
        )
        assert (
            f"Model `plain`, config `format_version`: 2, but its table `{plain}` is at Iceberg "
            "format v3, and Iceberg never lowers a table's format version. Fix: remove "
            "`format_version` from the model"
        ) in log, log
        assert iceberg_table(project, "plain").current_snapshot() == snapshot
