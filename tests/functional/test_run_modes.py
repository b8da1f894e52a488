"""dbt's run modes meet every feature that keeps state (docs/guarantees.md, promise 14):
`--empty` writes no row, records no read and moves no state; `--sample` records nothing
and refuses an incremental `upstream_changes()` read; `show`, `compile`, `ls` and `docs
generate` record nothing."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.harness import (
    assert_all_passed,
    query_rows,
    relation,
    run_vars,
    snapshot_ids,
    table_properties,
)

# The upstream: batch n appends ids 3n-2 to 3n.
EVENTS = """
{{ config(materialized='incremental', incremental_strategy='append') }}
{% set batch = var('batch', 1) | int %}
select cast(id as bigint) as id from range({{ batch * 3 - 2 }}, {{ batch * 3 + 1 }}) as r(id)
"""
# Every id there will be (a ref that --empty limits to no rows).
DIM = """
{{ config(materialized='table') }}
select cast(id as bigint) as id from range(1, 100) as r(id)
"""
# Reads the changes alone.
COPY = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select id from {{ upstream_changes(ref('events')) }}
"""
# Joins the changes to a ref: under --empty it writes nothing either way.
JOINED = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select c.id from {{ upstream_changes(ref('events')) }} as c
join {{ ref('dim') }} as d on c.id = d.id
"""
# A watermark merge read through last_processed_value() (none on a table that has
# processed no row yet).
WATERMARKED = """
{{ config(materialized='incremental', unique_key='id', watermark_column='id') }}
select id from {{ ref('events') }}
{% set last = last_processed_value() %}
{% if is_incremental() and last is not none %} where id > {{ last }} {% endif %}
"""
READERS = ("copy", "joined", "watermarked")


def ids(project, table: str) -> list[int]:
    rows = query_rows(project, f"select id from {relation(project, table)}")
    return sorted(row[0] for row in rows)


def dbt_state(project, table: str) -> dict[str, str]:
    """The table's state as the adapter keeps it: its `dbt.` properties."""
    return {
        k: v
        for k, v in table_properties(project, relation(project, table)).items()
        if k.startswith("dbt.")
    }


def table_state(project, table: str) -> tuple[dict[str, str], list[int]]:
    """Its `dbt.` properties and its snapshots."""
    return dbt_state(project, table), snapshot_ids(project, relation(project, table))


class TestEmptyRuns:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "events.sql": EVENTS,
            "dim.sql": DIM,
            "copy.sql": COPY,
            "joined.sql": JOINED,
            "watermarked.sql": WATERMARKED,
        }

    def test_an_empty_run_writes_records_and_moves_nothing(self, project):
        assert_all_passed(run_dbt(["run"]), 5)
        assert_all_passed(run_dbt(["run", "-s", "events", *run_vars(batch=2)]), 1)
        before = {
            name: (dbt_state(project, name), snapshot_ids(project, relation(project, name)))
            for name in READERS
        }
        _, output = run_dbt_and_capture(["run", "--empty", "-s", *READERS])
        for name in READERS:
            assert ids(project, name) == [1, 2, 3], name
            assert table_state(project, name) == before[name], name
        assert "--empty: reads no row of" in output
        # The next run of every row reads what the empty one did not.
        assert_all_passed(run_dbt(["run", "-s", *READERS]), 3)
        for name in READERS:
            assert ids(project, name) == [1, 2, 3, 4, 5, 6], name

    def test_a_table_an_empty_run_created_is_read_whole_by_the_next_run(self, project):
        run_dbt(["run", "--full-refresh", *run_vars(batch=1)])
        assert_all_passed(run_dbt(["run", "-s", "events", *run_vars(batch=2)]), 1)
        for name in READERS:
            project.run_sql(f"drop table if exists {relation(project, name)}")
        assert_all_passed(run_dbt(["run", "--empty", "-s", *READERS]), 3)
        for name in READERS:
            assert ids(project, name) == [], name
            assert not dbt_state(project, name), name
        assert_all_passed(run_dbt(["run", "-s", *READERS]), 3)
        for name in READERS:
            assert ids(project, name) == [1, 2, 3, 4, 5, 6], name


FROZEN = """
{{ config(materialized='incremental', incremental_strategy='append', full_refresh=false) }}
select id from {{ upstream_changes(ref('events')) }}
"""


