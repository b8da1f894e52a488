"""Incremental strategies end to end: exact rows after each run, one commit per run,
atomic failures, row counts in run_results.json and config errors that write nothing.

Every model is data-driven by `var('batch')`, so one model runs twice (or three times)
with different input; rows are compared as sorted lists of tuples.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from tests.functional.harness import (
    adapter_responses,
    assert_all_passed,
    assert_model_passed,
    batch_model,
    column_names,
    day,
    latest_snapshot_id,
    query_rows,
    relation,
    results_by_model,
    run_batches,
    run_vars,
    snapshot_count,
    sort_rows,
)

# --- 1. append -----------------------------------------------------------------------

APPEND_SQL = batch_model(
    "materialized='incremental', incremental_strategy='append'",
    {
        1: "select * from values (1, 'a'), (2, 'b') as t(id, label)",
        2: "select * from values (3, 'c'), (1, 'a') as t(id, label)",
        3: "select * from values (4, 'd') as t(id, label)",
    },
)


class TestAppend:
    @pytest.fixture(scope="class")
    def models(self):
        return {"append_model.sql": APPEND_SQL}

    def test_append_adds_rows_one_snapshot_per_run(self, project):
        table = relation(project, "append_model")
        query = f"select id, label from {table}"

        assert_all_passed(run_dbt(["run"]), 1)
        assert query_rows(project, query) == [(1, "a"), (2, "b")]
        count = snapshot_count(project, table)

        assert_all_passed(run_dbt(["run", *run_vars(batch=2)]), 1)
        # Append never deduplicates: (1, 'a') is there twice.
        assert query_rows(project, query) == sort_rows([(1, "a"), (2, "b"), (3, "c"), (1, "a")])
        assert snapshot_count(project, table) == count + 1
        # target/run holds what the appending run executed, as dbt-spark's does.
        executed = next(Path(project.project_root, "target", "run").rglob("append_model.sql"))
        executed_sql = executed.read_text().lower()
        assert "insert into" in executed_sql and "values (3, 'c')" in executed_sql, executed_sql

        assert_all_passed(run_dbt(["run", *run_vars(batch=3)]), 1)
        assert query_rows(project, query) == sort_rows(
            [(1, "a"), (2, "b"), (3, "c"), (1, "a"), (4, "d")]
        )
        assert snapshot_count(project, table) == count + 2


# --- 2. merge ------------------------------------------------------------------------

MERGE_MODELS = {
    # Default strategy with a unique_key: merge.
    "merge_basic.sql": batch_model(
        "materialized='incremental', unique_key='id'",
        {
            1: "select * from values (1, 'a'), (2, 'b'), (3, 'c') as t(id, label)",
            2: "select * from values (2, 'B'), (3, 'C'), (4, 'd') as t(id, label)",
        },
    ),
    "merge_composite.sql": batch_model(
        "materialized='incremental', incremental_strategy='merge', unique_key=['k1', 'k2']",
        {
            1: "select * from values (1, 'x', 'v1'), (1, 'y', 'v2'), (2, 'x', 'v3') "
            "as t(k1, k2, v)",
            2: "select * from values (1, 'y', 'V2'), (2, 'y', 'v4') as t(k1, k2, v)",
        },
    ),
    "merge_null_key.sql": batch_model(
        "materialized='incremental', incremental_strategy='merge', unique_key=['k1', 'k2']",
        {
            1: "select k1, cast(k2 as string) as k2, v "
            "from values (1, null, 'a'), (2, 'x', 'b') as t(k1, k2, v)",
            2: "select k1, cast(k2 as string) as k2, v "
            "from values (1, null, 'A'), (3, null, 'c') as t(k1, k2, v)",
        },
    ),
    # The key span (key_span.py) of a text, a date and a decimal key: a quote, non-ASCII
    # text, a negative value and a NULL key; a row outside the span stays as it was.
    "merge_key_span.sql": batch_model(
        "materialized='incremental', incremental_strategy='merge', "
        "unique_key=['code', 'd', 'amount']",
        {
            1: "select code, d, amount, v from values "
            "('o\\'k', date'2024-01-02', 1.50BD, 'v1'), ('é', date'2024-01-03', -2.25BD, 'v2'), "
            "('zz', date'2023-01-01', 9.99BD, 'v3'), "
            "(cast(null as string), date'2024-01-02', 1.50BD, 'v4') as t(code, d, amount, v)",
            2: "select code, d, amount, v from values "
            "('o\\'k', date'2024-01-02', 1.50BD, 'V1'), ('é', date'2024-01-03', -2.25BD, 'V2'), "
            "(cast(null as string), date'2024-01-02', 1.50BD, 'V4'), "
            "('a', date'2024-01-02', 1.50BD, 'new') as t(code, d, amount, v)",
        },
    ),
    "merge_duplicates.sql": batch_model(
        "materialized='incremental', incremental_strategy='merge', unique_key='id'",
        {
            1: "select * from values (1, 'a'), (2, 'b') as t(id, label)",
            # Key 1 exists in the target, key 5 is new: both come twice.
            2: "select * from values (1, 'u'), (5, 'n'), (1, 'u'), (5, 'n') as t(id, label)",
        },
    ),
    "merge_watermark.sql": batch_model(
        "materialized='incremental', incremental_strategy='merge', unique_key='id', "
        "watermark_column='updated_at'",
        {
            1: "select id, label, cast(updated_at as timestamp) as updated_at from values "
            "(1, 'orig', '2024-01-01 00:00:00'), (2, 'keep', '2024-01-01 00:00:00') "
            "as t(id, label, updated_at)",
            2: "select id, label, cast(updated_at as timestamp) as updated_at from values "
            "(1, 'older', '2024-02-01 00:00:00'), (1, 'newest', '2024-04-01 00:00:00'), "
            "(1, 'middle', '2024-03-01 00:00:00'), (7, 'latest', '2024-05-09 00:00:00'), "
            "(7, 'early', '2024-05-01 00:00:00') as t(id, label, updated_at)",
        },
    ),
    "merge_update_columns.sql": batch_model(
        "materialized='incremental', incremental_strategy='merge', unique_key='id', "
        "merge_update_columns=['a']",
        {
            1: "select * from values (1, 'a1', 'b1'), (2, 'a2', 'b2') as t(id, a, b)",
            2: "select * from values (1, 'A1', 'B1'), (3, 'a3', 'b3') as t(id, a, b)",
        },
    ),
    "merge_exclude_columns.sql": batch_model(
        "materialized='incremental', incremental_strategy='merge', unique_key='id', "
        "merge_exclude_columns=['b']",
        {
            1: "select * from values (1, 'a1', 'b1', 'c1'), (2, 'a2', 'b2', 'c2') "
            "as t(id, a, b, c)",
            2: "select * from values (1, 'A1', 'B1', 'C1'), (3, 'a3', 'b3', 'c3') "
            "as t(id, a, b, c)",
        },
    ),
}


class TestMerge:
    @pytest.fixture(scope="class")
    def models(self):
        return MERGE_MODELS

    @pytest.fixture(scope="class")
    def outcomes(self, project):
        """Both batches run once for the whole class."""
        return run_batches([1, 2])

    def test_updates_matched_inserts_new(self, project, outcomes):
        assert_model_passed(outcomes, "merge_basic")
        rows = query_rows(project, f"select id, label from {relation(project, 'merge_basic')}")
        assert rows == [(1, "a"), (2, "B"), (3, "C"), (4, "d")]

    def test_composite_key(self, project, outcomes):
        assert_model_passed(outcomes, "merge_composite")
        table = relation(project, "merge_composite")
        rows = query_rows(project, f"select k1, k2, v from {table}")
        assert rows == [(1, "x", "v1"), (1, "y", "V2"), (2, "x", "v3"), (2, "y", "v4")]

    def test_null_key_matches_null_key(self, project, outcomes):
        assert_model_passed(outcomes, "merge_null_key")
        table = relation(project, "merge_null_key")
        rows = query_rows(project, f"select k1, k2, v from {table}")
        assert rows == sort_rows([(1, None, "A"), (2, "x", "b"), (3, None, "c")])

    def test_text_date_and_decimal_keys_match_with_quotes_and_nulls(self, project, outcomes):
        assert_model_passed(outcomes, "merge_key_span")
        table = relation(project, "merge_key_span")
        rows = query_rows(project, f"select code, cast(d as string), amount, v from {table}")
        assert rows == sort_rows(
            [
                ("o'k", "2024-01-02", Decimal("1.50"), "V1"),
                ("é", "2024-01-03", Decimal("-2.25"), "V2"),
                ("zz", "2023-01-01", Decimal("9.99"), "v3"),
                (None, "2024-01-02", Decimal("1.50"), "V4"),
                ("a", "2024-01-02", Decimal("1.50"), "new"),
            ]
        )

    def test_the_statement_reads_only_the_target_rows_in_the_key_span(self, project, outcomes):
        merge = next((Path(project.project_root) / "target" / "run").rglob("merge_key_span.sql"))
        assert (
            "(DBT_INTERNAL_DEST.`code` IS NULL OR DBT_INTERNAL_DEST.`code` BETWEEN "
            "CAST(X'61' AS STRING) AND CAST(X'C3A9' AS STRING))"
        ) in merge.read_text()
        assert "DBT_INTERNAL_DEST.`amount` BETWEEN CAST('-2.25' AS decimal(3,2))" in (
            merge.read_text()
        )

    def test_source_duplicates_collapse(self, project, outcomes):
        assert_model_passed(outcomes, "merge_duplicates")
        table = relation(project, "merge_duplicates")
        rows = query_rows(project, f"select id, label from {table}")
        assert rows == [(1, "u"), (2, "b"), (5, "n")]

    def test_watermark_greatest_wins(self, project, outcomes):
        assert_model_passed(outcomes, "merge_watermark")
        table = relation(project, "merge_watermark")
        rows = query_rows(project, f"select id, label, updated_at from {table}")
        assert rows == [
            (1, "newest", datetime.datetime(2024, 4, 1)),
            (2, "keep", datetime.datetime(2024, 1, 1)),
            (7, "latest", datetime.datetime(2024, 5, 9)),
        ]

    def test_merge_update_columns(self, project, outcomes):
        assert_model_passed(outcomes, "merge_update_columns")
        table = relation(project, "merge_update_columns")
        rows = query_rows(project, f"select id, a, b from {table}")
        # Matched rows update `a` only; inserted rows get every column.
        assert rows == [(1, "A1", "b1"), (2, "a2", "b2"), (3, "a3", "b3")]

    def test_merge_exclude_columns(self, project, outcomes):
        assert_model_passed(outcomes, "merge_exclude_columns")
        table = relation(project, "merge_exclude_columns")
        rows = query_rows(project, f"select id, a, b, c from {table}")
        assert rows == [(1, "A1", "b1", "C1"), (2, "a2", "b2", "c2"), (3, "a3", "b3", "c3")]


# --- 3. delete+insert ----------------------------------------------------------------

DELETE_INSERT_SQL = batch_model(
    "materialized='incremental', incremental_strategy='delete+insert', unique_key='id'",
    {
        1: "select * from values (1, 'a'), (2, 'b'), (3, 'c') as t(id, label)",
        2: "select * from values (2, 'x'), (2, 'y'), (4, 'd') as t(id, label)",
        3: "select * from values (2, 'z') as t(id, label)",
    },
)


class TestDeleteInsert:
    @pytest.fixture(scope="class")
    def models(self):
        return {"delete_insert_model.sql": DELETE_INSERT_SQL}

    def test_replaces_keys_without_dedup(self, project):
        table = relation(project, "delete_insert_model")
        query = f"select id, label from {table}"
        assert_all_passed(run_dbt(["run"]), 1)
        assert query_rows(project, query) == [(1, "a"), (2, "b"), (3, "c")]
        count = snapshot_count(project, table)

        assert_all_passed(run_dbt(["run", *run_vars(batch=2)]), 1)
        # Key 2 replaced by both its source rows, key 4 inserted, keys 1 and 3 untouched.
        assert query_rows(project, query) == [(1, "a"), (2, "x"), (2, "y"), (3, "c"), (4, "d")]
        assert snapshot_count(project, table) == count + 1

        # Both target rows of key 2 go; the one source row comes in.
        assert_all_passed(run_dbt(["run", *run_vars(batch=3)]), 1)
        assert query_rows(project, query) == [(1, "a"), (2, "z"), (3, "c"), (4, "d")]
        assert snapshot_count(project, table) == count + 2


# --- 4. insert_overwrite -------------------------------------------------------------

OVERWRITE_MODE = "spark.sql.sources.partitionOverwriteMode"

# Records the connection's partition overwrite mode, as a hook sees it, in a probe table.
PROBE_MACRO = """
{% macro record_overwrite_mode(label) %}
  {% if execute %}
    {% set setting = run_query("set spark.sql.sources.partitionOverwriteMode") %}
    {% set value = setting.columns[1].values()[0] %}
    {% do run_query("insert into " ~ target.schema ~ ".mode_probe values ('"
        ~ label ~ "', '" ~ value ~ "')") %}
  {% endif %}
{% endmacro %}
"""

INSERT_OVERWRITE_SQL = batch_model(
    "materialized='incremental', incremental_strategy='insert_overwrite', partition_by=['day'], "
    "post_hook=\"{{ record_overwrite_mode('insert_overwrite_post_' ~ var('batch', 1)) }}\"",
    {
        1: "select id, label, cast(day as date) as day from values "
        "(1, 'a', '2024-01-01'), (2, 'b', '2024-01-01'), (3, 'c', '2024-01-02'), "
        "(4, 'd', '2024-01-03') as t(id, label, day)",
        2: "select id, label, cast(day as date) as day from values "
        "(5, 'e', '2024-01-02'), (6, 'f', '2024-01-04') as t(id, label, day)",
    },
)

# Runs after the insert_overwrite model (ref) in the same invocation, with threads 1.
MERGE_AFTER_OVERWRITE_SQL = """
{{ config(
    materialized='incremental',
    incremental_strategy='merge',
    unique_key='id',
    pre_hook="{{ record_overwrite_mode('merge_after_pre_' ~ var('batch', 1)) }}",
    post_hook="{{ record_overwrite_mode('merge_after_post_' ~ var('batch', 1)) }}",
) }}
select day_count as id, '{{ var('batch', 1) }}' as batch
from (select count(distinct day) as day_count from {{ ref('insert_overwrite_model') }})
"""


class TestInsertOverwrite:
    @pytest.fixture(scope="class")
    def macros(self):
        return {"probe.sql": PROBE_MACRO}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "insert_overwrite_model.sql": INSERT_OVERWRITE_SQL,
            "merge_after_overwrite.sql": MERGE_AFTER_OVERWRITE_SQL,
        }

    def test_replaces_only_present_partitions_and_mode_does_not_leak(self, project):
        project.run_sql(
            "create table {schema}.mode_probe (label string, mode string) using iceberg"
        )
        table = relation(project, "insert_overwrite_model")
        query = f"select id, label, day from {table}"

        assert_all_passed(run_dbt(["run", "--threads", "1"]), 2)
        assert query_rows(project, query) == [
            (1, "a", day(1)),
            (2, "b", day(1)),
            (3, "c", day(2)),
            (4, "d", day(3)),
        ]

        assert_all_passed(run_dbt(["run", "--threads", "1", *run_vars(batch=2)]), 2)
        # Day 2 replaced, day 4 added, days 1 and 3 untouched.
        assert query_rows(project, query) == [
            (1, "a", day(1)),
            (2, "b", day(1)),
            (4, "d", day(3)),
            (5, "e", day(2)),
            (6, "f", day(4)),
        ]
        merge_table = relation(project, "merge_after_overwrite")
        assert query_rows(project, f"select id, batch from {merge_table}") == [
            (3, "1"),
            (4, "2"),
        ]

        probes = dict(query_rows(project, "select label, mode from {schema}.mode_probe"))
        assert set(probes) == {
            "insert_overwrite_post_1",
            "insert_overwrite_post_2",
            "merge_after_pre_1",
            "merge_after_post_1",
            "merge_after_pre_2",
            "merge_after_post_2",
        }
        leaked = {label: mode for label, mode in probes.items() if mode.lower() == "dynamic"}
        assert not leaked

        setting = project.run_sql(f"set {OVERWRITE_MODE}", fetch="all")
        assert [tuple(r)[0] for r in setting] == [OVERWRITE_MODE]
        assert all(str(tuple(r)[1]).lower() != "dynamic" for r in setting)


NO_PARTITION_OVERWRITE_SQL = batch_model(
    "materialized='incremental', incremental_strategy=var('strategy', 'append')",
    {
        1: "select * from values (1, 'a'), (2, 'b') as t(id, label)",
        2: "select * from values (3, 'c') as t(id, label)",
    },
)


class TestInsertOverwriteNeedsPartitionBy:
    @pytest.fixture(scope="class")
    def models(self):
        return {"overwrite_without_partitions.sql": NO_PARTITION_OVERWRITE_SQL}

    def test_fails_naming_partition_by_and_writes_nothing(self, project):
        table = relation(project, "overwrite_without_partitions")
        query = f"select id, label from {table}"
        assert_all_passed(run_dbt(["run"]), 1)
        snapshot = latest_snapshot_id(project, table)
        assert query_rows(project, query) == [(1, "a"), (2, "b")]

        results = run_dbt(
            ["run", *run_vars(batch=2, strategy="insert_overwrite")], expect_pass=False
        )
        assert len(results) == 1
        assert results[0].status == "error"
        assert "partition_by" in results[0].message
        assert latest_snapshot_id(project, table) == snapshot
        assert query_rows(project, query) == [(1, "a"), (2, "b")]


# --- 5. scd2 -------------------------------------------------------------------------

SCD2_MODELS = {
    "scd2_basic.sql": batch_model(
        "materialized='incremental', incremental_strategy='scd2', unique_key='id'",
        {
            1: "select * from values (1, 'active', 'x'), (2, 'active', 'y'), "
            "(3, 'active', 'z') as t(id, status, note)",
            # Key 1 changed, key 2 identical, key 3 absent, key 4 new.
            2: "select * from values (1, 'closed', 'x'), (2, 'active', 'y'), "
            "(4, 'active', 'w') as t(id, status, note)",
        },
    ),
    "scd2_check_cols.sql": batch_model(
        "materialized='incremental', incremental_strategy='scd2', unique_key='id', "
        "scd_check_cols=['status']",
        {
            1: "select * from values (1, 'active', 'x'), (2, 'active', 'y') as t(id, status, note)",
            # Key 1: only the untracked note changes; key 2: the status changes.
            2: "select * from values (1, 'active', 'x-changed'), (2, 'closed', 'y') "
            "as t(id, status, note)",
        },
    ),
    "scd2_custom_names.sql": batch_model(
        "materialized='incremental', incremental_strategy='scd2', unique_key='id', "
        "scd_valid_from='effective_from', scd_valid_to='effective_to'",
        {
            1: "select * from values (1, 'active'), (2, 'active') as t(id, status)",
            2: "select * from values (1, 'closed'), (2, 'active') as t(id, status)",
        },
    ),
}


class TestScd2:
    @pytest.fixture(scope="class")
    def models(self):
        return SCD2_MODELS

    @pytest.fixture(scope="class")
    def history(self, project):
        """Run both batches; each model's outcomes and its rows after the first run."""
        queries = {
            "scd2_basic": "select id, status, note, valid_from, valid_to from {table}",
            "scd2_check_cols": "select id, status, note, valid_from, valid_to from {table}",
            "scd2_custom_names": "select id, status, effective_from, effective_to from {table}",
        }
        first_run = run_batches([1])
        first_rows = {
            name: query_rows(project, query.format(table=relation(project, name)))
            for name, query in queries.items()
            if first_run[0][name][0] == "success"
        }
        outcomes = first_run + run_batches([2])
        return outcomes, first_rows

    def first_rows(self, history, name: str) -> list[tuple]:
        outcomes, first_rows = history
        assert_model_passed(outcomes, name)
        return first_rows[name]

    def test_first_run_every_row_open(self, project, history):
        for name in SCD2_MODELS:
            name = name.removesuffix(".sql")
            rows = self.first_rows(history, name)
            assert rows, name
            for row in rows:
                valid_from, valid_to = row[-2], row[-1]
                assert valid_from is not None, (name, row)
                assert valid_to is None, (name, row)

    def test_second_run_history(self, project, history):
        first_from = {r[0]: r[3] for r in self.first_rows(history, "scd2_basic")}
        table = relation(project, "scd2_basic")
        rows = query_rows(
            project,
            f"select id, status, note, valid_to is null as is_open, valid_from, valid_to "
            f"from {table}",
        )
        assert [r[:4] for r in rows] == [
            (1, "active", "x", False),
            (1, "closed", "x", True),
            (2, "active", "y", True),
            (3, "active", "z", True),
            (4, "active", "w", True),
        ]
        closed, reopened = rows[0], rows[1]
        # The closed version keeps its valid_from; it ends where the new version starts.
        assert closed[4] == first_from[1]
        assert closed[5] is not None and closed[5] >= closed[4]
        assert reopened[4] is not None and reopened[4] >= closed[5]
        # Unchanged key 2 and absent key 3 keep their row exactly.
        assert rows[2][4] == first_from[2]
        assert rows[3][4] == first_from[3]
        assert rows[4][4] is not None

    def test_check_cols_ignores_other_columns(self, project, history):
        first_from = {r[0]: r[3] for r in self.first_rows(history, "scd2_check_cols")}
        table = relation(project, "scd2_check_cols")
        rows = query_rows(
            project, f"select id, status, note, valid_to is null, valid_from from {table}"
        )
        assert [r[:4] for r in rows] == [
            (1, "active", "x", True),
            (2, "active", "y", False),
            (2, "closed", "y", True),
        ]
        assert rows[0][4] == first_from[1]

    def test_custom_validity_column_names(self, project, history):
        first_from = {r[0]: r[2] for r in self.first_rows(history, "scd2_custom_names")}
        table = relation(project, "scd2_custom_names")
        assert column_names(project, table) == ["id", "status", "effective_from", "effective_to"]
        rows = query_rows(
            project, f"select id, status, effective_to is null, effective_from from {table}"
        )
        assert [r[:3] for r in rows] == [
            (1, "active", False),
            (1, "closed", True),
            (2, "active", True),
        ]
        assert rows[0][3] == first_from[1]
        assert rows[2][3] == first_from[2]


