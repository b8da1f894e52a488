"""Partition evolution end to end: a model's `partition_by` changes between two runs and
the next run evolves the table's Iceberg spec in metadata, without a rebuild.

Each model takes partitioning A while `var('phase')` is 1 and B after; its rows also
depend on the phase. Specs and data files are read through PyIceberg: the table's spec
is B, the files of run 1 keep spec A (a rebuild would have rewritten them under B), run
1's snapshot stays an ancestor of the current one, and the rows are exactly the expected
ones. insert_overwrite replaces, in runs 2 and 3, day partitions whose old rows sit in a
file that run 1 wrote under a monthly spec, with MERGE and without (use_merge false).
"""

from __future__ import annotations

import datetime
import json

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture
from pyiceberg.table import Table
from pyiceberg.table.snapshots import ancestors_of

from tests.functional.harness import iceberg_table, table_rows


def phased_model(config: str, partition_a: list[str], partition_b: list[str], rows: dict) -> str:
    """An incremental model partitioned by `partition_a` in phase 1 and `partition_b`
    after, returning `rows[phase]` as (id, ts, label)."""
    lines = [
        "{{ config(materialized='incremental', " + config + ", partition_by=("
        f"{partition_a!r} if var('phase', 1) == 1 else {partition_b!r})) }}}}"
    ]
    for index, (phase, values) in enumerate(sorted(rows.items())):
        keyword = "if" if index == 0 else "elif"
        tuples = ", ".join(f"({i}, '{ts}', '{label}')" for i, ts, label in values)
        lines.append(f"{{% {keyword} var('phase', 1) == {phase} %}}")
        lines.append(
            f"select id, cast(ts as timestamp) as ts, label from values {tuples} "
            "as t(id, ts, label)"
        )
    lines.append("{% endif %}")
    return "\n".join(lines) + "\n"


def run_phase(phase: int) -> str:
    """One `dbt run` of the project in `phase` (every model must pass); its log."""
    results, log = run_dbt_and_capture(["run", "--vars", json.dumps({"phase": phase})])
    assert results and all(str(r.status) == "success" for r in results)
    return log


def fields(table: Table, spec_id: int | None = None) -> list[tuple[str, str]]:
    """A spec's fields (the current spec by default) as (source column, transform)."""
    spec = table.spec() if spec_id is None else table.specs()[spec_id]
    schema = table.schema()
    return [(schema.find_column_name(f.source_id), str(f.transform)) for f in spec.fields]


def records_by_spec(table: Table) -> dict[tuple[tuple[str, str], ...], int]:
    """Rows physically held by the live data files, per partition spec of the file."""
    counts: dict[tuple[tuple[str, str], ...], int] = {}
    for data_file in table.inspect.data_files().to_pylist():
        spec = tuple(fields(table, data_file["spec_id"]))
        counts[spec] = counts.get(spec, 0) + data_file["record_count"]
    return counts


def current_snapshot_id(table: Table) -> int:
    snapshot = table.current_snapshot()
    assert snapshot is not None
    return snapshot.snapshot_id


def ancestor_ids(table: Table) -> list[int]:
    return [s.snapshot_id for s in ancestors_of(table.current_snapshot(), table.metadata)]


def rows(project, name: str) -> list[tuple]:
    return table_rows(project, name, "id, ts, label")


def ts(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text)


DAY = [("ts", "day")]
MONTH_BUCKET = [("ts", "month"), ("id", "bucket[4]")]

APPEND_ROWS = {
    1: [(1, "2024-01-05 10:00:00", "a"), (2, "2024-01-06 10:00:00", "b"),
        (3, "2024-02-01 10:00:00", "c")],
    2: [(4, "2024-01-05 11:00:00", "d"), (5, "2024-03-01 10:00:00", "e")],
    3: [(6, "2024-03-02 10:00:00", "f")],
}  # fmt: skip


