"""`upstream_changes(ref(...))`: an incremental model reads each upstream commit exactly
once, with no watermark column; a failed run reads its range again; every range it cannot
read exactly is refused, naming the fix, before anything is written."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.s3tables.incremental.upstream_changes import row_changes_sql
from tests.functional.harness import (
    Project,
    adapter_responses,
    assert_all_passed,
    batch_model,
    kill_while_running,
    last_invocation_id,
    latest_snapshot_summary,
    query_rows,
    relation,
    run_vars,
    snapshot_ids,
)

# The upstream: each batch appends its rows (batch 4 arrives late: old timestamps).
ORDERS = batch_model(
    "materialized='incremental', incremental_strategy='append'",
    {
        1: "select * from values (1, timestamp'2024-01-01 10:00:00'), "
        "(2, timestamp'2024-01-02 10:00:00') as t(id, ordered_at)",
        2: "select * from values (3, timestamp'2024-01-03 10:00:00') as t(id, ordered_at)",
        3: "select * from values (4, timestamp'2024-01-04 10:00:00') as t(id, ordered_at)",
        4: "select * from values (5, timestamp'2024-01-01 09:00:00') as t(id, ordered_at)",
    },
)
# Reads only the upstream's new commits; `fail` makes its write fail after the read.
ORDERS_COPY = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select id, ordered_at from {{ upstream_changes(ref('orders')) }}
where assert_true(not {{ var('fail', false) }}) is null
"""
# The watermark way every adapter documents: misses rows that arrive late.
ORDERS_BY_WATERMARK = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select id, ordered_at from {{ ref('orders') }}
{% if is_incremental() %}
where ordered_at > (select max(ordered_at) from {{ this }})
{% endif %}
"""


def ids(project, table: str) -> list[int]:
    return [row[0] for row in query_rows(project, f"select id from {relation(project, table)}")]


class TestUpstreamChanges:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "orders.sql": ORDERS,
            "orders_copy.sql": ORDERS_COPY,
            "orders_by_watermark.sql": ORDERS_BY_WATERMARK,
        }

    def test_each_commit_is_read_exactly_once(self, project):
        upstream = relation(project, "orders")
        assert_all_passed(run_dbt(["run"]), 3)
        assert ids(project, "orders_copy") == [1, 2]
        read = latest_snapshot_summary(project, relation(project, "orders_copy"))
        key = f"dbt.read.local.{project.test_schema}.orders"
        assert read[key].endswith(f"@{snapshot_ids(project, upstream)[-1]}")

        assert_all_passed(run_dbt(["run", *run_vars(batch=2)]), 3)
        assert ids(project, "orders_copy") == [1, 2, 3]
        reads = adapter_responses(project)["orders_copy"]["upstream_reads"]
        first, second = snapshot_ids(project, upstream)[-2:]
        assert reads == [
            {
                "upstream": f"local.{project.test_schema}.orders",
                "read": "changes",
                "after_snapshot": first,
                "up_to_snapshot": second,
                "commits": ["append"],
                "rows": 1,
                "unique_key": None,
            }
        ]
        # Nothing new upstream: nothing read, nothing duplicated.
        assert_all_passed(run_dbt(["run", "-s", "orders_copy"]), 1)
        assert ids(project, "orders_copy") == [1, 2, 3]

        # A run that fails after its read commits nothing: the next reads the same range.
        assert_all_passed(run_dbt(["run", "-s", "orders", *run_vars(batch=3)]), 1)
        failed = run_dbt(["run", "-s", "orders_copy", *run_vars(fail=True)], expect_pass=False)
        assert failed[0].status == "error"
        assert ids(project, "orders_copy") == [1, 2, 3]
        assert_all_passed(run_dbt(["run", "-s", "orders_copy"]), 1)
        assert ids(project, "orders_copy") == [1, 2, 3, 4]

        # A late row (older than every row already read): the watermark model misses it.
        assert_all_passed(run_dbt(["run", "-s", "orders_by_watermark"]), 1)
        assert_all_passed(run_dbt(["run", "-s", "orders", *run_vars(batch=4)]), 1)
        assert_all_passed(run_dbt(["run", "-s", "orders_copy", "orders_by_watermark"]), 2)
        assert ids(project, "orders_copy") == [1, 2, 3, 4, 5]
        assert ids(project, "orders_by_watermark") == [1, 2, 3, 4]

    def test_ranges_it_cannot_read_exactly_are_refused_before_anything_is_written(self, project):
        copy = relation(project, "orders_copy")
        run_dbt(["run", "--full-refresh"])
        before = snapshot_ids(project, copy)

        # A commit that deletes rows: appended rows alone would be wrong.
        project.run_sql(f"delete from {relation(project, 'orders')} where id = 1")
        refused = run_dbt(["run", "-s", "orders_copy"], expect_pass=False)
        assert "changed or deleted rows (delete)" in refused[0].message
        assert "dbt run -s orders_copy --full-refresh" in refused[0].message
        assert snapshot_ids(project, copy) == before

        # The fix the message names.
        assert_all_passed(run_dbt(["run", "-s", "orders_copy", "--full-refresh"]), 1)
        assert ids(project, "orders_copy") == [2]

        # The upstream replaced by its own --full-refresh: a history the model never read.
        run_dbt(["run", "-s", "orders", "--full-refresh"])
        refused = run_dbt(["run", "-s", "orders_copy"], expect_pass=False)
        assert "no longer in the upstream's history" in refused[0].message

        # The snapshot the model last read expired.
        assert_all_passed(run_dbt(["run", "-s", "orders_copy", "--full-refresh"]), 1)
        assert_all_passed(run_dbt(["run", "-s", "orders", *run_vars(batch=2)]), 1)
        upstream = relation(project, "orders")
        current = snapshot_ids(project, upstream)[-1]
        project.run_sql(
            "call local.system.expire_snapshots(table => "
            f"'{upstream}', older_than => timestamp'2999-01-01 00:00:00', retain_last => 1)"
        )
        assert snapshot_ids(project, upstream) == [current]
        refused = run_dbt(["run", "-s", "orders_copy"], expect_pass=False)
        assert "has expired" in refused[0].message

    def test_an_append_range_is_read_in_the_upstreams_current_columns(self, project):
        """A column added upstream inside the range: the appended rows are read in the
        upstream's current columns (the model selects the ones it names)."""
        run_dbt(["run", "--full-refresh"])
        upstream = relation(project, "orders")
        project.run_sql(f"alter table {upstream} add column note string")
        project.run_sql(
            f"insert into {upstream} values (9, timestamp'2024-02-01 00:00:00', 'a note')"
        )
        assert_all_passed(run_dbt(["run", "-s", "orders_copy"]), 1)
        assert ids(project, "orders_copy") == [1, 2, 9]


