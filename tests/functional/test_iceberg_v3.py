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
from dbt.tests.util import run_dbt, run_dbt_and_capture, write_file
from pyiceberg.manifest import FileFormat

from tests.functional.harness import (
    adapter_responses,
    delete_file_formats,
    iceberg_table,
    last_invocation_id,
    not_null_id_tests,
    relation,
    snapshot_ids,
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


# --- an enforced contract's not_null columns on v3 tables ---

# A table model, an incremental model and an audited table model at v3 with an enforced
# contract whose `id` is not_null. `null_id` puts a NULL in it, `first` drops rows from
# the start, `extra` adds a column (the contract gets it too, see contract_yml).
CONTRACT_SELECT = """
select
  {% if var('null_id', false) %}cast(null as int){% else %}cast(id as int){% endif %} as id,
  concat('n', id) as note
  {% if var('extra', false) %}, 1 as extra{% endif %}
from range({{ var('first', 1) }}, 4) as t(id)
"""
CONTRACT_TABLE = "{{ config(materialized='table', format_version=3) }}" + CONTRACT_SELECT
CONTRACT_INCREMENTAL = (
    "{{ config(materialized='incremental', unique_key='id', format_version=3,"
    " on_schema_change='append_new_columns') }}" + CONTRACT_SELECT
)
CONTRACT_AUDITED = (
    "{{ config(materialized='table', format_version=3, audit_before_publish=true) }}"
    + CONTRACT_SELECT
)
CONTRACT_MODELS = ("contract_table", "contract_incremental", "contract_audited")


def contract_yml(extra: bool = False) -> str:
    """Each contract model's enforced contract: `id` not_null, `note`, and `extra`; the
    audited model's `id` has a not_null test (a build audits it before publishing)."""
    entries = []
    for model in CONTRACT_MODELS:
        tests = ", data_tests: [not_null]" if model == "contract_audited" else ""
        entries.append(
            f"  - name: {model}\n"
            "    config: {contract: {enforced: true}}\n"
            "    columns:\n"
            f"      - {{name: id, data_type: int, constraints: [{{type: not_null}}]{tests}}}\n"
            "      - {name: note, data_type: string}\n"
            + ("      - {name: extra, data_type: int}\n" if extra else "")
        )
    return "version: 2\nmodels:\n" + "".join(entries)


def required_fields(project, name: str) -> dict[str, bool]:
    """Each column of the table and whether the Iceberg schema requires it."""
    return {f.name: f.required for f in iceberg_table(project, name).schema().fields}


def current_snapshot_id(project, name: str) -> int | None:
    snapshot = iceberg_table(project, name).current_snapshot()
    return snapshot.snapshot_id if snapshot else None


def contract_build(*args: str, expect_pass: bool = True) -> tuple[list, str]:
    """`dbt build <args>` (the audited model is audited when its test runs); the models'
    results, each a success (or, not expect_pass, an error)."""
    results, log = run_dbt_and_capture(["build", *args], expect_pass=None)  # type: ignore[arg-type]  # None: either, the log says why
    models = [r for r in results if r.node.resource_type == "model"]
    wanted = "success" if expect_pass else "error"
    assert models and all(str(r.status) == wanted for r in models), log
    if expect_pass:
        assert all(str(r.status) in ("success", "pass") for r in results), log
    return models, log


class TestV3EnforcedContract:
    """A v3 table of the embedded catalog gets its contract's not_null columns as required
    Iceberg fields, as on v2, on a first build, a rebuild, a --full-refresh and an audited
    build. PyIceberg 0.12 cannot write v3 metadata and Spark cannot make a column NOT NULL
    in place: the table is created with its NOT NULL columns declared, then filled in one
    commit; a rebuild is one INSERT OVERWRITE; a rebuild that would change the columns is
    refused before anything is written."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "contract_table.sql": CONTRACT_TABLE,
            "contract_incremental.sql": CONTRACT_INCREMENTAL,
            "contract_audited.sql": CONTRACT_AUDITED,
            "contract.yml": contract_yml(),
        }

    def test_not_null_columns_are_required_on_v3(self, project) -> None:
        _, log = contract_build()
        assert "contract_audited: staged on branch" in log, log
        for model in CONTRACT_MODELS:
            assert iceberg_table(project, model).format_version == 3, model
            assert required_fields(project, model) == {"id": True, "note": False}, model
            assert table_rows(project, model) == [(1, "n1"), (2, "n2"), (3, "n3")], model
        # Another engine writing a NULL is refused by the table itself.
        with pytest.raises(Exception, match="(?i)null value appeared in non-nullable field"):
            project.run_sql(f"insert into {relation(project, 'contract_table')} values (null, 'x')")

        # A rebuild, and --full-refresh: one commit each on top of the table's history,
        # the columns still required.
        history = {
            model: snapshot_ids(project, relation(project, model)) for model in CONTRACT_MODELS
        }
        contract_build("--vars", "{first: 2}")
        assert table_rows(project, "contract_table") == [(2, "n2"), (3, "n3")]
        assert table_rows(project, "contract_audited") == [(2, "n2"), (3, "n3")]
        contract_build("--full-refresh")
        for model in CONTRACT_MODELS:
            assert required_fields(project, model) == {"id": True, "note": False}, model
            assert table_rows(project, model) == [(1, "n1"), (2, "n2"), (3, "n3")], model
            snapshots = snapshot_ids(project, relation(project, model))
            assert snapshots[: len(history[model])] == history[model], model
        assert (
            len(snapshot_ids(project, relation(project, "contract_table")))
            == len(history["contract_table"]) + 2
        )

        # A NULL fails every build with the contract's message; no table moves.
        before = {model: current_snapshot_id(project, model) for model in CONTRACT_MODELS}
        results, _ = contract_build("--vars", "{null_id: true}", expect_pass=False)
        for result in results:
            assert "column `id` is not_null" in result.message, result.message
        for model in CONTRACT_MODELS:
            assert current_snapshot_id(project, model) == before[model], model
            assert required_fields(project, model) == {"id": True, "note": False}, model

        # A rebuild that adds a column cannot keep the table's NOT NULL columns exact in
        # one commit: refused before anything is written, naming the fix.
        write_file(contract_yml(extra=True), project.project_root, "models", "contract.yml")
        table = relation(project, "contract_table")
        results, log = contract_build(
            "--select", "contract_table", "--vars", "{extra: true}", expect_pass=False
        )
        assert (
            f"Model `contract_table`, config `contract`: its table `{table}` is at Iceberg "
            "format v3 and this build changes it (column `extra` is new)"
        ) in results[0].message, log
        assert (
            f"Fix: drop the table (`dbt run-operation s3tables_drop_table --args "
            f"'{{name: {table}}}'`"
        ) in results[0].message, log
        assert current_snapshot_id(project, "contract_table") == before["contract_table"]
        # The incremental model adds it in place; the audited build evolves its schema.
        contract_build(
            "--select", "contract_incremental", "contract_audited", "--vars", "{extra: true}"
        )
        for model in ("contract_incremental", "contract_audited"):
            fields = {"id": True, "note": False, "extra": False}
            assert required_fields(project, model) == fields, model

        # The fix: the table dropped, a first build that fails leaves no table; the next
        # creates it with the new column and `id` required.
        operation("s3tables_drop_table", "--args", f"{{name: {table}}}")
        contract_build(
            "--select",
            "contract_table",
            "--vars",
            "{extra: true, null_id: true}",
            expect_pass=False,
        )
        assert not project.adapter.iceberg.catalog.table_exists(
            (project.test_schema, "contract_table")
        )
        contract_build("--select", "contract_table", "--vars", "{extra: true}")
        fields = {"id": True, "note": False, "extra": False}
        assert required_fields(project, "contract_table") == fields
        assert iceberg_table(project, "contract_table").format_version == 3
