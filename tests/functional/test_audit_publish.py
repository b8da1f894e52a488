"""Write-audit-publish in `dbt build` on the embedded catalog: an audited model's new data
goes to an Iceberg branch, its tests read the branch, and main moves only when they all
pass. A failing test leaves main at the same snapshot with the same rows, the data on a
named branch, and the child unbuilt; a child built while its parent is still staged reads
the staged data and publishes after it; incremental models keep their recorded state
until the publish; `dbt run` writes to main directly."""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.s3tables.incremental.model_state import STATE_KEYS
from dbt.adapters.s3tables.lifecycle.audit import RECORD_PREFIX, audit_branch
from tests.functional.harness import (
    Project,
    kill_while_running,
    last_invocation_id,
    run_vars,
    table_rows,
    write_files,
)

# `round` changes the data; `bad` puts a NULL id in it (the not_null test fails).
ORDERS_SQL = """
{{ config(materialized='table', audit_before_publish=true) }}
select id, {{ var('round', 1) }} as round
from range({{ var('round', 1) }} * 3) as r(id)
{% if var('bad', false) %} union all select cast(null as bigint), {{ var('round', 1) }} {% endif %}
"""
TOTALS_SQL = """
{{ config(materialized='table') }}
select max(round) as round, count(*) as n from {{ ref('orders') }}
"""
EVENTS_SQL = """
{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge',
          audit_before_publish=true) }}
select id, {{ var('round', 1) }} as round from range({{ var('round', 1) }} * 2) as r(id)
{% if var('bad', false) %} union all select cast(null as bigint), {{ var('round', 1) }} {% endif %}
"""
SCHEMA_YML = """
version: 2
models:
  - name: orders
    columns:
      - name: id
        data_tests: [not_null]
  - name: events
    columns:
      - name: id
        data_tests: [not_null]
"""


def rows(project, name: str, branch: str | None = None) -> list[tuple]:
    return table_rows(project, name, order_by="1, 2", branch=branch)


def main_snapshot(project, name: str) -> int | None:
    return project.adapter.iceberg.table_state(project.test_schema, name).snapshot_id


def branches(project, name: str) -> list[str]:
    return list(project.adapter.iceberg.branches(project.test_schema, name).heads)


def model_state(project, name: str) -> dict[str, str]:
    """The incremental state kept on the table (audit records excluded)."""
    properties = project.adapter.iceberg.table_state(project.test_schema, name).properties
    return {k: v for k, v in properties.items() if k in STATE_KEYS}


def statuses(results) -> dict[str, str]:
    return {r.node.name: str(r.status) for r in results}


class TestAuditBeforePublish:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "orders.sql": ORDERS_SQL,
            "totals.sql": TOTALS_SQL,
            "events.sql": EVENTS_SQL,
            "schema.yml": SCHEMA_YML,
        }

    def test_passing_tests_publish(self, project) -> None:
        _, output = run_dbt_and_capture(["build", "--vars", "{round: 1}"])
        assert "orders: staged on branch" in output and "orders: audited" in output
        assert rows(project, "orders") == [(i, 1) for i in range(3)]
        assert rows(project, "totals") == [(1, 3)]
        assert rows(project, "events") == [(i, 1) for i in range(2)]
        # Published: the branches are gone, main holds the data.
        assert branches(project, "orders") == [] and branches(project, "events") == []

    def test_a_failing_test_leaves_main_unchanged(self, project) -> None:
        run_dbt(["build", "--vars", "{round: 1}"])
        before = {n: (main_snapshot(project, n), rows(project, n)) for n in ("orders", "events")}
        totals_before = rows(project, "totals")
        state_before = model_state(project, "events")

        results, output = run_dbt_and_capture(
            ["build", "--vars", "{round: 2, bad: true}"], expect_pass=False
        )
        branch = audit_branch(last_invocation_id(project))
        for name in ("orders", "events"):
            # Main: the same snapshot and the same rows; the staged data is on the branch.
            assert (main_snapshot(project, name), rows(project, name)) == before[name]
            assert branch in branches(project, name)
            staged = rows(project, name, branch)
            assert (None, 2) in staged and {r[1] for r in staged} == {2}
        assert statuses(results)["totals"] == "skipped"
        assert rows(project, "totals") == totals_before
        assert "orders: not published (failing test(s): test.test.not_null_orders_id" in output
        assert f"branch_{branch}" in output  # the log says how to read the staged data
        # The incremental state did not move: the next run compares with the last published.
        assert state_before and model_state(project, "events") == state_before

        # The next run starts from main (not from the failed data) and removes the branch.
        run_dbt(["build", "--vars", "{round: 3}"])
        assert rows(project, "orders") == [(i, 3) for i in range(9)]
        assert rows(project, "totals") == [(3, 9)]
        assert sorted(rows(project, "events")) == [(i, 3) for i in range(6)]
        assert branches(project, "orders") == [] and branches(project, "events") == []

    def test_dbt_run_writes_main_directly(self, project) -> None:
        _, output = run_dbt_and_capture(["run", "--vars", "{round: 4}"])
        assert "orders: audit_before_publish: no test of it runs in this invocation" in output
        assert rows(project, "orders") == [(i, 4) for i in range(12)]
        assert branches(project, "orders") == []


