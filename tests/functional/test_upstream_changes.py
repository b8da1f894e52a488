"""`upstream_changes(ref(...))`: an incremental model reads each upstream commit exactly
once, with no watermark column; a failed run reads its range again; every range it cannot
read exactly is refused, naming the fix, before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

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
        assert_all_passed(run_dbt(["run", "-s", "customers_mirror"]), 1)
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
        assert_all_passed(run_dbt(["run", "-s", "customers_mirror"]), 1)
        assert rows(project, "customers_mirror") == [(1, "A"), (2, "B")]

        # Read once: a second run with nothing new changes nothing.
        before = snapshot_ids(project, mirror)
        assert_all_passed(run_dbt(["run", "-s", "customers_mirror"]), 1)
        assert rows(project, "customers_mirror") == [(1, "A"), (2, "B")]
        assert len(snapshot_ids(project, mirror)) - len(before) <= 1

    def test_a_schema_change_or_a_rollback_in_the_range_is_refused(self, project):
        upstream, mirror = relation(project, "customers"), relation(project, "customers_mirror")
        run_dbt(["run", "--full-refresh"])

        # A column added after the range's last commit: the range is read in the columns
        # its snapshots were written with.
        project.run_sql(f"update {upstream} set name = 'b1' where id = 2")
        project.run_sql(f"alter table {upstream} add column email string")
        assert_all_passed(run_dbt(["run", "-s", "customers_mirror"]), 1)
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
        project.run_sql(f"update {upstream} set name = 'b2' where id = 2")
        refused = run_dbt(["run", "-s", "customers_mirror"], expect_pass=False)
        assert "no longer in the upstream's history" in refused[0].message, output


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
