"""microbatch: each batch replaces exactly its window in one commit; explicit
--event-time-start/--event-time-end backfills; a failed batch leaves the table as it was
and is retried alone."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

from tests.functional.harness import relation, snapshot_count, table_rows

EVENTS = """
{{ config(materialized='table', event_time='event_ts') }}
select * from values
  (1, timestamp '2024-03-01 10:00:00', {{ var('amount', 10) }}),
  (2, timestamp '2024-03-02 10:00:00', {{ var('amount', 10) }}),
  (3, timestamp '2024-03-03 10:00:00', {{ var('amount', 10) }})
  as t(id, event_ts, amount)
"""

DAILY = """
{{ config(materialized='incremental', incremental_strategy='microbatch',
          event_time='event_ts', begin='2024-03-01', batch_size='day') }}
select id, event_ts,
  {% if var('fail_day', '') %}
  case when cast(event_ts as date) = date '{{ var("fail_day", "") }}'
       then raise_error('boom') else amount end as amount
  {% else %}amount{% endif %}
from {{ ref('events') }}
"""

WINDOW = ["--event-time-start", "2024-03-01", "--event-time-end", "2024-03-04"]


def rows(project) -> list[tuple]:
    return table_rows(project, "daily", "id, amount", order_by="id")


class TestMicrobatch:
    @pytest.fixture(scope="class")
    def models(self):
        return {"events.sql": EVENTS, "daily.sql": DAILY}

    def test_backfill_window_and_failed_batch(self, project):
        daily = relation(project, "daily")
        run_dbt(["run", *WINDOW])
        assert rows(project) == [(1, 10), (2, 10), (3, 10)]

        # Backfill one day with new input: only that day's rows change, in one commit.
        run_dbt(["run", "--select", "events", "--vars", "{amount: 20}"])
        before = snapshot_count(project, daily)
        run_dbt(
            [
                "run",
                "--select",
                "daily",
                "--vars",
                "{amount: 20}",
                "--event-time-start",
                "2024-03-02",
                "--event-time-end",
                "2024-03-03",
            ]
        )
        assert rows(project) == [(1, 10), (2, 20), (3, 10)]
        assert snapshot_count(project, daily) == before + 1

        # The batch of 2024-03-03 fails: the others commit, that day stays as it was.
        run_dbt(["run", "--select", "events", "--vars", "{amount: 30}"])
        before = snapshot_count(project, daily)
        run_dbt(
            ["run", "--select", "daily", "--vars", "{amount: 30, fail_day: '2024-03-03'}", *WINDOW],
            expect_pass=False,
        )
        assert rows(project) == [(1, 30), (2, 30), (3, 10)]
        assert snapshot_count(project, daily) == before + 2

        # `dbt retry` reruns only the failed batch.
        before = snapshot_count(project, daily)
        run_dbt(["retry", "--vars", "{amount: 30}"])
        assert rows(project) == [(1, 30), (2, 30), (3, 30)]
        assert snapshot_count(project, daily) == before + 1