# A test reading both models: the parent is still staged when the child builds.
CHILD_SQL = """
{{ config(materialized='table', audit_before_publish=true) }}
select id as order_id, round from {{ ref('orders') }}
{% if var('orphan', false) %} union all select 999, 0 {% endif %}
"""
RELATIONSHIP_YML = """
version: 2
models:
  - name: orders
    columns:
      - name: id
        data_tests: [not_null]
  - name: child
    columns:
      - name: order_id
        data_tests:
          - relationships: {to: ref('orders'), field: id}
"""


VIEW_SQL = """
{{ config(materialized='view') }}
select * from {{ ref('orders') }}
"""


class TestChildOfAStagedParent:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "orders.sql": ORDERS_SQL,
            "child.sql": CHILD_SQL,
            "orders_view.sql": VIEW_SQL,
            "schema.yml": RELATIONSHIP_YML,
        }

    def test_child_reads_the_staged_parent_and_publishes_after_it(self, project) -> None:
        _, output = run_dbt_and_capture(["build", "--vars", "{round: 1}"])
        # The relationships test reads both: orders is staged when child builds.
        assert "child: staged on branch" in output and "model.test.orders publish" in output
        assert rows(project, "child") == [(i, 1) for i in range(3)]
        assert rows(project, "orders") == [(i, 1) for i in range(3)]
        assert branches(project, "orders") == [] and branches(project, "child") == []

        before = {n: main_snapshot(project, n) for n in ("orders", "child")}
        _, output = run_dbt_and_capture(
            ["build", "--vars", "{round: 2, orphan: true}"], expect_pass=False
        )
        # The relationships test failed: neither publishes; the child was built from the
        # parent's staged rows (round 2), which it holds on its own branch.
        assert {n: main_snapshot(project, n) for n in ("orders", "child")} == before
        branch = audit_branch(last_invocation_id(project))
        assert {r[1] for r in rows(project, "child", branch)} == {0, 2}
        assert "orders: not published" in output and "child: not published" in output
        # The view, built while orders was staged, reads main (a view keeps its query;
        # the branch is not for it): the published rows, not the staged ones.
        assert rows(project, "orders_view") == [(i, 1) for i in range(3)]


# The child reads orders through an ephemeral model (inlined into its query).
EPHEMERAL_SQL = """
{{ config(materialized='ephemeral') }}
select * from {{ ref('orders') }}
"""
CHILD_THROUGH_EPHEMERAL_SQL = """
{{ config(materialized='table') }}
select id as order_id, round from {{ ref('orders_ephemeral') }}
{% if var('orphan', false) %} union all select 999, 0 {% endif %}
"""