class TestAppendAcrossAPartitionChange:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "evolving_append.sql": phased_model(
                "incremental_strategy='append'",
                ["days(ts)"],
                ["months(ts)", "bucket(4, id)"],
                APPEND_ROWS,
            )
        }

    def test_the_spec_evolves_in_metadata_and_old_files_keep_theirs(self, project):
        run_phase(1)
        table = iceberg_table(project, "evolving_append")
        assert fields(table) == DAY
        first_snapshot = current_snapshot_id(table)

        log = run_phase(2)
        assert "evolving_append: partition spec evolved: day(ts) -> month(ts), bucket(4, id)" in log
        assert "partition_by changed" not in log
        table = iceberg_table(project, "evolving_append")
        assert fields(table) == MONTH_BUCKET
        # Run 1's rows stay in their files under the daily spec; run 2's are under the new one.
        assert records_by_spec(table) == {tuple(DAY): 3, tuple(MONTH_BUCKET): 2}
        # No rebuild: run 1's snapshot is the parent of run 2's, the totals add up.
        assert ancestor_ids(table)[:2] == [current_snapshot_id(table), first_snapshot]
        assert table.current_snapshot().summary["total-records"] == "5"
        expected = [(i, ts(t), label) for i, t, label in APPEND_ROWS[1] + APPEND_ROWS[2]]
        assert rows(project, "evolving_append") == sorted(expected)

        # A field added outside dbt: the next run brings the spec back to the config.
        project.run_sql(
            "alter table {schema}.evolving_append add partition field truncate(2, label)"
        )
        log = run_phase(3)
        assert (
            "partition spec evolved: month(ts), bucket(4, id), truncate(2, label) "
            "-> month(ts), bucket(4, id)" in log
        )
        table = iceberg_table(project, "evolving_append")
        assert fields(table) == MONTH_BUCKET
        assert records_by_spec(table) == {tuple(DAY): 3, tuple(MONTH_BUCKET): 3}

        # Compaction rewrites the old files under the current spec, rows unchanged.
        arguments = "{models: [evolving_append], operations: [compact]}"
        run_dbt(["run-operation", "s3tables_maintain", "--args", arguments])
        assert records_by_spec(iceberg_table(project, "evolving_append")) == {
            tuple(MONTH_BUCKET): 6
        }
        assert rows(project, "evolving_append") == sorted(
            (i, ts(t), label) for i, t, label in APPEND_ROWS[1] + APPEND_ROWS[2] + APPEND_ROWS[3]
        )


OVERWRITE_ROWS = {
    1: [(1, "2024-01-05 10:00:00", "old"), (2, "2024-01-06 10:00:00", "old"),
        (3, "2024-02-01 10:00:00", "old")],
    # Day 2024-01-05 again (its old row is in run 1's January file), and a new day.
    2: [(4, "2024-01-05 11:00:00", "new"), (5, "2024-03-01 10:00:00", "new")],
    # No spec change in this run, but run 1's files are still under the monthly spec.
    3: [(6, "2024-02-01 12:00:00", "newer")],
}  # fmt: skip


OVERWRITE_AFTER_RUN_2 = [
    (2, ts("2024-01-06 10:00:00"), "old"),
    (3, ts("2024-02-01 10:00:00"), "old"),
    (4, ts("2024-01-05 11:00:00"), "new"),
    (5, ts("2024-03-01 10:00:00"), "new"),
]
OVERWRITE_AFTER_RUN_3 = [
    (2, ts("2024-01-06 10:00:00"), "old"),
    (4, ts("2024-01-05 11:00:00"), "new"),
    (5, ts("2024-03-01 10:00:00"), "new"),
    (6, ts("2024-02-01 12:00:00"), "newer"),
]