# An upstream that updates and deletes: a merge per batch (batch 3 only appends).
CUSTOMERS = batch_model(
    "materialized='incremental', unique_key='id'",
    {
        1: "select * from values (1, 'a'), (2, 'b'), (3, 'c') as t(id, name)",
        2: "select * from values (2, 'B'), (4, 'd') as t(id, name)",
        3: "select * from values (5, 'e') as t(id, name)",
    },
)
# Applies the upstream's row changes: updates update, deletes delete, in one MERGE.
CUSTOMERS_MIRROR = """
{{ config(materialized='incremental', unique_key='id',
          merge_delete_when="_change_type = 'DELETE'") }}
select id, name, _change_type from {{ upstream_changes(ref('customers'), unique_key='id') }}
"""


def rows(project, table: str) -> list[tuple]:
    return query_rows(project, f"select id, name from {relation(project, table)} order by id")


Row = tuple[object, ...]


def netted(before: list[Row], after: list[Row], key_width: int) -> Counter[Row]:
    """The row changes as docs/incremental.md states them, per key (its first `key_width`
    columns): a key whose rows differ as multisets gives each row `after` holds of it, as
    often, as INSERT (no row before) or UPDATE; a key with no row left, each distinct row
    it had, once, as DELETE."""
    changes: Counter[Row] = Counter()
    for key in {row[:key_width] for row in before + after}:
        was = Counter(row for row in before if row[:key_width] == key)
        now = Counter(row for row in after if row[:key_width] == key)
        if was == now:
            continue
        if not now:
            changes.update((*row, "DELETE") for row in was)
        else:
            kind = "UPDATE" if was else "INSERT"
            changes.update({(*row, kind): count for row, count in now.items()})
    return changes


def values_sql(rows: list[Row]) -> str:
    """A query of `rows` (case, k, k2, v), or none of them."""
    if not rows:
        return "(SELECT 0 AS c, 1 AS k, 'a' AS k2, 1 AS v WHERE false)"
    literals = ", ".join(
        "(" + ", ".join("NULL" if v is None else repr(v) for v in row) + ")" for row in rows
    )
    return f"(SELECT c, k, cast(k2 AS string) AS k2, v FROM VALUES {literals} AS t(c, k, k2, v))"