class TestChildThroughAnEphemeralModel:
    """A child reading a staged parent through an ephemeral model reads the parent's branch:
    it is staged behind it as a direct child is, never written to main first."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "orders.sql": ORDERS_SQL,
            "orders_ephemeral.sql": EPHEMERAL_SQL,
            "child.sql": CHILD_THROUGH_EPHEMERAL_SQL,
            "schema.yml": RELATIONSHIP_YML,
        }

    def test_the_child_is_staged_behind_the_parent(self, project) -> None:
        _, output = run_dbt_and_capture(["build", "--vars", "{round: 1}"])
        assert "child: staged on branch" in output and "model.test.orders publish" in output
        assert rows(project, "child") == [(i, 1) for i in range(3)]

        _, output = run_dbt_and_capture(
            ["build", "--vars", "{round: 2, orphan: true}"], expect_pass=False
        )
        # The relationships test failed: the child, built from the staged rows, stays on
        # its branch with them; its main keeps the published rows.
        assert rows(project, "child") == [(i, 1) for i in range(3)]
        assert rows(project, "orders") == [(i, 1) for i in range(3)]
        branch = audit_branch(last_invocation_id(project))
        assert {r[1] for r in rows(project, "child", branch)} == {0, 2}
        assert "child: not published" in output


SEED_CSV = "code,name\nA,alpha\nB,beta\n"
SEED_YML = """
version: 2
seeds:
  - name: codes
    config:
      audit_before_publish: true
      # Maintenance follows the publish (never a failed audit).
      maintenance:
        when: {snapshots_above: 1}
        operations: [expire_snapshots]
        snapshots_older_than_days: 0
        retain_last: 1
    columns:
      - name: name
        data_tests: [not_null]
"""


class TestAuditedSeed:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"codes.csv": SEED_CSV}

    @pytest.fixture(scope="class")
    def models(self):
        return {"schema.yml": SEED_YML}

    def test_a_seed_publishes_only_when_its_tests_pass(self, project) -> None:
        _, output = run_dbt_and_capture(["build"])
        assert rows(project, "codes") == [("A", "alpha"), ("B", "beta")]
        snapshot = main_snapshot(project, "codes")
        # Created empty, then filled on the branch: 2 snapshots, 1 kept by the maintenance.
        assert output.index("codes: audited") < output.index("(snapshots 2 > 1)")
        assert project.adapter.iceberg.table_health(project.test_schema, "codes").snapshots == 1

        Path(project.project_root, "seeds", "codes.csv").write_text("code,name\nC,gamma\nD,\n")
        _, output = run_dbt_and_capture(["build"], expect_pass=False)
        assert "codes: not published" in output and "(snapshots" not in output
        assert main_snapshot(project, "codes") == snapshot
        assert rows(project, "codes") == [("A", "alpha"), ("B", "beta")]
        branch = audit_branch(last_invocation_id(project))
        assert rows(project, "codes", branch) == [("C", "gamma"), ("D", None)]


# A post-hook writes to main after the staged write: main is no longer the branch's ancestor.
MOVED_SQL = """
{{ config(materialized='table', audit_before_publish=true,
          post_hook="insert into " ~ this ~ " select -1, -1") }}
select id, 1 as round from range(3) as r(id)
"""
MOVED_YML = """
version: 2
models:
  - name: moved
    columns:
      - name: id
        data_tests: [not_null]
