"""Schema evolution across runs: a `full_incremental_refresh` stopped part-way resumes
after its last committed chunk, and models evolving at once under threads 8 do not
interfere."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.harness import (
    query_rows,
    run_vars,
    snapshot_count,
    sort_rows,
    table_properties,
)

SOURCE = """{{ config(materialized='table') }}
select id, cast(ts as timestamp) as ts, v from values
  (1, '2023-12-01 00:00:00', 10),
  (2, null, 20),
  (3, '2024-01-01 08:00:00', 30),
  (4, '2024-01-02 09:00:00', 40),
  (5, '2024-01-03 10:00:00', 50),
  (6, '2024-01-03 11:00:00', 60),
  (7, '2024-01-05 12:00:00', 70)
  as t(id, ts, v)
"""

# Phase 2 adds column `w`; with var `poison`, the row of day 2024-01-03 fails at run time,
# in the middle of the rebuild.
EVENTS = """{{ config(materialized='incremental', unique_key='id',
    on_schema_change='full_incremental_refresh',
    full_incremental_refresh={'event_time': 'ts', 'begin': '2024-01-01', 'chunk': 'day'}) }}
select id, ts, v
{%- if var('phase', 1) >= 2 %}, {% if var('poison', false) -%}
  case when assert_true(id <> 5) is null then v * 10 end
{%- else %}v * 10{% endif %} as w{% endif %}
from {{ ref('source') }}
{% if is_incremental() %} where id > 100 {% endif %}
"""

PLAN_PROPERTY = "dbt.s3tables.full_incremental_refresh"


class TestFullIncrementalRefreshResumes:
    # What the log says when the rebuild stops in its third chunk, and when the next run
    # resumes it (the dbt-spark package logs its own lines: docs/dbt-cloud.md).
    STOPPED_LINES: tuple[str, ...] = ("stopped in chunk 3/4", "next run resumes")
    RESUMED_LINES: tuple[str, ...] = (
        "resuming full_incremental_refresh at 2024-01-03 00:00:00",
        "FULL INCREMENTAL REFRESH 3 inserted in 2 chunks",
    )

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"source.sql": SOURCE, "events.sql": EVENTS}

    def test_interrupted_rebuild_resumes_after_last_committed_chunk(self, project) -> None:
        table = f"{project.test_schema}.events"
        run_dbt(["run"])
        assert snapshot_count(project, table) == 1

        # Chunks: [start, 01-02) takes ids 1, 2 (before begin, NULL) and 3; [01-02, 01-03)
        # takes 4; [01-03, 01-05) fails on id 5.
        _, log = run_dbt_and_capture(["run", *run_vars(phase=2, poison=True)], expect_pass=False)
        for line in self.STOPPED_LINES:
            assert line in log
        assert query_rows(project, f"select id, w from {table}") == [
            (1, 100),
            (2, 200),
            (3, 300),
            (4, 400),
        ]
        assert PLAN_PROPERTY in table_properties(project, table)
        # The first build, the replace, two chunks.
        assert snapshot_count(project, table) == 4

        _, log = run_dbt_and_capture(["run", *run_vars(phase=2)])
        for line in self.RESUMED_LINES:
            assert line in log
        assert query_rows(project, f"select id, ts is null, v, w from {table}") == [
            (1, False, 10, 100),
            (2, True, 20, 200),
            (3, False, 30, 300),
            (4, False, 40, 400),
            (5, False, 50, 500),
            (6, False, 60, 600),
            (7, False, 70, 700),
        ]
        # No chunk written twice: two more commits, one per remaining chunk.
        assert snapshot_count(project, table) == 6
        assert PLAN_PROPERTY not in table_properties(project, table)

        # The schema now matches: the next run is the normal incremental one, which finds
        # no new rows and commits nothing.
        _, log = run_dbt_and_capture(["run", *run_vars(phase=2)])
        assert "FULL INCREMENTAL REFRESH" not in log
        assert "nothing committed" in log
        assert snapshot_count(project, table) == 6
        assert project.run_sql(f"select count(*) from {table}", fetch="one")[0] == 7


class TestFullRefreshAfterAStoppedRebuild:
    """`--full-refresh` of a table whose chunked rebuild stopped part-way rebuilds it whole
    and ends that rebuild: the replace keeps the table's properties, so a plan left on it
    would make the next incremental run "resume" (append history after its newest chunk,
    without the strategy's statement)."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"source.sql": SOURCE, "events.sql": EVENTS}

    def test_the_next_run_is_incremental_again(self, project) -> None:
        table = f"{project.test_schema}.events"
        run_dbt(["run"])
        run_dbt(["run", *run_vars(phase=2, poison=True)], expect_pass=False)
        assert PLAN_PROPERTY in table_properties(project, table)

        run_dbt(["run", "--full-refresh", *run_vars(phase=2)])
        assert PLAN_PROPERTY not in table_properties(project, table)
        snapshots = snapshot_count(project, table)

        _, log = run_dbt_and_capture(["run", *run_vars(phase=2)])
        assert "resuming" not in log and "FULL INCREMENTAL REFRESH" not in log, log
        assert "nothing committed" in log
        assert snapshot_count(project, table) == snapshots
        assert project.run_sql(f"select count(*) from {table}", fetch="one")[0] == 7


SCD2_EVENTS = """{{ config(materialized='incremental', incremental_strategy='scd2',
    unique_key='id', on_schema_change='full_incremental_refresh',
    full_incremental_refresh={'event_time': 'ts', 'begin': '2024-01-01', 'chunk': 'day'}) }}
select id, ts, v{% if var('phase', 1) >= 2 %}, v * 10 as w{% endif %}
from {{ ref('source') }}
{% if is_incremental() %} where id > 100 {% endif %}
"""


class TestChunkedRebuildOfScd2:
    """A chunked rebuild of an scd2 model writes each row as an open version, as its first
    build does: `valid_from` set, `valid_to` NULL (never a row with neither)."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"source.sql": SOURCE, "history.sql": SCD2_EVENTS}

    def test_every_rebuilt_row_is_an_open_version(self, project) -> None:
        table = f"{project.test_schema}.history"
        run_dbt(["run"])
        run_dbt(["run", *run_vars(phase=2)])  # `w` added: the chunked rebuild
        rows = query_rows(
            project,
            f"select id, w, valid_from is not null, valid_to is null from {table}",
        )
        assert rows == [(i, i * 100, True, True) for i in range(1, 8)], rows


def evolving_model(index: int) -> str:
    """Model `index` adds a column of its own in phase 2, through one of the evolving
    modes and strategies."""
    strategy = ["merge", "append", "delete+insert", "merge"][index % 4]
    mode = ["append_new_columns", "sync_all_columns"][index % 2]
    key = "" if strategy == "append" else ", unique_key='id'"
    return (
        f"{{{{ config(materialized='incremental', incremental_strategy='{strategy}'{key}, "
        f"on_schema_change='{mode}') }}}}\n"
        f"select id, id * {index} as value"
        f"{{% if var('phase', 1) == 2 %}}, 'model {index}' as added_{index}{{% endif %}}\n"
        "from range(1, 6) as r(id)\n"
        "{% if is_incremental() %} where id > 3 {% endif %}\n"
    )


class TestModelsEvolveAtOnceUnderEightThreads:
    MODELS = 8

    @pytest.fixture(scope="class")
    def dbt_profile_target(self, dbt_profile_target: dict) -> dict:
        return {**dbt_profile_target, "threads": 8}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {f"evolving_{i}.sql": evolving_model(i) for i in range(self.MODELS)}

    def test_each_table_gets_exactly_its_own_column(self, project) -> None:
        run_dbt(["run"])
        results = run_dbt(["run", *run_vars(phase=2)])
        assert len(results) == self.MODELS
        for i in range(self.MODELS):
            table = f"{project.test_schema}.evolving_{i}"
            columns = [
                row[0] for row in project.run_sql(f"describe {table}", fetch="all") if row[0]
            ]
            assert columns == ["id", "value", f"added_{i}"], table
            expected = [(1, None), (2, None), (3, None), (4, f"model {i}"), (5, f"model {i}")]
            if i % 4 == 1:
                # append keeps the first run's rows 4 and 5 as well.
                expected += [(4, None), (5, None)]
            assert query_rows(project, f"select id, added_{i} from {table}") == sort_rows(
                expected
            ), table


FAILING_WRITE = """{{ config(materialized='incremental', unique_key='id',
    on_schema_change='append_new_columns') }}
select id, v
{%- if var('phase', 1) >= 2 %}, {% if var('poison', false) -%}
  case when assert_true(id <> 5) is null then v * 10 end
{%- else %}v * 10{% endif %} as w{% endif %}
from {{ ref('source') }}
{% if is_incremental() %} where id >= 5 {% endif %}
"""


class TestDataWriteFailsAfterSchemaCommit:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"source.sql": SOURCE, "evolving.sql": FAILING_WRITE}

    def test_added_column_stays_and_is_not_added_again(self, project) -> None:
        table = f"{project.test_schema}.evolving"
        run_dbt(["run"])
        snapshots = snapshot_count(project, table)

        # The schema commit (column w) comes first; then the MERGE fails at run time.
        _, log = run_dbt_and_capture(["run", *run_vars(phase=2, poison=True)], expect_pass=False)
        assert "schema evolved: new column `w`" in log
        columns = [row[0] for row in project.run_sql(f"describe {table}", fetch="all") if row[0]]
        assert columns == ["id", "v", "w"]
        assert snapshot_count(project, table) == snapshots
        assert project.run_sql(f"select count(w) from {table}", fetch="one")[0] == 0

        _, log = run_dbt_and_capture(["run", *run_vars(phase=2)])
        assert "schema evolved" not in log
        assert snapshot_count(project, table) == snapshots + 1
        assert query_rows(project, f"select id, w from {table} where w is not null") == [
            (5, 500),
            (6, 600),
            (7, 700),
        ]