class TestUpstreamRowChanges:
    @pytest.fixture(scope="class")
    def models(self):
        return {"customers.sql": CUSTOMERS, "customers_mirror.sql": CUSTOMERS_MIRROR}

    def test_updates_and_deletes_reach_the_model_through_its_merge(self, project):
        upstream, mirror = relation(project, "customers"), relation(project, "customers_mirror")
        assert_all_passed(run_dbt(["run"]), 2)
        assert rows(project, "customers_mirror") == [(1, "a"), (2, "b"), (3, "c")]

        # Merge-on-read (the default): a merge, then a delete writing a delete file.
        assert_all_passed(run_dbt(["run", "-s", "customers", *run_vars(batch=2)]), 1)
        project.run_sql(f"delete from {upstream} where id = 3")
        assert int(latest_snapshot_summary(project, upstream)["total-delete-files"]) > 0
        results, output = run_dbt_and_capture(["run", "-s", "customers_mirror"])
        assert_all_passed(results, 1)
        # Only what the range changed: the merge's new files, and the rows deleted from
        # the files the merge and the delete wrote delete files for (none removed).
        assert "customers read file by file: " in output and ", 0 removed, " in output
        assert rows(project, "customers_mirror") == [(1, "a"), (2, "B"), (4, "d")]
        changes = query_rows(project, f"select id, _change_type from {mirror} order by id")
        assert changes == [(1, "INSERT"), (2, "UPDATE"), (4, "INSERT")]
        (read,) = adapter_responses(project)["customers_mirror"]["upstream_reads"]
        assert (read["read"], read["unique_key"]) == ("row_changes", ["id"])
        assert read["commits"] == ["overwrite", "delete"]

        # Copy-on-write: an update and a delete rewrite data files.
        project.run_sql(
            f"alter table {upstream} set tblproperties ('write.delete.mode'='copy-on-write', "
            "'write.update.mode'='copy-on-write')"
        )
        project.run_sql(f"update {upstream} set name = 'A' where id = 1")
        project.run_sql(f"delete from {upstream} where id = 4")
        results, output = run_dbt_and_capture(["run", "-s", "customers_mirror"])
        assert_all_passed(results, 1)
        assert "read file by file: " in output and " 0 with rows deleted" in output
        assert rows(project, "customers_mirror") == [(1, "A"), (2, "B")]

        # Read once: a second run with nothing new changes nothing.
        before = snapshot_ids(project, mirror)
        assert_all_passed(run_dbt(["run", "-s", "customers_mirror"]), 1)
        assert rows(project, "customers_mirror") == [(1, "A"), (2, "B")]
        assert len(snapshot_ids(project, mirror)) - len(before) <= 1

    def test_both_nettings_give_the_documented_changes(self, project):
        # Random multisets of rows, many cases at once: the case number leads the key, so
        # each case nets apart. Repeated rows, repeated keys, NULL keys, empty ends.
        rng = random.Random(20261129)
        before: list[Row] = []
        after: list[Row] = []
        for case in range(60):
            for rows in (before, after):
                for _ in range(rng.randint(0, 6)):
                    k = rng.choice([None, 1, 2, 3])
                    rows.append((case, k, rng.choice([None, "a", "b"]), rng.choice([1, 2])))
        columns = ["c", "k", "k2", "v"]
        for keys in (["c", "k"], ["c", "k", "k2"]):
            expected = netted(before, after, len(keys))
            for whole_snapshots in (True, False):
                sql = row_changes_sql(
                    values_sql(before), values_sql(after), columns, keys, whole_snapshots
                )
                got = Counter(tuple(row) for row in project.run_sql(sql, fetch="all"))
                assert got == expected, (keys, whole_snapshots)

    def test_a_schema_change_is_refused_and_a_rollback_read_as_a_difference(self, project):
        upstream, mirror = relation(project, "customers"), relation(project, "customers_mirror")
        run_dbt(["run", "--full-refresh"])

        # A column added after the range's last commit: the range is read in the columns
        # its snapshots were written with.
        project.run_sql(f"update {upstream} set name = 'b1' where id = 2")
        project.run_sql(f"alter table {upstream} add column email string")
        results, output = run_dbt_and_capture(["run", "-s", "customers_mirror"])
        assert_all_passed(results, 1)
        assert (
            "read as the difference of two whole snapshots, not file by file: the upstream's "
            "columns changed after the range"
        ) in output
        assert (2, "b1") in rows(project, "customers_mirror")

        # The upstream's columns change between the range's ends.
        project.run_sql(f"update {upstream} set email = 'x' where id = 1")
        before = snapshot_ids(project, mirror)
        refused = run_dbt(["run", "-s", "customers_mirror"], expect_pass=False)
        assert "columns changed after snapshot" in refused[0].message
        assert "dbt run -s customers_mirror --full-refresh" in refused[0].message
        assert snapshot_ids(project, mirror) == before
        assert_all_passed(run_dbt(["run", "-s", "customers_mirror", "--full-refresh"]), 1)

        # The upstream's run undone after the model read it: a history it never read.
        run_dbt(["run", "-s", "customers", *run_vars(batch=3)])
        upstream_run = last_invocation_id(project)
        assert_all_passed(run_dbt(["run", "-s", "customers_mirror"]), 1)
        assert (5, "e") in rows(project, "customers_mirror")
        _, output = run_dbt_and_capture(
            [
                "run-operation",
                "s3tables_rollback",
                "--args",
                json.dumps({"invocation_id": upstream_run}),
            ]
        )
        # Snapshot 5's read is no longer in the upstream's history, but the snapshot still
        # exists: the difference of the two snapshots is read, and the mirror follows.
        project.run_sql(f"update {upstream} set name = 'b2' where id = 2")
        assert_all_passed(run_dbt(["run", "-s", "customers_mirror"]), 1)
        assert rows(project, "customers_mirror") == rows(project, "customers"), output

    def test_a_deletion_undone_within_the_range_is_read_as_a_difference(self, project):
        """A row the model read as deleted is back at the range's end (the upstream rolled
        back past the delete): its file's deletes shrank, which the file-by-file read
        cannot net, so the two snapshots are compared whole, and the row comes back."""
        upstream = relation(project, "customers")
        assert_all_passed(run_dbt(["run", "--full-refresh"]), 2)
        before_delete = snapshot_ids(project, upstream)[-1]
        project.run_sql(f"delete from {upstream} where id = 2")
        assert_all_passed(run_dbt(["run", "-s", "customers_mirror"]), 1)
        assert rows(project, "customers_mirror") == [(1, "a"), (3, "c")]

        project.run_sql(f"call system.rollback_to_snapshot('{upstream}', {before_delete})")
        project.run_sql(f"update {upstream} set name = 'C' where id = 3")
        results, output = run_dbt_and_capture(["run", "-s", "customers_mirror"])
        assert_all_passed(results, 1)
        assert (
            "read as the difference of two whole snapshots, not file by file: a deletion in "
            "the upstream was undone within the range (a rollback)"
        ) in output
        assert rows(project, "customers_mirror") == [(1, "a"), (2, "b"), (3, "C")]

    def test_only_files_whose_key_bounds_hold_a_changed_key_are_probed(self, project):
        """Keys that grow with time: an update of the newest file's key reads the key
        column of that file alone, not of the older file (its bounds hold no changed key),
        and the mirror still follows."""
        upstream = relation(project, "customers")
        assert_all_passed(run_dbt(["run", "--full-refresh"]), 2)  # ids 1-3: one file
        run_dbt(["run", "-s", "customers", *run_vars(batch=3)])  # id 5: a second file
        assert_all_passed(run_dbt(["run", "-s", "customers_mirror"]), 1)
        project.run_sql(f"update {upstream} set name = 'E' where id = 5")
        results, output = run_dbt_and_capture(["run", "-s", "customers_mirror"])
        assert_all_passed(results, 1)
        probed = re.search(r"the keys of (\d+) of the (\d+) files both ends share read", output)
        assert probed is not None, output
        assert int(probed.group(1)) == 1 and int(probed.group(2)) >= 2, probed.group(0)
        assert rows(project, "customers_mirror") == rows(project, "customers")
        assert (5, "E") in rows(project, "customers_mirror")