"""


class TestMainMovedBeforeThePublish:
    @pytest.fixture(scope="class")
    def models(self):
        return {"moved.sql": MOVED_SQL, "schema.yml": MOVED_YML}

    def test_the_publish_fails_the_test_node_naming_the_branch(self, project) -> None:
        results, output = run_dbt_and_capture(["build"], expect_pass=False)
        assert statuses(results) == {"moved": "success", "not_null_moved_id": "error"}
        assert "moved: its tests passed but the publish failed" in output
        branch = audit_branch(last_invocation_id(project))
        assert f"branch {branch}" in output and "Fix: rerun the model" in output
        # main holds what the other writer committed, the branch the staged rows.
        assert rows(project, "moved") == [(-1, -1)]
        assert rows(project, "moved", branch) == [(i, 1) for i in range(3)]


LENIENT_YML = SCHEMA_YML.replace(
    "data_tests: [not_null]", "data_tests: [{not_null: {config: {error_if: '>5'}}}]"
)


def record_keys(project, name: str) -> list[str]:
    properties = project.adapter.iceberg.table_state(project.test_schema, name).properties
    return [k for k in properties if k.startswith(RECORD_PREFIX)]


class TestRetryAfterAFailedAudit:
    """`dbt retry` re-runs only the failed test: it must audit the staged build again,
    never pass on main while that build stays unpublished."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS_SQL, "events.sql": EVENTS_SQL, "schema.yml": SCHEMA_YML}

    def test_a_retry_audits_the_staged_build_again(self, project) -> None:
        run_dbt(["build", "--vars", "{round: 1}"])
        published = {n: rows(project, n) for n in ("orders", "events")}
        state = model_state(project, "events")
        run_dbt(["build", "--vars", "{round: 2, bad: true}"], expect_pass=False)
        branch = audit_branch(last_invocation_id(project))

        # The retry's tests read the staged data: they fail again, main does not move.
        results, output = run_dbt_and_capture(["retry"], expect_pass=False)
        assert statuses(results) == {"not_null_orders_id": "fail", "not_null_events_id": "fail"}
        assert f"orders: the build staged on branch {branch} was not published" in output
        assert {n: rows(project, n) for n in published} == published
        assert model_state(project, "events") == state

        # With the test made lenient, a retry passes on the staged data and publishes it.
        Path(project.project_root, "models", "schema.yml").write_text(LENIENT_YML)
        results, output = run_dbt_and_capture(["retry"])
        assert set(statuses(results).values()) == {"warn"}
        for name in ("orders", "events"):
            assert f"{name}: audited (1 test(s) passed) and published" in output
            assert (None, 2) in rows(project, name)
            assert branches(project, name) == [] and record_keys(project, name) == []
        # The incremental state kept for the publish landed with it.
        assert model_state(project, "events") != state


# Gates orders: every round it holds must be listed in `rounds`, a table the test creates
# when it wants the test to find it (until then the test errors: its query cannot run).
ROUNDS_TEST_SQL = """
select * from {{ ref('orders') }}
where round not in (select round from {{ target.schema }}.rounds)
"""


def make_rounds(project, *rounds: int) -> None:
    """The `rounds` table the gating tests read, holding `rounds` (dropped first)."""
    drop_rounds(project)
    values = ", ".join(f"({r})" for r in rounds)
    project.run_sql(
        f"create table {project.test_schema}.rounds using iceberg as "
        f"select * from values {values} as t(round)"
    )


def drop_rounds(project) -> None:
    project.run_sql(f"drop table if exists {project.test_schema}.rounds purge")