# --- 6. failure injection ------------------------------------------------------------

# The input is a real table, so the failure happens while Spark executes the write (a
# literal VALUES list could be folded, and fail, while the statement is being planned).
FAIL_INPUT_SQL = batch_model(
    "materialized='table'",
    {
        1: "select id, label, cast(day as date) as day, ts from values "
        "(1, 'a', '2024-01-01', 1), (2, 'b', '2024-01-01', 1), (3, 'c', '2024-01-02', 1) "
        "as t(id, label, day, ts)",
        2: "select id, label, cast(day as date) as day, ts from values "
        "(2, 'b2', '2024-01-01', 2), (4, 'd', '2024-01-03', 2) as t(id, label, day, ts)",
        3: "select id, label, cast(day as date) as day, ts from values "
        "(2, 'b3', '2024-01-01', 3), (3, 'c3', '2024-01-02', 3), (5, 'e', '2024-01-03', 3) "
        "as t(id, label, day, ts)",
    },
)

FAILING_ID = (
    "{% if var('fail', false) %}case when id = 2 then raise_error('boom') else id end"
    "{% else %}id{% endif %} as id"
)


def failing_model(config: str, columns: str) -> str:
    return (
        "{{ config(materialized='incremental', " + config + ") }}\n"
        f"select {FAILING_ID}, {columns} from {{{{ ref('fail_input') }}}}\n"
    )