# More changed keys than are compared one by one (10,000): the probe for a changed key's
# other rows is pruned by the keys' span. Batch 2 repeats key 3000 in a file of its own.
WIDE = batch_model(
    "materialized='incremental', incremental_strategy='append'",
    {
        1: "select id, 'a' as v from range(12000)",
        2: "select cast(3000 as bigint) as id, 'dup' as v",
    },
)
WIDE_LOG = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select id, v, _change_type from {{ upstream_changes(ref('wide'), unique_key='id') }}
"""


class TestManyChangedKeys:
    @pytest.fixture(scope="class")
    def models(self):
        return {"wide.sql": WIDE, "wide_log.sql": WIDE_LOG}

    def test_a_repeated_keys_row_inside_the_changed_keys_span_is_read(self, project):
        """The update changes 12,000 keys; key 3000 also has a row in a file the update
        does not touch, whose bounds (3000 to 3000) lie inside the span (0 to 11999) but
        hold neither end of it: the read nets that row too, on both sides."""
        wide, log = relation(project, "wide"), relation(project, "wide_log")
        assert_all_passed(run_dbt(["run"]), 2)
        assert_all_passed(run_dbt(["run", "-s", "wide", *run_vars(batch=2)]), 1)
        assert_all_passed(run_dbt(["run", "-s", "wide_log"]), 1)
        project.run_sql(f"update {wide} set v = 'x' where v <> 'dup'")
        results, output = run_dbt_and_capture(["run", "-s", "wide_log"])
        assert_all_passed(results, 1)
        assert "wide read file by file: " in output and "1 other files holding" in output
        key_3000 = f"select v, _change_type from {log} where id = 3000"
        assert query_rows(project, key_3000) == [
            ("a", "INSERT"),
            ("dup", "INSERT"),
            ("dup", "UPDATE"),
            ("x", "UPDATE"),
        ]
        updates = f"select count(*) from {log} where _change_type = 'UPDATE'"
        assert query_rows(project, updates) == [(12001,)]


# An audited upstream; the relationships test reads both models, so the copy is built
# while the upstream's new commits are still staged on its audit branch.
EVENTS = batch_model(
    "materialized='incremental', incremental_strategy='append', audit_before_publish=true",
    {
        1: "select * from values (1), (2) as t(id)",
        2: "select * from values (3) as t(id)",
    },
)
EVENTS_COPY = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select id from {{ upstream_changes(ref('events')) }}
"""
EVENTS_YML = """
version: 2
models:
  - name: events_copy
    columns:
      - name: id
        data_tests:
          - relationships: {to: ref('events'), field: id}
"""