class TestInsertOverwriteAcrossAPartitionChange:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            f"{name}.sql": phased_model(
                f"incremental_strategy='insert_overwrite', use_merge={use_merge!r}",
                ["months(ts)"],
                ["days(ts)"],
                OVERWRITE_ROWS,
            )
            for name, use_merge in (
                ("evolving_overwrite", "auto"),
                ("evolving_overwrite_without_merge", "false"),
            )
        }

    def test_partitions_of_old_spec_files_are_replaced_without_duplicates(self, project):
        run_phase(1)
        table = iceberg_table(project, "evolving_overwrite")
        first_snapshot = current_snapshot_id(table)
        snapshots = len(table.snapshots())

        log = run_phase(2)
        assert "partition spec evolved: month(ts) -> day(ts)" in log
        table = iceberg_table(project, "evolving_overwrite")
        assert fields(table) == DAY
        # Day 01-05 is replaced, day 01-06 (same old monthly file) and day 02-01 stay.
        assert rows(project, "evolving_overwrite") == OVERWRITE_AFTER_RUN_2
        assert rows(project, "evolving_overwrite_without_merge") == OVERWRITE_AFTER_RUN_2
        assert "evolving_overwrite: the table holds files written under an earlier" in log
        assert "evolving_overwrite: insert_overwrite writes with MERGE INTO" in log
        assert (
            "evolving_overwrite_without_merge: insert_overwrite writes with INSERT OVERWRITE "
            "of the whole table" in log
        )
        # One data commit on top of run 1's; run 1's files are not rewritten (the replaced
        # row is deleted by a delete file), and keep the monthly spec.
        assert len(table.snapshots()) == snapshots + 1
        assert ancestor_ids(table)[1] == first_snapshot
        assert records_by_spec(table) == {(("ts", "month"),): 3, tuple(DAY): 2}

        log = run_phase(3)
        assert "partition spec evolved" not in log
        assert "evolving_overwrite: the table holds files written under an earlier" in log
        assert rows(project, "evolving_overwrite") == OVERWRITE_AFTER_RUN_3
        assert len(iceberg_table(project, "evolving_overwrite").snapshots()) == snapshots + 2
        # Its whole-table rewrite left no file under the monthly spec: dynamic overwrite again.
        assert "without_merge: the table holds files written under an earlier" not in log
        assert rows(project, "evolving_overwrite_without_merge") == OVERWRITE_AFTER_RUN_3


MERGE_ROWS = {
    1: [(1, "2024-01-05 10:00:00", "a"), (2, "2024-01-06 10:00:00", "b"),
        (3, "2024-02-01 10:00:00", "c")],
    # Key 2 updated (its old row is in a file of the bucket spec), key 4 new.
    2: [(2, "2024-01-07 10:00:00", "B"), (4, "2024-03-01 10:00:00", "d")],
}  # fmt: skip


class TestMergeAcrossAPartitionChange:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "evolving_merge.sql": phased_model(
                "unique_key='id'", ["bucket(2, id)"], ["days(ts)", "label"], MERGE_ROWS
            )
        }

    def test_matched_rows_in_old_spec_files_are_updated(self, project):
        run_phase(1)
        first_snapshot = current_snapshot_id(iceberg_table(project, "evolving_merge"))

        log = run_phase(2)
        assert "partition spec evolved: bucket(2, id) -> day(ts), label" in log
        table = iceberg_table(project, "evolving_merge")
        assert fields(table) == [("ts", "day"), ("label", "identity")]
        assert rows(project, "evolving_merge") == [
            (1, ts("2024-01-05 10:00:00"), "a"),
            (2, ts("2024-01-07 10:00:00"), "B"),
            (3, ts("2024-02-01 10:00:00"), "c"),
            (4, ts("2024-03-01 10:00:00"), "d"),
        ]
        assert ancestor_ids(table)[1] == first_snapshot
        new_spec = (("ts", "day"), ("label", "identity"))
        assert records_by_spec(table) == {(("id", "bucket[2]"),): 3, new_spec: 2}
