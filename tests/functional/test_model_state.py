"""Model state kept on the table: strategy and keys compared between runs, the last
processed watermark exposed to model SQL, and strategy helpers next to is_incremental()."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.harness import latest_snapshot_id, relation, table_properties

SOURCE_SQL = """
select * from values
  (1, 'a', timestamp '2024-01-01 00:00:00'),
  (2, 'b', timestamp '2024-01-02 00:00:00')
  {% if var('batch', 1) >= 2 %}, (3, 'c', timestamp '2024-01-03 00:00:00'){% endif %}
  as t(id, name, updated_at)
"""

WATERMARKED_SQL = """
{{ config(materialized='incremental', unique_key='id', watermark_column='updated_at',
          incremental_strategy=var('strategy', 'merge')) }}
select id, name, updated_at,
  '{{ last_processed_value() }}' as seen_watermark,
  {{ 'true' if is_append_only() else 'false' }} as append_only,
  {{ 'true' if is_delete_insert() else 'false' }} as delete_insert
from {{ ref('events') }}
{% if is_incremental() %}
where updated_at > timestamp '{{ last_processed_value() }}'
{% endif %}
"""


def table_property(project, table: str, key: str) -> str | None:
    return table_properties(project, relation(project, table)).get(key)


class TestModelState:
    @pytest.fixture(scope="class")
    def models(self):
        return {"events.sql": SOURCE_SQL, "watermarked.sql": WATERMARKED_SQL}

    def test_watermark_state_and_strategy_changes(self, project):
        run_dbt(["run"])
        assert table_property(project, "watermarked", "dbt.s3tables.last_processed_value") == (
            "2024-01-02 00:00:00"
        )
        assert table_property(project, "watermarked", "dbt.s3tables.incremental_strategy") == (
            "merge"
        )

        run_dbt(["run", "--vars", "{batch: 2}"])
        rows = project.run_sql(
            f"select id, seen_watermark, append_only, delete_insert "
            f"from {project.test_schema}.watermarked order by id",
            fetch="all",
        )
        # Only the row newer than the recorded watermark went through the second run.
        assert [tuple(r) for r in rows] == [
            (1, "None", False, False),
            (2, "None", False, False),
            (3, "2024-01-02 00:00:00", False, False),
        ]
        assert table_property(project, "watermarked", "dbt.s3tables.last_processed_value") == (
            "2024-01-03 00:00:00"
        )

        # A strategy change is allowed with a warning; the helpers see the new strategy.
        _, log = run_dbt_and_capture(["run", "--vars", "{batch: 2, strategy: 'delete+insert'}"])
        assert "incremental_strategy changed from `merge` to `delete+insert`" in log

        # Switching to scd2 would mix history rows with current rows: refused, untouched.
        before = latest_snapshot_id(project, relation(project, "watermarked"))
        result = run_dbt(["run", "--vars", "{batch: 2, strategy: scd2}"], expect_pass=False)
        message = next(r.message for r in result.results if r.node.name == "watermarked")
        assert "--full-refresh" in message and "scd2" in message
        assert latest_snapshot_id(project, relation(project, "watermarked")) == before

        run_dbt(["run", "--full-refresh", "--vars", "{batch: 2, strategy: scd2}"])
        assert table_property(project, "watermarked", "dbt.s3tables.incremental_strategy") == (
            "scd2"
        )


# Round 2 brings key 2 again with an older time than the table holds for it: the merge
# writes it, so the table's greatest time goes back to January 1st.
REWOUND_SQL = """
{{ config(materialized='incremental', unique_key='id', watermark_column='updated_at') }}
select * from values
{% if var('round', 1) == 1 %}
  (1, timestamp '2024-01-01 00:00:00'), (2, timestamp '2024-01-02 00:00:00')
{% elif var('round') == 2 %}
  (2, timestamp '2024-01-01 00:00:00')
{% else %}
  (3, timestamp '2024-01-05 00:00:00')
{% endif %}
as t(id, updated_at)
{% if var('round', 1) == 3 %} where false {% endif %}
"""


class TestLastProcessedValueNeverGoesBack:
    """The recorded value is the greatest the model has processed, raised by each run's
    rows (read from those rows, not by scanning the table): an older row written later,
    or a run without rows, leaves it where it was."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"rewound.sql": REWOUND_SQL}

    def test_the_recorded_value_stays_at_the_greatest_processed(self, project):
        key = "dbt.s3tables.last_processed_value"
        run_dbt(["run"])
        assert table_property(project, "rewound", key) == "2024-01-02 00:00:00"
        run_dbt(["run", "--vars", "{round: 2}"])
        greatest = project.run_sql(
            f"select cast(max(updated_at) as string) from {project.test_schema}.rewound",
            fetch="one",
        )[0]
        assert greatest == "2024-01-01 00:00:00"
        assert table_property(project, "rewound", key) == "2024-01-02 00:00:00"
        run_dbt(["run", "--vars", "{round: 3}"])  # no rows
        assert table_property(project, "rewound", key) == "2024-01-02 00:00:00"


WRITE_MODE_SQL = """
{{ config(materialized='incremental', unique_key='id', write_mode=var('mode', 'merge_on_read')) }}
select * from values (1, 'a'), (2, 'b') as t(id, name)
"""


class TestWriteMode:
    @pytest.fixture(scope="class")
    def models(self):
        return {"modes.sql": WRITE_MODE_SQL}

    def test_default_and_switch_without_rebuild(self, project):
        run_dbt(["run"])
        assert table_property(project, "modes", "write.merge.mode") == "merge-on-read"
        assert table_property(project, "modes", "write.delete.mode") == "merge-on-read"
        first = latest_snapshot_id(project, relation(project, "modes"))
        run_dbt(["run", "--vars", "{mode: copy_on_write}"])
        assert table_property(project, "modes", "write.merge.mode") == "copy-on-write"
        assert table_property(project, "modes", "write.update.mode") == "copy-on-write"
        # Same table (no rebuild): its history goes on from the first snapshot.
        history = project.run_sql(
            f"select snapshot_id from {project.test_schema}.modes.snapshots", fetch="all"
        )
        assert first in [row[0] for row in history]
        result = run_dbt(["run", "--vars", "{mode: sometimes}"], expect_pass=False)
        assert "write_mode" in result.results[0].message
        assert "merge_on_read, copy_on_write" in result.results[0].message


# A watermark merge first built with no rows: its table holds no value to record yet.
LATE_WATERMARK_SQL = """
{{ config(materialized='incremental', unique_key='id', watermark_column='id') }}
select id from range(1, 4) as r(id) where {{ var('rows', false) }}
{% set last = last_processed_value() %}
{% if is_incremental() and last is not none %} and id > {{ last }} {% endif %}
"""


class TestAWatermarkWithNoValueYet:
    @pytest.fixture(scope="class")
    def models(self):
        return {"late.sql": LATE_WATERMARK_SQL}

    def test_runs_with_no_rows_then_with_rows_record_the_greatest_value(self, project):
        key = "dbt.s3tables.last_processed_value"
        run_dbt(["run"])
        # No rows, and no value recorded before: the table's own greatest is none.
        run_dbt(["run"])
        assert table_property(project, "late", key) is None
        run_dbt(["run", "--vars", "{rows: true}"])
        assert table_property(project, "late", key) == "3"