FAILING_MODELS = {
    "fail_input.sql": FAIL_INPUT_SQL,
    "fail_append.sql": failing_model("incremental_strategy='append'", "label"),
    "fail_merge.sql": failing_model("incremental_strategy='merge', unique_key='id'", "label"),
    "fail_merge_watermark.sql": failing_model(
        "incremental_strategy='merge', unique_key='id', watermark_column='ts'", "label, ts"
    ),
    "fail_delete_insert.sql": failing_model(
        "incremental_strategy='delete+insert', unique_key='id'", "label"
    ),
    "fail_insert_overwrite.sql": failing_model(
        "incremental_strategy='insert_overwrite', partition_by=['day']", "label, day"
    ),
    "fail_scd2.sql": failing_model("incremental_strategy='scd2', unique_key='id'", "label, day"),
}

FAILING_QUERIES = {
    "fail_append": "select id, label from {table}",
    "fail_merge": "select id, label from {table}",
    "fail_merge_watermark": "select id, label, ts from {table}",
    "fail_delete_insert": "select id, label from {table}",
    "fail_insert_overwrite": "select id, label, day from {table}",
    "fail_scd2": "select id, label, day, valid_to is null from {table}",
}

AFTER_BATCH_2 = {
    "fail_append": [(1, "a"), (2, "b"), (3, "c"), (2, "b2"), (4, "d")],
    "fail_merge": [(1, "a"), (2, "b2"), (3, "c"), (4, "d")],
    "fail_merge_watermark": [(1, "a", 1), (2, "b2", 2), (3, "c", 1), (4, "d", 2)],
    "fail_delete_insert": [(1, "a"), (2, "b2"), (3, "c"), (4, "d")],
    "fail_insert_overwrite": [(2, "b2", day(1)), (3, "c", day(2)), (4, "d", day(3))],
    "fail_scd2": [
        (1, "a", day(1), True),
        (2, "b", day(1), False),
        (2, "b2", day(1), True),
        (3, "c", day(2), True),
        (4, "d", day(3), True),
    ],
}

