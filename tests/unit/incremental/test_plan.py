"""The planner of an incremental run (`plan_run`), from plain values: a parsed config, the
model's output schema and the table's state. Every Action, and the decisions that pick
it; what an APPLY plan commits; the checks that refuse a run before anything is written.
No engine, no catalog, no fakes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import BucketTransform, IdentityTransform
from pyiceberg.types import (
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
)
from pyspark.sql import types as spark

from dbt.adapters.s3tables.catalogs.table_changes import TableState
from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.incremental.config import IncrementalConfig, incremental_config
from dbt.adapters.s3tables.incremental.key_uniqueness import KeyUniqueness
from dbt.adapters.s3tables.incremental.model_state import REBUILD_PLAN, STRATEGY, UNIQUE_KEY
from dbt.adapters.s3tables.incremental.plan import (
    Action,
    Note,
    RunPlan,
    plan_run,
)
from dbt.adapters.s3tables.incremental.schema_evolution import SchemaDiff
from dbt.adapters.s3tables.incremental.strategies import STRATEGIES

ID = spark.StructField("id", spark.IntegerType())
NAME = spark.StructField("name", spark.StringType())
EXTRA = spark.StructField("extra", spark.LongType())
TS = spark.StructField("ts", spark.TimestampType())
ID_NAME = spark.StructType([ID, NAME])

TABLE_SCHEMA = Schema(
    NestedField(1, "id", IntegerType(), required=False),
    NestedField(2, "name", StringType(), required=False),
)
BY_ID = PartitionSpec(PartitionField(1, 1000, IdentityTransform(), "id"), spec_id=0)
CHUNKS = {"event_time": "ts", "begin": "2024-01-01", "chunk": "day"}


def settings(**config: Any) -> IncrementalConfig:
    return incremental_config("orders", {"unique_key": "id", **config})


def table(
    schema: Schema = TABLE_SCHEMA,
    properties: dict[str, str] | None = None,
    spec: PartitionSpec = UNPARTITIONED_PARTITION_SPEC,
) -> TableState:
    return TableState(schema, properties or {}, 7, {}, spec, 2)


def model(*fields: spark.StructField) -> spark.StructType:
    return spark.StructType(list(fields))


def with_ts() -> TableState:
    return table(
        Schema(*TABLE_SCHEMA.fields, NestedField(3, "ts", TimestamptzType(), required=False))
    )


# --- BUILD ---


def test_no_table_or_a_full_refresh_is_a_build() -> None:
    # --full-refresh: the run does not read the table's state; the planner gets none.
    plan = plan_run(settings(), ID_NAME, None)
    unique = KeyUniqueness(False, "no unique constraint on the key")
    assert plan == RunPlan(Action.BUILD, None, declared_uniqueness=unique, counts_keys=True)
    assert plan.creates_table and not plan.needs_whole_history


def test_a_build_checks_the_config_against_the_model_columns() -> None:
    with pytest.raises(ModelConfigError, match="watermark_column"):
        plan_run(settings(watermark_column="updated_at"), ID_NAME, None)
    with pytest.raises(ModelConfigError, match="unique_key"):
        plan_run(settings(), model(NAME), None)


# --- RESUME_CHUNKS ---


def test_a_rebuild_left_part_way_resumes_whatever_the_model_says_now() -> None:
    marked = table(properties={REBUILD_PLAN: json.dumps(CHUNKS)})
    # The model's columns are neither compared nor checked: the rebuild follows its plan.
    plan = plan_run(settings(on_schema_change="full_refresh"), model(NAME, EXTRA), marked)
    assert plan.action is Action.RESUME_CHUNKS
    assert plan.needs_whole_history and not plan.creates_table
    assert not plan.checks_whole_history
    assert plan.notes == ()


# --- the replacing on_schema_change modes ---


@pytest.mark.parametrize(
    ("mode", "action", "whole_history"),
    [
        ("full_refresh", Action.REBUILD, True),
        ("recreate_empty", Action.RECREATE_EMPTY, False),
        ("full_incremental_refresh", Action.REBUILD_IN_CHUNKS, True),
    ],
)
def test_a_new_column_under_a_replacing_mode_replaces_the_table(
    mode: str, action: Action, whole_history: bool
) -> None:
    config = settings(on_schema_change=mode, full_incremental_refresh=CHUNKS)
    plan = plan_run(config, model(ID, NAME, EXTRA, TS), with_ts())
    assert plan.action is action
    assert plan.creates_table
    assert plan.needs_whole_history is whole_history
    assert plan.checks_whole_history is whole_history
    assert plan.notes == (
        Note(
            "info",
            f"orders: on_schema_change `{mode}` replaces the table: new column `extra` bigint",
        ),
    )
    # Nothing to evolve: the table is replaced.
    assert plan.evolution == SchemaDiff() and plan.target_columns == ()


def test_a_chunked_rebuild_marks_the_new_table_with_its_plan() -> None:
    config = settings(on_schema_change="full_incremental_refresh", full_incremental_refresh=CHUNKS)
    plan = plan_run(config, model(ID, NAME, EXTRA, TS), with_ts())
    marker = json.loads(plan.marker_properties[REBUILD_PLAN])
    assert marker == {"event_time": "ts", "begin": "2024-01-01 00:00:00", "chunk": "day"}
    assert plan_run(config, model(ID, NAME, TS), None).marker_properties == {}


def test_a_type_change_under_a_replacing_mode_replaces_the_table() -> None:
    wider = spark.StructField("id", spark.LongType())
    plan = plan_run(settings(on_schema_change="full_refresh"), model(wider, NAME), table())
    assert plan.action is Action.REBUILD
    assert "widening of `id` from int to bigint" in plan.notes[0].text


def test_a_replacing_mode_applies_when_only_a_column_is_gone_or_nothing_changed() -> None:
    config = settings(on_schema_change="full_refresh")
    unchanged = plan_run(config, ID_NAME, table())
    assert unchanged.action is Action.APPLY and unchanged.notes == ()
    gone = plan_run(config, model(ID), table())
    assert gone.action is Action.APPLY
    assert gone.notes == (
        Note(
            "warning",
            "orders: column(s) name no longer returned by the model are kept (this adapter "
            "never drops a column); " + STRATEGIES["merge"].kept_column_values,
        ),
    )


def test_a_replaced_table_checks_this_runs_rows_only_when_it_is_built_from_them() -> None:
    without_key = model(NAME, EXTRA)
    with pytest.raises(ModelConfigError, match="unique_key"):
        plan_run(settings(on_schema_change="recreate_empty"), without_key, table())
    # The whole-history query is checked instead, once the run has it.
    rebuild = plan_run(settings(on_schema_change="full_refresh"), without_key, table())
    assert rebuild.action is Action.REBUILD


def test_a_column_of_no_iceberg_type_is_refused_when_deciding() -> None:
    interval = spark.StructField("gap", spark.DayTimeIntervalType())
    with pytest.raises(ModelConfigError, match="`gap`"):
        plan_run(settings(on_schema_change="full_refresh"), model(ID, NAME, interval), table())


@pytest.mark.parametrize("marked", [False, True])
def test_an_audited_run_cannot_rebuild_in_chunks(marked: bool) -> None:
    config = settings(on_schema_change="full_incremental_refresh", full_incremental_refresh=CHUNKS)
    state = with_ts()
    if marked:
        state = table(properties={REBUILD_PLAN: json.dumps(CHUNKS)})
    with pytest.raises(ModelConfigError, match="audit_before_publish"):
        plan_run(config, model(ID, NAME, EXTRA, TS), state, audited=True)
    audited = plan_run(settings(on_schema_change="full_refresh"), model(ID, NAME, EXTRA), table())
    assert audited.action is Action.REBUILD


# --- APPLY ---


def test_an_unchanged_model_applies_with_nothing_to_evolve() -> None:
    plan = plan_run(settings(), ID_NAME, table())
    assert plan.action is Action.APPLY
    assert not plan.creates_table and not plan.needs_whole_history
    assert plan.evolution.empty and plan.spec_change.empty
    assert plan.target_columns == ("id", "name")
    assert plan.table == table()


def test_append_new_columns_adds_them_and_writes_them() -> None:
    plan = plan_run(
        settings(on_schema_change="append_new_columns"), model(ID, NAME, EXTRA), table()
    )
    assert plan.evolution.added == [(("extra",), LongType())]
    assert plan.target_columns == ("id", "name", "extra")


def test_ignore_writes_the_table_columns_only() -> None:
    plan = plan_run(settings(), model(ID, NAME, EXTRA), table())
    assert plan.evolution.empty and plan.target_columns == ("id", "name")
    # ignore and fail say nothing of a column gone (fail refuses any difference).
    assert plan_run(settings(), model(ID), table()).notes == ()


def test_fail_refuses_any_difference() -> None:
    with pytest.raises(ModelConfigError, match="new column `extra`"):
        plan_run(settings(on_schema_change="fail"), model(ID, NAME, EXTRA), table())


def test_sync_all_columns_widens_but_refuses_a_narrowing() -> None:
    wide = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "name", StringType(), required=False),
    )
    with pytest.raises(ModelConfigError, match="only widens"):
        plan_run(settings(on_schema_change="sync_all_columns"), ID_NAME, table(wide))
    wider = spark.StructField("id", spark.LongType())
    plan = plan_run(settings(on_schema_change="sync_all_columns"), model(wider, NAME), table())
    assert [c.describe() for c in plan.evolution.changed] == ["widening of `id` from int to bigint"]


def test_a_null_only_column_matches_the_string_column_it_was_stored_as() -> None:
    stored = Schema(*TABLE_SCHEMA.fields, NestedField(3, "x", StringType(), required=False))
    void = spark.StructField("x", spark.NullType())
    plan = plan_run(settings(on_schema_change="fail"), model(ID, NAME, void), table(stored))
    assert plan.action is Action.APPLY


def test_scd2_validity_columns_are_the_tables_own() -> None:
    scd2 = Schema(
        *TABLE_SCHEMA.fields,
        NestedField(3, "valid_from", TimestampType(), required=False),
        NestedField(4, "valid_to", TimestampType(), required=False),
    )
    config = settings(incremental_strategy="scd2", on_schema_change="sync_all_columns")
    plan = plan_run(config, ID_NAME, table(scd2))
    assert plan.notes == ()
    assert plan.target_columns == ("id", "name", "valid_from", "valid_to")


def test_a_key_the_table_will_not_have_is_refused() -> None:
    key = spark.StructField("k", spark.StringType())
    with pytest.raises(ModelConfigError, match="unique_key"):
        plan_run(settings(unique_key="k"), model(ID, NAME, key), table())
    added = plan_run(
        settings(unique_key="k", on_schema_change="append_new_columns"),
        model(ID, NAME, key),
        table(),
    )
    assert added.target_columns == ("id", "name", "k")


def test_a_partition_by_change_is_planned_after_the_schema_change() -> None:
    config = settings(
        on_schema_change="append_new_columns", partition_by=["bucket(4, id)", "extra"]
    )
    plan = plan_run(config, model(ID, NAME, EXTRA), table(spec=BY_ID))
    assert plan.spec_change.describe() == "id -> bucket(4, id), extra"
    assert plan.spec_change.removed == ("id",)
    assert [t.transform for t in plan.spec_change.added] == [
        BucketTransform(4),
        IdentityTransform(),
    ]
    assert plan_run(settings(partition_by="`ID`"), ID_NAME, table(spec=BY_ID)).spec_change.empty


def test_a_new_partition_column_the_table_will_not_have_is_refused() -> None:
    with pytest.raises(ModelConfigError, match="partitions by column `extra`"):
        plan_run(settings(partition_by=["extra"]), model(ID, NAME, EXTRA), table(spec=BY_ID))


def test_config_changes_since_the_last_run_are_said_last() -> None:
    before = table(properties={STRATEGY: "append", UNIQUE_KEY: '["name"]'})
    config = settings(on_schema_change="append_new_columns")
    plan = plan_run(config, model(ID), before)
    assert [note.text for note in plan.notes] == [
        "orders: column(s) name no longer returned by the model are kept (this adapter "
        "never drops a column); " + STRATEGIES["merge"].kept_column_values,
        "orders: incremental_strategy changed from `append` to `merge` since the last run",
        'orders: unique_key changed from ["name"] to ["id"] since the last run',
    ]


def test_a_switch_to_scd2_is_refused() -> None:
    with pytest.raises(ModelConfigError, match="scd2"):
        plan_run(
            settings(incremental_strategy="scd2"), ID_NAME, table(properties={STRATEGY: "merge"})
        )


# --- the key decisions ---


@pytest.mark.parametrize(
    ("config", "model_node", "declared", "counts_keys"),
    [
        ({}, None, False, True),
        ({}, {"columns": {"id": {"constraints": [{"type": "primary_key"}]}}}, True, False),
        ({"unique_key_is_unique": True}, None, True, False),
        ({"incremental_strategy": "delete+insert"}, None, False, False),
        ({"incremental_strategy": "scd2"}, None, None, True),
        ({"incremental_strategy": "scd2", "unique_key_is_unique": True}, None, None, False),
        ({"unique_key": None, "incremental_strategy": "append"}, None, None, False),
    ],
)
def test_which_rows_are_counted_per_key_and_which_keys_are_declared_unique(
    config: dict[str, Any],
    model_node: dict[str, Any] | None,
    declared: bool | None,
    counts_keys: bool,
) -> None:
    plan = plan_run(settings(**config), ID_NAME, table(), model_node=model_node)
    uniqueness = plan.declared_uniqueness
    assert (uniqueness.source_unique if uniqueness else None) is declared
    assert plan.counts_keys is counts_keys
    assert plan_run(settings(**config), ID_NAME, None, model_node=model_node) == RunPlan(
        Action.BUILD, None, declared_uniqueness=uniqueness, counts_keys=counts_keys
    )