class TestUpstreamStagedForAudit:
    @pytest.fixture(scope="class")
    def models(self):
        return {"events.sql": EVENTS, "events_copy.sql": EVENTS_COPY, "schema.yml": EVENTS_YML}

    def test_a_staged_upstream_is_read_on_its_branch_as_ref_reads_it(self, project):
        upstream = relation(project, "events")
        _, output = run_dbt_and_capture(["build"])
        assert "events: staged on branch" in output
        assert ids(project, "events_copy") == [1, 2]

        _, output = run_dbt_and_capture(["build", *run_vars(batch=2)])
        assert "events: staged on branch" in output
        # The copy read the staged commit; published, it is main's newest snapshot.
        (read,) = adapter_responses(project)["events_copy"]["upstream_reads"]
        assert (read["read"], read["rows"]) == ("changes", 1)
        assert read["up_to_snapshot"] == snapshot_ids(project, upstream)[-1]
        assert ids(project, "events_copy") == [1, 2, 3]

        # Read once: nothing new upstream, nothing read again.
        assert_all_passed(run_dbt(["run", "-s", "events_copy"]), 1)
        assert ids(project, "events_copy") == [1, 2, 3]


# The copy, slowed so that it can be killed while its write runs: each row sleeps (a
# condition Spark cannot fold away).
SLOW_COPY = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select id from {{ upstream_changes(ref('orders')) }}
where length(coalesce(reflect('java.lang.Thread', 'sleep',
                               cast({{ var('sleep_ms', 0) }} as bigint)), 'slept')) > 0
"""


def test_a_run_killed_before_its_commit_reads_its_range_again(tmp_path: Path) -> None:
    project = Project(tmp_path / "project", tmp_path / "warehouse", progress_interval_seconds=1)
    project.model("orders", ORDERS)
    project.model("orders_copy", SLOW_COPY)
    assert project.run("run").returncode == 0
    assert project.run("run", "-s", "orders", *run_vars(batch=2)).returncode == 0
    copy = project.catalog().load_table("faults", "orders_copy")
    committed = [s.snapshot_id for s in copy.snapshots()]

    job = project.start("run", "-s", "orders_copy", *run_vars(sleep_ms=60000), log_path="killed")
    kill_while_running(job, "orders_copy")
    copy = project.catalog().load_table("faults", "orders_copy")
    assert [s.snapshot_id for s in copy.snapshots()] == committed
    assert project.ids("orders_copy") == [1, 2]

    # The next run reads the same range: row 3 once.
    rerun = project.run("run", "-s", "orders_copy")
    assert rerun.returncode == 0, rerun.stdout[-4000:]
    assert project.ids("orders_copy") == [1, 2, 3]
    assert project.run("run", "-s", "orders_copy").returncode == 0
    assert project.ids("orders_copy") == [1, 2, 3]


# --- where upstream_changes() meets other features ------------------------------------------

# An upstream of dated events, appended per batch: batch 2 adds a row to 2024-01-01.
DATED = batch_model(
    "materialized='incremental', incremental_strategy='append'",
    {
        1: "select * from values (1, date'2024-01-01'), (2, date'2024-01-02') as t(id, d)",
        2: "select * from values (3, date'2024-01-01') as t(id, d)",
        3: "select * from values (4, date'2024-01-03') as t(id, d)",
    },
)
# insert_overwrite replaces whole partitions: each must get all of its rows.
DATED_COPY = """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite',
          partition_by=['d']) }}