AFTER_BATCH_3 = {
    "fail_append": [
        (1, "a"),
        (2, "b"),
        (3, "c"),
        (2, "b2"),
        (4, "d"),
        (2, "b3"),
        (3, "c3"),
        (5, "e"),
    ],
    "fail_merge": [(1, "a"), (2, "b3"), (3, "c3"), (4, "d"), (5, "e")],
    "fail_merge_watermark": [(1, "a", 1), (2, "b3", 3), (3, "c3", 3), (4, "d", 2), (5, "e", 3)],
    "fail_delete_insert": [(1, "a"), (2, "b3"), (3, "c3"), (4, "d"), (5, "e")],
    "fail_insert_overwrite": [(2, "b3", day(1)), (3, "c3", day(2)), (5, "e", day(3))],
    "fail_scd2": [
        (1, "a", day(1), True),
        (2, "b", day(1), False),
        (2, "b2", day(1), False),
        (2, "b3", day(1), True),
        (3, "c", day(2), False),
        (3, "c3", day(2), True),
        (4, "d", day(3), True),
        (5, "e", day(3), True),
    ],
}


class TestFailedRunWritesNothing:
    @pytest.fixture(scope="class")
    def models(self):
        return FAILING_MODELS

    def table_state(self, project) -> dict[str, tuple[int | None, list[tuple]]]:
        state = {}
        for name, query in FAILING_QUERIES.items():
            table = relation(project, name)
            state[name] = (
                latest_snapshot_id(project, table),
                query_rows(project, query.format(table=table)),
            )
        return state

    def assert_rows(self, project, expected: Mapping[str, list[tuple]]) -> None:
        actual = {
            name: query_rows(project, query.format(table=relation(project, name)))
            for name, query in FAILING_QUERIES.items()
        }
        assert actual == {name: sort_rows(rows) for name, rows in expected.items()}

    def test_each_strategy_fails_atomically_then_converges(self, project):
        assert_all_passed(run_dbt(["run"]), len(FAILING_MODELS))
        assert_all_passed(run_dbt(["run", *run_vars(batch=2)]), len(FAILING_MODELS))
        self.assert_rows(project, AFTER_BATCH_2)
        before = self.table_state(project)

        results = run_dbt(["run", *run_vars(batch=3, fail=True)], expect_pass=False)
        by_model = results_by_model(results)
        assert by_model["fail_input"].status == "success"
        for name in FAILING_QUERIES:
            assert by_model[name].status == "error", name
            assert "boom" in (by_model[name].message or ""), name
        assert self.table_state(project) == before

        setting = project.run_sql(f"set {OVERWRITE_MODE}", fetch="all")
        assert all(str(tuple(r)[1]).lower() != "dynamic" for r in setting)

        assert_all_passed(run_dbt(["run", *run_vars(batch=3)]), len(FAILING_MODELS))
        self.assert_rows(project, AFTER_BATCH_3)
        after = self.table_state(project)
        for name in FAILING_QUERIES:
            assert after[name][0] != before[name][0], name