class TestAnEmptyRebuildForgetsWhatItReplaced:
    """`--full-refresh --empty` replaces the table with no rows, and so the state its old
    rows left: Iceberg's REPLACE keeps table properties, and a `last_processed_value` kept
    from the replaced rows made the next run skip every row up to it (the table stayed
    empty)."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"events.sql": EVENTS, "watermarked.sql": WATERMARKED}

    def test_the_next_run_reads_every_row(self, project):
        run_dbt(["run"])
        assert ids(project, "watermarked") == [1, 2, 3]
        run_dbt(["run", "-s", "watermarked", "--full-refresh", "--empty"])
        assert ids(project, "watermarked") == []
        run_dbt(["run", "-s", "watermarked"])
        assert ids(project, "watermarked") == [1, 2, 3]


class TestAFixDbtWouldIgnore:
    @pytest.fixture(scope="class")
    def models(self):
        return {"events.sql": EVENTS, "frozen.sql": FROZEN}

    def test_a_refusal_of_a_model_with_full_refresh_false_names_a_fix_that_works(self, project):
        assert_all_passed(run_dbt(["run"]), 2)
        # The upstream replaced: a keyless read of it is refused, naming a rebuild.
        run_dbt(["run", "-s", "events", "--full-refresh", *run_vars(batch=2)])
        for extra in ([], ["--full-refresh"]):  # dbt ignores the flag for this model
            _, output = run_dbt_and_capture(["run", "-s", "frozen", *extra], expect_pass=False)
            assert "`dbt run -s frozen --full-refresh`" in output, output
            assert "its config sets `full_refresh: false`" in output, output
            assert ids(project, "frozen") == [1, 2, 3]


# Events on days 1 to 3n of batch n (event_time: a ref under --sample reads its window).
TIMED_EVENTS = """
{{ config(materialized='incremental', incremental_strategy='append', event_time='ts') }}
{% set batch = var('batch', 1) | int %}
select cast(id as bigint) as id, timestamp_seconds(1704067200 + (id - 1) * 86400) as ts
from range({{ batch * 3 - 2 }}, {{ batch * 3 + 1 }}) as r(id)
"""
TIMED_COPY = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select id from {{ upstream_changes(ref('timed_events')) }}
"""
# Days 2 and 3 of January 2024.
SAMPLE = ["--sample", "{'start': '2024-01-02', 'end': '2024-01-04'}"]


class TestSampledRuns:
    @pytest.fixture(scope="class")
    def models(self):
        return {"timed_events.sql": TIMED_EVENTS, "timed_copy.sql": TIMED_COPY}

    def test_a_sampled_read_is_refused_incrementally_and_records_nothing(self, project):
        assert_all_passed(run_dbt(["run"]), 2)
        assert_all_passed(run_dbt(["run", "-s", "timed_events", *run_vars(batch=2)]), 1)
        copy = relation(project, "timed_copy")
        before = table_state(project, "timed_copy")
        _, output = run_dbt_and_capture(["run", "-s", "timed_copy", *SAMPLE], expect_pass=False)
        assert ids(project, "timed_copy") == [1, 2, 3] and table_state(project, "timed_copy") == (
            before
        )
        assert "under --sample would write a sample" in output, output
        # Rebuilt from a sample: its days' rows, and no record of a read.
        assert_all_passed(run_dbt(["run", "-s", "timed_copy", "--full-refresh", *SAMPLE]), 1)
        assert ids(project, "timed_copy") == [2, 3]
        # (A record the replaced table keeps as a property is bound to a snapshot its
        # history no longer holds: no record, as the refusal below shows.)
        summary = project.run_sql(
            f"select summary from {copy}.snapshots order by committed_at desc limit 1",
            fetch="one",
        )[0]
        assert not [k for k in summary if k.startswith("dbt.read.")], summary
        # The next run of every row is refused until the model is rebuilt whole.
        _, output = run_dbt_and_capture(["run", "-s", "timed_copy"], expect_pass=False)
        assert "holds no record of what it last read" in output, output
        assert_all_passed(run_dbt(["run", "-s", "timed_copy", "--full-refresh"]), 1)
        assert ids(project, "timed_copy") == [1, 2, 3, 4, 5, 6]