select id, d from {{ upstream_changes(ref('dated')) }}
"""
DAILY_COUNTS = """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite',
          partition_by=['d']) }}
select d, count(*) as n from {{ upstream_changes(ref('dated')) }} group by d
"""


class TestUpstreamChangesUnderInsertOverwrite:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "dated.sql": DATED,
            "dated_copy.sql": DATED_COPY,
            "daily_counts.sql": DAILY_COUNTS,
        }

    def test_a_partition_that_gains_a_row_keeps_its_old_rows(self, project):
        assert_all_passed(run_dbt(["run"]), 3)
        assert_all_passed(run_dbt(["run", *run_vars(batch=2)]), 3)
        # Not only the new row: the whole 2024-01-01 partition as a full rebuild gives it.
        assert ids(project, "dated_copy") == [1, 2, 3]
        counts = query_rows(project, f"select d, n from {relation(project, 'daily_counts')}")
        assert [(str(d), n) for d, n in counts] == [("2024-01-01", 2), ("2024-01-02", 1)]
        # A partition the changes do not reach is not rewritten.
        before = snapshot_ids(project, relation(project, "dated_copy"))
        assert_all_passed(run_dbt(["run", *run_vars(batch=3)]), 3)
        assert ids(project, "dated_copy") == [1, 2, 3, 4]
        summary = latest_snapshot_summary(project, relation(project, "dated_copy"))
        assert summary["changed-partition-count"] == "1"
        assert len(snapshot_ids(project, relation(project, "dated_copy"))) == len(before) + 1


# Readers no read can be exact in: each is refused in one sentence, nothing written.
EPHEMERAL_CHANGES = """
{{ config(materialized='ephemeral') }}
select id, ordered_at from {{ upstream_changes(ref('orders')) }}
"""
READS_EPHEMERAL = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select id from {{ ref('ephemeral_changes') }}
"""
VIEW_CHANGES = """
{{ config(materialized='view') }}
select id from {{ upstream_changes(ref('orders')) }}
"""
MICROBATCH_CHANGES = """
{{ config(materialized='incremental', incremental_strategy='microbatch',
          event_time='ordered_at', begin='2024-01-01', batch_size='day') }}
select id, ordered_at from {{ upstream_changes(ref('orders')) }}
"""


class TestReadersNoReadCanBeExactInAreRefused:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "orders.sql": ORDERS,
            "ephemeral_changes.sql": EPHEMERAL_CHANGES,
            "reads_ephemeral.sql": READS_EPHEMERAL,
            "view_changes.sql": VIEW_CHANGES,
            "microbatch_changes.sql": MICROBATCH_CHANGES,
        }

    def test_each_is_refused_before_anything_is_written(self, project):
        assert_all_passed(run_dbt(["run", "-s", "orders"]), 1)
        window = ["--event-time-start", "2024-01-01", "--event-time-end", "2024-01-03"]
        for _ in range(2):  # the same on every run (an ephemeral used to read it all again)
            results, output = run_dbt_and_capture(["run", *window], expect_pass=False)
            statuses = {r.node.name: r.status for r in results}
            # dbt reports an ephemeral model's error at the model that selects from it.
            assert statuses["reads_ephemeral"] in ("error", "skipped")
            assert (
                "Model `ephemeral_changes` (materialized `ephemeral`): upstream_changes()" in output
            )
            for name, problem in [
                ("view_changes", "(materialized `view`): upstream_changes() reads"),
                ("microbatch_changes", "microbatch replaces each batch's whole event_time"),
            ]:
                assert statuses[name] in ("error", "partial success"), name
                assert f"Model `{name}`{' ' if '(' in problem else ': '}{problem}" in output
            assert output.count("nothing was read or written") >= 3
            assert "Traceback" not in output
            relations = {
                r.identifier for r in project.adapter.list_relations(None, project.test_schema)
            }
            assert relations == {"orders"}


# A copy whose pre-hook commits on its own table (`prehook`), and whose write can fail.
HOOKED_COPY = """
{{ config(materialized='incremental', incremental_strategy='append',
          pre_hook="{% if var('prehook', false) and is_incremental() %}"
                   ~ "insert into {{ this }} values (-1, timestamp'2000-01-01 00:00:00')"
                   ~ "{% endif %}") }}
select id, ordered_at from {{ upstream_changes(ref('orders')) }}
where assert_true(not {{ var('fail', false) }}) is null
"""


