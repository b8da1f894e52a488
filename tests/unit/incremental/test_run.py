"""The incremental run object: which action it decides, that it analyses the model's SQL
once, checks everything before anything is written, and what it writes (no Spark: a fake
engine answers analyses, a fake catalog holds the table's state)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from dbt_common.exceptions import DbtDatabaseError, DbtRuntimeError
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import IntegerType, NestedField, StringType, TimestampType
from pyspark.sql import types as spark

from dbt.adapters.s3tables.catalogs.table_changes import TableState
from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.incremental.key_uniqueness import COLLECTED_KEY_ROWS
from dbt.adapters.s3tables.incremental.model_state import REBUILD_PLAN, STRATEGY
from dbt.adapters.s3tables.incremental.plan import Action
from dbt.adapters.s3tables.incremental.run import (
    IncrementalRun,
    render_as_first_build,
    renders_as_first_build,
)
from dbt.adapters.s3tables.incremental.warehouse import Warehouse
from dbt.adapters.s3tables.model_config import parse_model_config

ID_NAME = spark.StructType(
    [spark.StructField("id", spark.IntegerType()), spark.StructField("name", spark.StringType())]
)
TABLE_SCHEMA = Schema(
    NestedField(1, "id", IntegerType(), required=False),
    NestedField(2, "name", StringType(), required=False),
)


@dataclass
class Target:
    schema: str = "analytics"
    identifier: str = "orders"

    def __str__(self) -> str:
        return f"`{self.schema}`.`{self.identifier}`"


class FakeEngine:
    """Answers analyses from `schemas` (by a word in the SQL), counting them."""

    def __init__(self, schemas: dict[str, spark.StructType]) -> None:
        self.schemas = schemas
        self.analysed: list[str] = []
        self.scoped_settings: list[dict[str, str]] = []
        # The statements executed, and the index of each announced as a data write.
        self.executed: list[str] = []
        self.announced: list[int] = []
        self.dropped_views: list[str] = []
        # What dropping a view raises (a JVM that died), if anything.
        self.drop_error: Exception | None = None

    def query_schema(self, sql: str) -> spark.StructType:
        self.analysed.append(sql)
        return next(schema for word, schema in self.schemas.items() if word in sql)

    def has_iceberg_extensions(self) -> bool:
        return True

    @contextmanager
    def settings(self, values: dict[str, str]) -> Iterator[None]:
        self.scoped_settings.append(values)
        yield

    def tag_next_write(self) -> None:
        self.announced.append(len(self.executed))

    def drop_temp_view(self, view_name: str) -> None:
        if self.drop_error is not None:
            raise self.drop_error
        self.dropped_views.append(view_name)


@dataclass
class FakeCatalogConfig:
    name: str = "local"

    def table_defaults(self) -> dict[str, str]:
        return {}


@dataclass
class FakeIceberg:
    """One table whose snapshot id moves on with every data statement executed."""

    schema: Schema = TABLE_SCHEMA
    properties: dict[str, str] = field(default_factory=dict)
    snapshot_id: int = 1
    config: FakeCatalogConfig = field(default_factory=FakeCatalogConfig)
    commits: list[str] = field(default_factory=list)
    spec: PartitionSpec = UNPARTITIONED_PARTITION_SPEC
    # Whether data files of an earlier partition spec are live.
    older_spec_files: bool = False

    def table_state(self, namespace: str, name: str, branch: str | None = None) -> TableState:
        return TableState(self.schema, dict(self.properties), self.snapshot_id, {}, self.spec, 2)

    def set_properties_if_changed(
        self, namespace: str, name: str, properties: dict[str, str], remove: tuple[str, ...] = ()
    ) -> bool:
        self.properties.update(properties)
        for key in remove:
            self.properties.pop(key, None)
        self.commits.append("properties")
        return True

    def evolve_schema(self, namespace: str, name: str, added: Any, widened: Any) -> None:
        self.commits.append(f"schema: added {[path for path, _ in added]}")

    def evolve_partition_spec(
        self, namespace: str, name: str, removed: list[str], added: list[tuple[str, Any]]
    ) -> None:
        self.commits.append(f"spec: removed {removed}, added {[str(t) for _, t in added]}")
        self.older_spec_files = True

    def holds_files_of_other_specs(self, namespace: str, name: str) -> bool:
        return self.older_spec_files


class FakeWarehouse:
    def __init__(self, schemas: dict[str, spark.StructType], iceberg: FakeIceberg) -> None:
        self.engine = FakeEngine(schemas)
        self.iceberg = iceberg
        self.statements: list[str] = []
        # What a count of the model's rows per key answers: rows, repeated keys, their rows;
        # and the key values a collection of them answers.
        self.key_counts: tuple[int, int, int] = (2, 0, 0)
        self.collected_keys: list[tuple[Any, ...]] = [(1,), (2,)]
        # What the key span's aggregates answer (key_span.py), when a pass asks for them.
        self.key_span: tuple[Any, ...] = ("CAST('1' AS int)", "CAST('2' AS int)", False)
        # What a statement starting with the key's word raises (a failing statement).
        self.failures: dict[str, Exception] = {}

    def execute(self, sql: str) -> None:
        self.statements.append(sql)
        if sql.split()[0] in self.failures:
            raise self.failures[sql.split()[0]]
        self.engine.executed.append(sql)
        if sql.startswith(("MERGE", "INSERT")):
            self.iceberg.snapshot_id += 1
            self.iceberg.commits.append(f"data: {sql.split()[0]}")

    def span(self, sql: str) -> tuple[Any, ...]:
        return self.key_span if "min(" in sql else ()

    def fetch(self, sql: str) -> list[Any]:
        self.statements.append(sql)
        if "AS dbt_key_counts" in sql:
            return [(*self.key_counts, *self.span(sql))]
        return [(1, *self.span(sql))]

    def fetch_rows(self, sql: str) -> list[Any]:
        self.statements.append(sql)
        assert "AS dbt_collected_keys" in sql, sql
        assert sql.startswith("SELECT to_json("), sql  # the list as its JSON text
        text = json.dumps([{f"k{i}": v for i, v in enumerate(key)} for key in self.collected_keys])
        return [(text, None, *self.span(sql))]

    def port(self) -> Warehouse:
        return Warehouse(self.engine, self.execute, self.fetch, self.fetch_rows, self.iceberg)  # type: ignore[arg-type]


def incremental_run(
    config: dict[str, Any],
    model_sql: str = "select id, name from src",
    schemas: dict[str, spark.StructType] | None = None,
    iceberg: FakeIceberg | None = None,
    table_exists: bool = True,
    language: str = "sql",
    model_node: dict[str, Any] | None = None,
    reads_upstream_changes: bool = False,
) -> tuple[IncrementalRun, FakeWarehouse]:
    warehouse = FakeWarehouse(schemas or {"": ID_NAME}, iceberg or FakeIceberg())
    model_config = parse_model_config("orders", {"materialized": "incremental", **config}, language)
    run = IncrementalRun(
        model_config,
        Target(),
        model_sql,
        warehouse.port(),
        table_exists=table_exists,
        model_node=model_node,
        reads_upstream_changes=reads_upstream_changes,
    )
    return run, warehouse


def test_no_table_is_a_build_from_the_model_analysed_once() -> None:
    run, warehouse = incremental_run({"unique_key": "id"}, table_exists=False)
    assert run.action is Action.BUILD
    assert run.creates_table and not run.replaces_table and not run.needs_whole_history
    assert run.create_sql == "select id, name from src"
    assert run.columns == ["id", "name"]
    assert run.write() is None
    assert len(warehouse.engine.analysed) == 1


def test_an_existing_table_gets_the_strategy_statement_with_one_analysis() -> None:
    run, warehouse = incremental_run({"unique_key": "id"})
    assert run.action is Action.APPLY
    assert not run.creates_table
    response = run.write()
    assert response is not None and response.code == "MERGE"
    # The rows cached once (emptiness known without running the model twice), merged.
    assert [s.split()[0] for s in warehouse.statements] == ["CACHE", "SELECT", "MERGE"]
    # Its view (and cache) dropped by the engine (over thrift, with the server session).
    (cached,) = warehouse.engine.dropped_views
    assert warehouse.statements[0].startswith(f"CACHE LAZY TABLE `{cached}` AS")
    assert len(warehouse.engine.analysed) == 1
    assert warehouse.iceberg.properties[STRATEGY] == "merge"


def test_a_failed_drop_of_the_cached_rows_never_hides_the_statement_s_own_error() -> None:
    # The JVM died during the MERGE: dropping the view then fails too, and the error
    # dbt shows is still the MERGE's (the cause), with the drop's on it as a note.
    run, warehouse = incremental_run({"unique_key": "id"})
    warehouse.failures["MERGE"] = DbtDatabaseError("the MERGE failed: the JVM died")
    warehouse.engine.drop_error = DbtRuntimeError("Py4JNetworkError: no JVM")
    with pytest.raises(DbtDatabaseError, match="the MERGE failed") as raised:
        run.write()
    assert any("no JVM" in note for note in raised.value.__notes__)
    # After a MERGE that succeeded, a drop that fails is the run's error.
    run, warehouse = incremental_run({"unique_key": "id"})
    warehouse.engine.drop_error = DbtRuntimeError("Py4JNetworkError: no JVM")
    with pytest.raises(DbtRuntimeError, match="no JVM"):
        run.write()


def test_only_the_strategy_statement_is_announced_as_the_data_write() -> None:
    # Its commit alone records what the run read of its upstreams; the cache is no write.
    run, warehouse = incremental_run({"unique_key": "id"})
    run.write()
    executed = warehouse.engine.executed
    assert [executed[i].split()[0] for i in warehouse.engine.announced] == ["MERGE"]


def test_insert_overwrite_reading_upstream_changes_rebuilds_the_partitions_they_reach() -> None:
    run, warehouse = incremental_run(
        {"incremental_strategy": "insert_overwrite", "partition_by": "day(ts)"},
        model_sql="select id, ts from changes",
        schemas={"changes": ID_TS, "whole": ID_TS},
        iceberg=FakeIceberg(schema=ID_TS_SCHEMA, spec=BY_DAY),
        reads_upstream_changes=True,
    )
    assert run.action is Action.APPLY and run.needs_whole_history
    run.use_whole_history("select id, ts from whole")
    run.write()
    assert [s for s in warehouse.statements if s.startswith("INSERT OVERWRITE")]
    # The rows cached and written: the whole upstream's, in the days the changed rows fall on.
    (written,) = [s for s in warehouse.statements if s.startswith("CACHE")]
    assert "select id, ts from whole" in written
    assert "LEFT SEMI JOIN (\nselect id, ts from changes\n)" in written
    assert (
        "`local`.system.days(DBT_INTERNAL_SOURCE_whole.`ts`) <=> "
        "`local`.system.days(DBT_INTERNAL_SOURCE_changed.`ts`)" in written
    )
    # Other strategies write the changed rows as they are.
    run, _ = incremental_run({"unique_key": "id"}, reads_upstream_changes=True)
    assert not run.needs_whole_history


def test_a_bad_config_fails_before_the_first_build() -> None:
    with pytest.raises(ModelConfigError, match="use_merge"):
        incremental_run({"unique_key": "id", "use_merge": "sometimes"}, table_exists=False)


def test_a_config_column_missing_from_the_model_fails_before_anything_is_written() -> None:
    iceberg = FakeIceberg()
    with pytest.raises(ModelConfigError, match="watermark_column"):
        incremental_run({"unique_key": "id", "watermark_column": "updated_at"}, iceberg=iceberg)
    with pytest.raises(ModelConfigError, match="unique_key"):
        incremental_run(
            {"unique_key": "id"},
            model_sql="select name from src",
            schemas={"": spark.StructType([ID_NAME.fields[1]])},
        )
    assert iceberg.commits == []


def test_a_new_column_under_a_replacing_mode_rebuilds_from_the_whole_history() -> None:
    with_extra = spark.StructType([*ID_NAME.fields, spark.StructField("extra", spark.LongType())])
    run, warehouse = incremental_run(
        {"unique_key": "id", "on_schema_change": "full_refresh"},
        model_sql="select id, name, extra from src where recent",
        schemas={"": with_extra},
    )
    assert run.action is Action.REBUILD
    assert run.needs_whole_history and run.creates_table and run.replaces_table
    run.use_whole_history("select id, name, extra from src")
    assert run.create_sql.count("select id, name, extra from src") == 1
    assert "where recent" not in run.create_sql
    # One analysis of the model's SQL, one of the whole-history query.
    assert len(warehouse.engine.analysed) == 2


def test_a_column_the_model_no_longer_returns_is_kept_null_filled_on_rebuild() -> None:
    only_id_new = spark.StructType(
        [spark.StructField("id", spark.IntegerType()), spark.StructField("n", spark.LongType())]
    )
    run, _ = incremental_run(
        {"unique_key": "id", "on_schema_change": "recreate_empty"},
        model_sql="select id, n from src",
        schemas={"": only_id_new},
    )
    assert run.action is Action.RECREATE_EMPTY
    assert "CAST(NULL AS string) AS `name`" in run.create_sql


def test_a_chunked_rebuild_left_part_way_resumes() -> None:
    plan = '{"begin": null, "chunk": "day", "event_time": "id"}'
    run, _ = incremental_run(
        {"unique_key": "id"}, iceberg=FakeIceberg(properties={REBUILD_PLAN: plan})
    )
    assert run.action is Action.RESUME_CHUNKS
    assert run.needs_whole_history and not run.creates_table


def test_a_null_only_column_is_typed_on_build_and_does_not_break_the_next_run() -> None:
    with_void = spark.StructType([*ID_NAME.fields, spark.StructField("x", spark.NullType())])
    build, _ = incremental_run({"unique_key": "id"}, schemas={"": with_void}, table_exists=False)
    assert "CAST(`x` AS string) AS `x`" in build.create_sql
    with_x = Schema(*TABLE_SCHEMA.fields, NestedField(3, "x", StringType(), required=False))
    again, _ = incremental_run(
        {"unique_key": "id", "on_schema_change": "fail"},
        schemas={"": with_void},
        iceberg=FakeIceberg(schema=with_x),
    )
    assert again.action is Action.APPLY


def test_python_models_cannot_rebuild_from_whole_history() -> None:
    with pytest.raises(ModelConfigError, match="Python model"):
        incremental_run({"unique_key": "id", "on_schema_change": "full_refresh"}, language="python")


def test_first_build_rendering_is_scoped_to_the_call_even_when_it_fails() -> None:
    assert render_as_first_build("a.b", lambda: str(renders_as_first_build("a.b"))) == "True"
    assert not renders_as_first_build("a.b")

    def failing() -> str:
        raise RuntimeError("render failed")

    with pytest.raises(RuntimeError):
        render_as_first_build("a.b", failing)
    assert not renders_as_first_build("a.b")


BY_ID = PartitionSpec(PartitionField(1, 1000, IdentityTransform(), "id"), spec_id=0)
ID_TS = spark.StructType(
    [spark.StructField("id", spark.IntegerType()), spark.StructField("ts", spark.TimestampType())]
)
ID_TS_SCHEMA = Schema(
    NestedField(1, "id", IntegerType(), required=False),
    NestedField(2, "ts", TimestampType(), required=False),
)
BY_DAY = PartitionSpec(PartitionField(2, 1000, DayTransform(), "ts_day"), spec_id=0)


def test_a_partition_by_change_evolves_the_spec_after_the_schema_before_the_data() -> None:
    iceberg = FakeIceberg(spec=BY_ID)
    with_new = spark.StructType([*ID_NAME.fields, spark.StructField("n", spark.LongType())])
    run, _ = incremental_run(
        {
            "unique_key": "id",
            "on_schema_change": "append_new_columns",
            "partition_by": ["bucket(4, id)", "n"],
        },
        schemas={"": with_new},
        iceberg=iceberg,
    )
    assert run.spec_change.describe() == "id -> bucket(4, id), n"
    run.write()
    assert [c for c in iceberg.commits if c != "properties"] == [
        "schema: added [('n',)]",
        "spec: removed ['id'], added ['bucket[4]', 'identity']",
        "data: MERGE",
    ]


def test_an_unchanged_partitioning_commits_no_spec() -> None:
    iceberg = FakeIceberg(spec=BY_ID)
    run, _ = incremental_run({"unique_key": "id", "partition_by": "`ID`"}, iceberg=iceberg)
    run.write()
    assert not [c for c in iceberg.commits if c.startswith("spec")]


def test_a_new_partition_column_the_table_will_not_have_fails_before_any_commit() -> None:
    iceberg = FakeIceberg(spec=BY_ID)
    with_new = spark.StructType([*ID_NAME.fields, spark.StructField("n", spark.LongType())])
    with pytest.raises(ModelConfigError, match="partitions by column `n`"):
        incremental_run(
            {"unique_key": "id", "partition_by": ["n"]}, schemas={"": with_new}, iceberg=iceberg
        )
    assert iceberg.commits == []


def test_insert_overwrite_is_dynamic_while_every_file_has_the_current_spec() -> None:
    run, warehouse = incremental_run(
        {"incremental_strategy": "insert_overwrite", "partition_by": "id"},
        iceberg=FakeIceberg(spec=BY_ID),
    )
    run.write()
    assert [s for s in warehouse.statements if s.startswith("INSERT OVERWRITE")]
    assert warehouse.engine.scoped_settings == [
        {"spark.sql.sources.partitionOverwriteMode": "dynamic"}
    ]


def test_insert_overwrite_after_a_spec_change_replaces_partitions_by_value() -> None:
    iceberg = FakeIceberg(spec=BY_ID)
    run, warehouse = incremental_run(
        {"incremental_strategy": "insert_overwrite", "partition_by": "bucket(4, id)"},
        iceberg=iceberg,
    )
    response = run.write()
    merges = [s for s in warehouse.statements if s.startswith("MERGE")]
    assert len(merges) == 1 and "`local`.system.bucket(4, DBT_INTERNAL_DEST.`id`)" in merges[0]
    assert not [s for s in warehouse.statements if s.startswith("INSERT")]
    assert warehouse.engine.scoped_settings == [{}]
    assert response is not None and response.code == "INSERT_OVERWRITE"


@pytest.mark.parametrize(
    ("config", "model_node", "deduplicated"),
    [
        ({}, None, True),
        ({}, {"columns": {"id": {"constraints": [{"type": "primary_key"}]}}}, False),
        ({"unique_key_is_unique": True}, None, False),
        (
            {"unique_key_is_unique": False},
            {"constraints": [{"type": "unique", "columns": ["id"]}]},
            True,
        ),
    ],
)
def test_the_merge_source_is_deduplicated_unless_the_key_is_declared_unique(
    config: dict[str, Any], model_node: dict[str, Any] | None, deduplicated: bool
) -> None:
    run, warehouse = incremental_run({"unique_key": "id", **config}, model_node=model_node)
    warehouse.collected_keys = [(1,), (2,), (1,)]  # a key repeats: undeclared, deduplicated
    run.write()
    merge = next(s for s in warehouse.statements if s.startswith("MERGE"))
    assert ("ROW_NUMBER" in merge) is deduplicated


def test_a_first_build_keeps_repeated_keys_and_counts_them_once() -> None:
    run, warehouse = incremental_run({"unique_key": "id"}, table_exists=False)
    warehouse.key_counts = (5, 2, 4)
    assert run.create_sql == "select id, name from src"  # every row kept, as dbt's does
    assert run.create_sql  # counted once, whatever asks again
    assert sum("AS dbt_key_counts" in s for s in warehouse.statements) == 1


def test_a_first_build_without_repeated_keys_writes_the_rows_as_they_are() -> None:
    run, warehouse = incremental_run({"unique_key": "id"}, table_exists=False)
    assert run.create_sql == "select id, name from src"
    assert "GROUP BY `id`" in warehouse.statements[0]


@pytest.mark.parametrize(
    ("config", "counted"),
    [
        ({"unique_key": "id", "unique_key_is_unique": True}, False),
        ({"unique_key": "id", "incremental_strategy": "delete+insert"}, False),
        ({"incremental_strategy": "append"}, False),
        ({"unique_key": "id"}, True),
    ],
)
def test_only_undeclared_merge_keys_are_counted(config: dict, counted: bool) -> None:
    run, warehouse = incremental_run(config, table_exists=False)
    assert run.create_sql
    assert any("AS dbt_key_counts" in s for s in warehouse.statements) is counted


@pytest.mark.parametrize(
    ("collected", "deduplicated"), [([(1,), (2,), (3,)], False), ([(1,), (2,), (1,)], True)]
)
def test_a_merge_dedups_its_rows_only_when_a_key_repeats(
    collected: list[tuple[int]], deduplicated: bool
) -> None:
    """Over thrift (the fake's default), the keys come as one JSON text."""
    run, warehouse = incremental_run({"unique_key": "id"})
    warehouse.collected_keys = collected
    run.write()
    merge = next(s for s in warehouse.statements if s.startswith("MERGE"))
    assert ("ROW_NUMBER()" in merge) is deduplicated


@pytest.mark.parametrize(
    ("collected", "deduplicated"), [([(1,), (2,), (None,)], False), ([(1,), (2,), (1,)], True)]
)
def test_a_merge_counts_its_collected_keys_in_process(
    collected: list[tuple[Any, ...]], deduplicated: bool
) -> None:
    """The keys are collected (as JSON text) and counted here: Spark's grouping count is
    not run."""
    run, warehouse = incremental_run({"unique_key": "id"})
    warehouse.collected_keys = collected
    run.write()
    assert not any("AS dbt_key_counts" in s for s in warehouse.statements)
    merge = next(s for s in warehouse.statements if s.startswith("MERGE"))
    assert ("ROW_NUMBER()" in merge) is deduplicated


def test_more_rows_than_are_collected_are_counted_by_spark() -> None:
    run, warehouse = incremental_run({"unique_key": "id"})
    warehouse.collected_keys = [(n,) for n in range(COLLECTED_KEY_ROWS + 1)]
    warehouse.key_counts = (COLLECTED_KEY_ROWS + 5, 1, 2)
    run.write()
    counted = [s for s in warehouse.statements if "dbt_key" in s]
    assert "AS dbt_collected_keys" in counted[0] and "AS dbt_key_counts" in counted[1]
    merge = next(s for s in warehouse.statements if s.startswith("MERGE"))
    assert "ROW_NUMBER()" in merge


def test_a_first_build_counts_its_uncached_rows_with_spark() -> None:
    """A collection of too many uncached rows would evaluate the model's query once more."""
    run, warehouse = incremental_run({"unique_key": "id"}, table_exists=False)
    assert run.create_sql
    assert [
        s for s in warehouse.statements if "dbt_key" in s and "AS dbt_key_counts" not in s
    ] == []
    assert sum("AS dbt_key_counts" in s for s in warehouse.statements) == 1


def test_a_merge_with_no_collected_keys_commits_nothing() -> None:
    run, warehouse = incremental_run({"unique_key": "id"})
    warehouse.collected_keys = []
    response = run.write()
    assert response is not None and response.snapshot_id is None
    assert not any(s.startswith("MERGE") for s in warehouse.statements)


def test_a_merge_of_no_rows_commits_nothing() -> None:
    run, warehouse = incremental_run({"unique_key": "id"})
    warehouse.collected_keys = []
    response = run.write()
    assert response is not None and response.snapshot_id is None
    assert not any(s.startswith("MERGE") for s in warehouse.statements)


@pytest.mark.parametrize("strategy", ["merge", "delete+insert", "scd2"])
def test_a_keyed_statement_lets_spark_hash_the_smaller_side_of_its_join(strategy: str) -> None:
    run, warehouse = incremental_run(
        {"incremental_strategy": strategy, "unique_key": "id"}, iceberg=FakeIceberg(spec=BY_ID)
    )
    run.write()
    assert [s for s in warehouse.statements if s.startswith("MERGE")]
    assert warehouse.engine.scoped_settings == [
        {"spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold": "64MB"}
    ]


@pytest.mark.parametrize(
    ("config", "counted"),
    [
        ({"unique_key": "id"}, True),
        ({"unique_key": "id", "unique_key_is_unique": True}, False),
        ({"unique_key": "id", "incremental_strategy": "delete+insert"}, False),
        ({"unique_key": "id", "incremental_strategy": "scd2"}, True),
    ],
)
def test_a_keyed_statement_reads_only_the_target_rows_in_its_key_span(
    config: dict, counted: bool
) -> None:
    """The span comes from the pass that reads the cached rows anyway (the key count, or
    the look for a row): no statement more."""
    run, warehouse = incremental_run(config)
    run.write()
    passes = [s for s in warehouse.statements if s.startswith("SELECT")]
    assert len(passes) == 1 and "min(`id`)" in passes[0]
    assert ("dbt_collected_keys" in passes[0]) is counted
    statement = next(s for s in warehouse.statements if s.startswith("MERGE"))
    span = "DBT_INTERNAL_DEST.`id` BETWEEN CAST('1' AS int) AND CAST('2' AS int)"
    # In the MERGE's ON (and, for scd2, its look for changed keys as well).
    assert statement.count(span) == (2 if config.get("incremental_strategy") == "scd2" else 1)


@pytest.mark.parametrize(
    ("config", "model_sql", "schemas"),
    [
        ({"incremental_strategy": "append"}, "select id, name from t", None),
        # The key's type in the model (string) is not the table's (int): no span.
        (
            {"unique_key": "id"},
            "select id, name from t",
            {"": spark.StructType([spark.StructField("id", spark.StringType())])},
        ),
    ],
)
def test_no_key_span_where_rows_are_not_matched_by_a_key_of_one_kind(
    config: dict, model_sql: str, schemas: dict | None
) -> None:
    run, warehouse = incremental_run(config, model_sql=model_sql, schemas=schemas)
    run.write()
    assert not any("min(" in s for s in warehouse.statements)
    assert not any("BETWEEN" in s for s in warehouse.statements)