class TestRetryAfterAnErroredAudit:
    """A gating test that errors (its query cannot run) never reports: the staged build
    must end unpublished, and `dbt retry` must audit it again, never pass on main."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS_SQL}

    @pytest.fixture(scope="class")
    def tests(self):
        return {"orders_rounds_listed.sql": ROUNDS_TEST_SQL}

    def test_a_retry_audits_the_staged_build_again_and_publishes_it(self, project) -> None:
        make_rounds(project, 1)
        run_dbt(["build", "--vars", "{round: 1}"])
        published = rows(project, "orders")
        drop_rounds(project)
        results, build_output = run_dbt_and_capture(
            ["build", "--vars", "{round: 2}"], expect_pass=False
        )
        assert statuses(results) == {"orders": "success", "orders_rounds_listed": "error"}
        branch = audit_branch(last_invocation_id(project))
        assert rows(project, "orders") == published
        assert {r[1] for r in rows(project, "orders", branch)} == {2}

        # The retry's test reads the staged data (round 2): not listed, it fails.
        make_rounds(project, 1)
        results, output = run_dbt_and_capture(["retry"], expect_pass=False)
        assert statuses(results) == {"orders_rounds_listed": "fail"}
        assert f"orders: the build staged on branch {branch} was not published" in output
        assert rows(project, "orders") == published

        # Listed, it passes on the staged data, which is published.
        make_rounds(project, 2)
        results, output = run_dbt_and_capture(["retry"])
        assert statuses(results) == {"orders_rounds_listed": "pass"}
        assert "orders: audited (1 test(s) passed) and published" in output
        assert rows(project, "orders") == [(i, 2) for i in range(6)]
        assert branches(project, "orders") == [] and record_keys(project, "orders") == []
        # The build whose test errored said, at its end, what it left and the fix.
        assert f"orders: left unpublished on branch {branch}" in build_output
        assert "Fix: " in build_output.split(f"orders: left unpublished on branch {branch}")[1]


# `child` is staged only because orders is (no audit of its own): a test reading both
# (child first) still has to run when child builds. `order_ids` is staged the same way,
# but its own test passes: only its parent's test, which errors, keeps it unpublished.
PLAIN_CHILD_SQL = """
{{ config(materialized='table') }}
select id as order_id, round from {{ ref('orders') }}
"""
CHILD_ROUNDS_TEST_SQL = """
select c.* from {{ ref('child') }} as c join {{ ref('orders') }} as o on c.order_id = o.id
where c.round not in (select round from {{ target.schema }}.rounds)
"""
# Reads orders and a source, which order_ids does not read: order_ids does not wait for it.
SOURCE_ROUNDS_TEST_SQL = """
select * from {{ ref('orders') }}
where round not in (select round from {{ source('reference', 'rounds') }})
"""
FAMILY_YML = """
version: 2
sources:
  - name: reference
    schema: "{{ target.schema }}"
    tables: [{name: rounds}]
models:
  - name: orders
    columns:
      - name: id
        data_tests: [not_null]
  - name: order_ids
    columns:
      - name: order_id
        data_tests: [not_null]
"""


class TestRetryOfChildrenStagedBehindTheirParent:
    """Models built while their parent was staged are staged behind it: when the parent's
    test errors, `dbt retry` must publish them with their parent, or not go green."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "orders.sql": ORDERS_SQL,
            "child.sql": PLAIN_CHILD_SQL,
            "order_ids.sql": PLAIN_CHILD_SQL,
            "schema.yml": FAMILY_YML,
        }

    @pytest.fixture(scope="class")
    def tests(self):
        return {
            "child_rounds_listed.sql": CHILD_ROUNDS_TEST_SQL,
            "orders_rounds_listed.sql": SOURCE_ROUNDS_TEST_SQL,
        }

    def test_the_retry_publishes_the_parent_then_its_children(self, project) -> None:
        make_rounds(project, 1)
        run_dbt(["build", "--vars", "{round: 1}"])
        models = ("orders", "child", "order_ids")
        published = {n: rows(project, n) for n in models}
        drop_rounds(project)
        results, output = run_dbt_and_capture(["build", "--vars", "{round: 2}"], expect_pass=False)
        assert statuses(results) == {
            "orders": "success",
            "not_null_orders_id": "pass",
            "child": "success",
            "order_ids": "success",
            "not_null_order_ids_order_id": "pass",
            "child_rounds_listed": "error",
            "orders_rounds_listed": "error",
        }
        # Both children were built from the staged orders, and staged behind it.
        branch = audit_branch(last_invocation_id(project))
        assert "child: staged on branch" in output and "order_ids: staged on branch" in output
        for name in models:
            assert rows(project, name) == published[name]
            assert {r[1] for r in rows(project, name, branch)} == {2}

        # Only round 2 listed: the retry's tests pass only on the staged data (child's
        # main is round 1), and order_ids, which no retried test reads, publishes too.
        make_rounds(project, 2)
        results, output = run_dbt_and_capture(["retry"])
        assert statuses(results) == {"child_rounds_listed": "pass", "orders_rounds_listed": "pass"}
        for name in models:
            assert {r[1] for r in rows(project, name)} == {2}, name
            assert branches(project, name) == [] and record_keys(project, name) == [], name