# --- 7. row counts in run_results.json -----------------------------------------------

COUNT_MODELS = {
    "count_merge.sql": batch_model(
        "materialized='incremental', incremental_strategy='merge', unique_key='id'",
        {
            1: "select * from values (1, 'a'), (2, 'b'), (3, 'c') as t(id, label)",
            2: "select * from values (2, 'B'), (3, 'C'), (4, 'd') as t(id, label)",
        },
    ),
    "count_delete_insert.sql": batch_model(
        "materialized='incremental', incremental_strategy='delete+insert', unique_key='id'",
        {
            1: "select * from values (1, 'a'), (2, 'b'), (3, 'c') as t(id, label)",
            2: "select * from values (1, 'x'), (2, 'y'), (2, 'z') as t(id, label)",
        },
    ),
    "count_append.sql": batch_model(
        "materialized='incremental', incremental_strategy='append'",
        {
            1: "select * from values (1, 'a') as t(id, label)",
            2: "select * from values (2, 'b'), (3, 'c') as t(id, label)",
        },
    ),
}


class TestRowCountsInRunResults:
    @pytest.fixture(scope="class")
    def models(self):
        return COUNT_MODELS

    def test_adapter_response_counts_and_snapshot(self, project):
        assert_all_passed(run_dbt(["run"]), len(COUNT_MODELS))
        assert_all_passed(run_dbt(["run", *run_vars(batch=2)]), len(COUNT_MODELS))
        responses = adapter_responses(project)

        merge = responses["count_merge"]
        assert (merge["rows_inserted"], merge["rows_updated"], merge["rows_deleted"]) == (1, 2, 0)

        delete_insert = responses["count_delete_insert"]
        assert delete_insert["rows_inserted"] == 3
        assert delete_insert["rows_deleted"] == 2

        append = responses["count_append"]
        assert append["rows_inserted"] == 2

        for name in ("count_merge", "count_delete_insert", "count_append"):
            current = latest_snapshot_id(project, relation(project, name))
            assert current is not None
            assert responses[name]["snapshot_id"] == current, name

        # The counts describe the rows the tables really hold.
        rows = query_rows(project, f"select id, label from {relation(project, 'count_merge')}")
        assert rows == [(1, "a"), (2, "B"), (3, "C"), (4, "d")]
        table = relation(project, "count_delete_insert")
        rows = query_rows(project, f"select id, label from {table}")
        assert rows == [(1, "x"), (2, "y"), (2, "z"), (3, "c")]