class TestUpstreamReadsMeetHooksAndUndo:
    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS, "orders_copy.sql": HOOKED_COPY}

    def test_a_committing_pre_hook_before_a_failed_write_records_no_read(self, project):
        run_dbt(["run", "--full-refresh"])
        assert_all_passed(run_dbt(["run", "-s", "orders", *run_vars(batch=2)]), 1)
        failed = run_dbt(
            ["run", "-s", "orders_copy", *run_vars(prehook=True, fail=True)], expect_pass=False
        )
        assert failed[0].status == "error"
        # The hook's row committed; the write did not, and its read is not recorded.
        assert ids(project, "orders_copy") == [-1, 1, 2]
        summary = latest_snapshot_summary(project, relation(project, "orders_copy"))
        assert not [key for key in summary if key.startswith("dbt.read.")]
        assert_all_passed(run_dbt(["run", "-s", "orders_copy"]), 1)
        assert ids(project, "orders_copy") == [-1, 1, 2, 3]

    def test_an_undone_read_is_read_again(self, project):
        run_dbt(["run", "--full-refresh"])
        assert_all_passed(run_dbt(["run", "-s", "orders", *run_vars(batch=2)]), 1)
        assert_all_passed(run_dbt(["run", "-s", "orders_copy"]), 1)
        assert ids(project, "orders_copy") == [1, 2, 3]
        reader_run = last_invocation_id(project)
        _, output = run_dbt_and_capture(
            [
                "run-operation",
                "s3tables_rollback",
                "--args",
                json.dumps({"invocation_id": reader_run}),
            ]
        )
        assert ids(project, "orders_copy") == [1, 2]
        assert "its state as before the run (dbt.read." in output
        # The range the undone run read is read again, once.
        for _ in range(2):
            assert_all_passed(run_dbt(["run", "-s", "orders_copy"]), 1)
            assert ids(project, "orders_copy") == [1, 2, 3]


# An upstream whose key repeats: key 1 has two rows until one of them goes.
REPEATED = batch_model(
    "materialized='table'",
    {
        1: "select * from values (1, 'a'), (1, 'b'), (2, 'c') as t(id, name)",
        2: "select * from values (1, 'a'), (2, 'c') as t(id, name)",
        3: "select * from values (2, 'C'), (4, 'd') as t(id, name)",
    },
)
# The same rows in an incremental model, changed in place (never replaced).
REPEATED_IN_PLACE = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select * from values (1, 'a'), (1, 'b'), (2, 'c') as t(id, name)
{% if is_incremental() %} where false {% endif %}
"""
# Every change a keyed read gives, as it gives it.
REPEATED_CHANGES = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select id, name, _change_type, {{ var('batch', 1) }} as batch
from {{ upstream_changes(ref('repeated_in_place'), unique_key='id') }}
"""
# A keyed mirror of a `table` model (rebuilt, CREATE OR REPLACE, on every run) and of a seed.
TABLE_MIRROR = """
{{ config(materialized='incremental', unique_key='id',
          merge_delete_when="_change_type = 'DELETE'") }}
select id, name, _change_type from {{ upstream_changes(ref('repeated'), unique_key='id') }}
where id <> 1
"""
SEED_MIRROR = """
{{ config(materialized='incremental', unique_key='id',
          merge_delete_when="_change_type = 'DELETE'") }}
select id, name, _change_type from {{ upstream_changes(ref('people'), unique_key='id') }}
"""