# Gates orders; sleeps on each row when told, so that its run can be killed while it runs
# (a condition Spark cannot fold away); passes otherwise.
SLOW_TEST_SQL = """
select * from {{ ref('orders') }}
where length(coalesce(reflect('java.lang.Thread', 'sleep',
                               cast({{ var('sleep_ms', 0) }} as bigint)), 'slept')) = 0
"""


def test_a_build_killed_before_its_audit_is_audited_by_the_next_dbt_test(tmp_path: Path) -> None:
    """A `dbt build` killed after staging, before its tests reported: the next `dbt test`
    audits the staged build (its process is gone) and publishes it, never green on main."""
    project = Project(tmp_path / "project", tmp_path / "warehouse", progress_interval_seconds=1)
    project.model("orders", ORDERS_SQL)
    write_files(project.root, {"tests/orders_slow_check.sql": SLOW_TEST_SQL})
    built = project.run("build", *run_vars(round=1))
    assert built.returncode == 0, built.stdout[-4000:]

    job = project.start("build", *run_vars(round=2, sleep_ms=60000), log_path="killed")
    kill_while_running(job, "orders_slow_check")
    assert project.ids("orders") == [0, 1, 2]
    (branch,) = project.catalog().branches("faults", "orders").heads

    tested = project.run("test")
    assert tested.returncode == 0, tested.stdout[-4000:]
    assert f"orders: the build staged on branch {branch} was not published" in tested.stdout
    assert project.ids("orders") == list(range(6))
    assert project.catalog().branches("faults", "orders").heads == {}


# An audited model whose one test has two parents (a `relationships` test: dbt's children
# do not wait for it), with a snapshot and an incremental reader of its changes downstream.
CUSTOMERS_SQL = """
{{ config(materialized='table') }}
select cast(id as bigint) as id from range(1, 4) as r(id)
"""
PLACED_SQL = """
{{ config(materialized='incremental', unique_key='id', audit_before_publish=true) }}
select cast(id as bigint) as id, cast(id as bigint) as customer_id from range(1, 4) as r(id)
{% if var('bad', false) %} union all select cast(99 as bigint), cast(99 as bigint) {% endif %}
"""
PLACED_SNAPSHOT = """
{% snapshot placed_history %}
{{ config(unique_key='id', strategy='check', check_cols='all') }}
select * from {{ ref('placed') }}
{% endsnapshot %}
"""
PLACED_COPY_SQL = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select id from {{ upstream_changes(ref('placed')) }}
"""
PLACED_YML = """
version: 2
models:
  - name: placed
    columns:
      - name: customer_id
        data_tests:
          - relationships: {to: ref('customers'), field: id}
"""


class TestChildrenOfAnAuditWithATwoParentTest:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "customers.sql": CUSTOMERS_SQL,
            "placed.sql": PLACED_SQL,
            "placed_copy.sql": PLACED_COPY_SQL,
            "placed.yml": PLACED_YML,
        }

    @pytest.fixture(scope="class")
    def snapshots(self):
        return {"placed_history.sql": PLACED_SNAPSHOT}

    def test_no_child_reads_the_rows_the_audit_rejected(self, project):
        # Built unaudited first (no test runs): a snapshot reads main only.
        run_dbt(["run"])
        run_dbt(["snapshot"])
        history = f"`{project.test_schema}`.placed_history"
        assert sorted(r[0] for r in project.run_sql(f"select id from {history}", fetch="all")) == [
            1,
            2,
            3,
        ]
        results = run_dbt(["build", *run_vars(bad=True)], expect_pass=False)
        assert statuses(results)["relationships_placed_customer_id__id__ref_customers_"] == "fail"
        # main is unchanged, and neither child holds the rejected row 99.
        assert [r[0] for r in rows(project, "placed")] == [1, 2, 3]
        snapshot_ids = project.run_sql(f"select id from {history}", fetch="all")
        assert 99 not in [r[0] for r in snapshot_ids]
        assert 99 not in [r[0] for r in table_rows(project, "placed_copy")]