# --- 8. bad config: an error, nothing written ----------------------------------------

BAD_CONFIG_SQL = """
{{ config(
    materialized='incremental',
    incremental_strategy=var('strategy', 'merge'),
    unique_key=var('key', 'id'),
    merge_update_columns=var('update_columns', none),
    merge_exclude_columns=var('exclude_columns', none),
    incremental_predicates=var('predicates', none),
) }}
select * from values (1, 'a'), (2, 'b') as t(id, label)
"""

VALID_STRATEGIES = ("append", "merge", "delete+insert", "insert_overwrite", "scd2")


class TestBadConfigWritesNothing:
    @pytest.fixture(scope="class")
    def models(self):
        return {"bad_config_model.sql": BAD_CONFIG_SQL}

    def failing_run(self, project, **values: object) -> str:
        table = relation(project, "bad_config_model")
        snapshot = latest_snapshot_id(project, table)
        results = run_dbt(["run", *run_vars(**values)], expect_pass=False)
        assert len(results) == 1
        assert results[0].status == "error"
        assert latest_snapshot_id(project, table) == snapshot
        rows = query_rows(project, f"select id, label from {table}")
        assert rows == [(1, "a"), (2, "b")]
        return results[0].message or ""

    def test_bad_configs(self, project):
        assert_all_passed(run_dbt(["run"]), 1)

        message = self.failing_run(project, strategy="upsert")
        assert "upsert" in message
        assert "bad_config_model" in message
        for strategy in VALID_STRATEGIES:
            assert strategy in message, strategy

        message = self.failing_run(project, strategy="merge", key=None)
        assert "unique_key" in message
        assert "bad_config_model" in message

        message = self.failing_run(project, key="no_such_column")
        assert "no_such_column" in message
        assert "bad_config_model" in message

        # A misspelt column to update (or to keep) is refused, never dropped: a merge
        # without it would keep every matched row's old values.
        for key, value in (("update_columns", "labl"), ("exclude_columns", "lable")):
            message = self.failing_run(project, **{key: [value]})
            assert (
                f"Model `bad_config_model`, config `merge_{key}`: column(s) {value} not in "
                "the model's output (id, label)"
            ) in message, message

        # A predicate breaking out of the statement's parentheses would match rows it
        # should not (delete+insert would delete them).
        message = self.failing_run(
            project, strategy="delete+insert", predicates=["id > 1) OR (id > 0"]
        )
        assert (
            "Model `bad_config_model`, config `incremental_predicates`: `id > 1) OR (id > 0` "
            "closes a parenthesis it did not open"
        ) in message, message

        # The model still works with its good config.
        assert_all_passed(run_dbt(["run"]), 1)