class TestKeyedReadsOfRebuiltUpstreams:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "repeated.sql": REPEATED,
            "repeated_in_place.sql": REPEATED_IN_PLACE,
            "repeated_changes.sql": REPEATED_CHANGES,
            "table_mirror.sql": TABLE_MIRROR,
            "seed_mirror.sql": SEED_MIRROR,
        }

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"people.csv": "id,name\n1,ann\n2,bob\n"}

    def test_a_key_with_a_row_left_is_updated_not_deleted(self, project):
        upstream = relation(project, "repeated_in_place")
        changes = relation(project, "repeated_changes")
        assert_all_passed(run_dbt(["run", "-s", "repeated_in_place", "repeated_changes"]), 2)
        project.run_sql(f"delete from {upstream} where id = 1 and name = 'b'")
        assert_all_passed(run_dbt(["run", "-s", "repeated_changes", *run_vars(batch=2)]), 1)
        read = f"select id, name, _change_type from {changes} where batch = "
        # Key 1 still has its row `a` upstream: an UPDATE to it, never a DELETE of the key.
        assert query_rows(project, read + "2") == [(1, "a", "UPDATE")]
        project.run_sql(f"delete from {upstream} where id = 1")
        project.run_sql(f"update {upstream} set name = 'C' where id = 2")
        project.run_sql(f"insert into {upstream} values (4, 'd')")
        assert_all_passed(run_dbt(["run", "-s", "repeated_changes", *run_vars(batch=3)]), 1)
        assert query_rows(project, read + "3") == [
            (1, "a", "DELETE"),
            (2, "C", "UPDATE"),
            (4, "d", "INSERT"),
        ]

    def test_a_table_model_and_a_seed_rebuilt_every_run_are_mirrored(self, project):
        run_dbt(["seed"])
        run_dbt(["run", "-s", "repeated", "table_mirror", "seed_mirror", "--full-refresh"])
        mirror = relation(project, "table_mirror")
        for batch in (2, 3, 1):
            assert_all_passed(run_dbt(["run", "-s", "repeated", *run_vars(batch=batch)]), 1)
            assert_all_passed(run_dbt(["run", "-s", "table_mirror", *run_vars(batch=batch)]), 1)
            expected = query_rows(
                project, f"select id, name from {relation(project, 'repeated')} where id <> 1"
            )
            assert query_rows(project, f"select id, name from {mirror}") == expected
        (read,) = adapter_responses(project)["table_mirror"]["upstream_reads"]
        assert read["read"] == "row_changes" and read["commits"] == ["replaced or rolled back"]

        seed_path = Path(project.project_root) / "seeds" / "people.csv"
        for text in ("id,name\n1,ann\n2,BOB\n3,cy\n", "id,name\n3,cy\n"):
            seed_path.write_text(text)
            run_dbt(["seed"])
            assert_all_passed(run_dbt(["run", "-s", "seed_mirror"]), 1)
            expected = query_rows(project, f"select id, name from {relation(project, 'people')}")
            assert (
                query_rows(project, f"select id, name from {relation(project, 'seed_mirror')}")
                == expected
            )


# dbt unit tests of incremental models: is_incremental() (overridden or not) and
# upstream_changes(), whose range is the rows the test gives.
FILTERED_COPY = """
{{ config(materialized='incremental') }}
select id, name from {{ ref('people_source') }}
{% if is_incremental() %} where id > 1 {% endif %}
"""
UNIT_TESTS = """
unit_tests:
  - name: a_first_build_keeps_every_row
    model: filtered_copy
    given:
      - input: ref('people_source')
        rows: [{id: 1, name: a}, {id: 2, name: b}]
    expect:
      rows: [{id: 1, name: a}, {id: 2, name: b}]
  - name: an_incremental_run_filters
    model: filtered_copy
    overrides:
      macros: {is_incremental: true}
    given:
      - input: ref('people_source')
        rows: [{id: 1, name: a}, {id: 2, name: b}]
    expect:
      rows: [{id: 2, name: b}]
  - name: upstream_changes_reads_the_given_rows
    model: people_copy
    given:
      - input: ref('people_source')
        rows: [{id: 7, name: x}]
    expect:
      rows: [{id: 7, name: x}]
  - name: keyed_changes_are_inserts
    model: people_mirror
    given:
      - input: ref('people_source')
        rows: [{id: 7, name: x}]
    expect:
      rows: [{id: 7, name: x, _change_type: INSERT}]
"""


class TestUnitTestsOfIncrementalModels:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "people_source.sql": "{{ config(materialized='table') }}\nselect 1 as id, 'a' as name",
            "filtered_copy.sql": FILTERED_COPY,
            "people_copy.sql": "{{ config(materialized='incremental') }}\n"
            "select id, name from {{ upstream_changes(ref('people_source')) }}\n",
            "people_mirror.sql": "{{ config(materialized='incremental', unique_key='id', "
            "merge_delete_when=\"_change_type = 'DELETE'\") }}\n"
            "select id, name, _change_type "
            "from {{ upstream_changes(ref('people_source'), unique_key='id') }}\n",
            "unit_tests.yml": UNIT_TESTS,
        }

    def test_unit_tests_pass(self, project):
        results = run_dbt(["build"])
        statuses = {r.node.name: str(r.status) for r in results}
        assert statuses == {
            "people_source": "success",
            "filtered_copy": "success",
            "people_copy": "success",
            "people_mirror": "success",
            "a_first_build_keeps_every_row": "pass",
            "an_incremental_run_filters": "pass",
            "upstream_changes_reads_the_given_rows": "pass",
            "keyed_changes_are_inserts": "pass",
        }
