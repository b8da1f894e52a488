"""`upstream_changes(ref(...))`: an incremental model reads each upstream commit exactly
once, with no watermark column; a failed run reads its range again; every range it cannot
read exactly is refused, naming the fix, before anything is written."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

from tests.functional.harness import (
    adapter_responses,
    assert_all_passed,
    batch_model,
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
