"""A build declaring its contract's NOT NULL columns at creation (format v3 on the embedded
catalog): the columns it wants, how an existing table differs from them, when it applies,
what it refuses before anything is written, and the table a failed first build leaves
(none)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from dbt.adapters.contracts.connection import AdapterResponse
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform
from pyiceberg.types import IntegerType, NestedField, StringType, TimestamptzType
from pyspark.sql import types as spark

from dbt.adapters.s3tables.catalogs.table_changes import TableState
from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.incremental.warehouse import Warehouse
from dbt.adapters.s3tables.lifecycle.required_columns import (
    plan_required_columns,
    resulting_format_version,
    schema_differences,
    unrequired_not_null,
    wanted_columns,
)
from dbt.adapters.s3tables.relation import S3TablesRelation

QUERY = spark.StructType(
    [
        spark.StructField("id", spark.IntegerType()),
        spark.StructField("note", spark.StringType()),
        spark.StructField("nothing", spark.NullType()),
    ]
)


def table_schema(*fields: tuple[str, Any, bool]) -> Schema:
    return Schema(
        *(
            NestedField(i + 1, name, kind, required=required)
            for i, (name, kind, required) in enumerate(fields)
        )
    )


# The table QUERY builds with `id` not_null (a bare NULL's column stored as string).
BUILT = table_schema(
    ("id", IntegerType(), True), ("note", StringType(), False), ("nothing", StringType(), False)
)


def test_the_wanted_columns_are_the_querys_with_the_not_null_ones_required() -> None:
    columns = wanted_columns(QUERY, ["ID"])
    assert [c.describe() for c in columns] == [
        "`id` int NOT NULL",
        "`note` string",
        "`nothing` string",
    ]


def test_the_format_version_after_the_build_never_goes_down() -> None:
    assert resulting_format_version({}, None) == 2
    assert resulting_format_version({"format-version": "3"}, None) == 3
    assert resulting_format_version({}, 3) == 3
    assert resulting_format_version({"format-version": "3"}, 2) == 3


def test_a_table_with_the_same_columns_differs_in_nothing() -> None:
    assert schema_differences(BUILT, wanted_columns(QUERY, ["id"])) == []


def test_every_difference_of_columns_is_named() -> None:
    table = table_schema(
        ("id", IntegerType(), False), ("note", IntegerType(), False), ("gone", StringType(), False)
    )
    wanted = wanted_columns(QUERY, ["id"])
    assert schema_differences(table, wanted) == [
        "column `nothing` is new",
        "column `gone` is no longer returned",
        "column `id` becomes NOT NULL",
        "column `note` changes type to string",
    ]
    reordered = table_schema(
        ("note", StringType(), False), ("id", IntegerType(), True), ("nothing", StringType(), False)
    )
    assert schema_differences(reordered, wanted) == ["the columns are in another order"]
    assert schema_differences(BUILT, wanted_columns(QUERY, [])) == ["column `id` becomes nullable"]


def test_not_null_columns_the_table_does_not_require_are_named() -> None:
    optional = table_schema(("id", IntegerType(), False), ("note", StringType(), False))
    assert unrequired_not_null(optional, wanted_columns(QUERY, ["id", "nothing"])) == [
        "id",
        "nothing",
    ]
    assert unrequired_not_null(BUILT, wanted_columns(QUERY, ["id"])) == []


# --- planning and writing, against a fake catalog and engine ---


@dataclass
class FakeCatalogKind:
    client_writes_metadata: bool


@dataclass
class FakeIceberg:
    """The table's state, and the catalog type's answer to who writes metadata."""

    state: TableState | None
    client_writes_metadata: bool = True
    properties_set: list[dict[str, str]] = field(default_factory=list)

    def writes_metadata_through_sql(self, format_version: int) -> bool:
        return self.client_writes_metadata and format_version >= 3

    def table_state(self, namespace: str, name: str) -> TableState:
        assert self.state is not None, f"{namespace}.{name} does not exist"
        return self.state

    def set_properties_if_changed(self, namespace: str, name: str, wanted: dict[str, str]) -> bool:
        self.properties_set.append(wanted)
        return True

    def upgrade_format_version(self, namespace: str, name: str, version: int) -> int:
        raise AssertionError("not expected")


@dataclass
class FakeEngine:
    query: spark.StructType
    # How many statements were announced as the model's data write.
    data_writes: int = 0

    def query_schema(self, sql: str) -> spark.StructType:
        return self.query

    def tag_next_write(self) -> None:
        self.data_writes += 1

    def settings(self, values: dict[str, str]) -> Any:
        from contextlib import nullcontext

        return nullcontext()


TARGET = S3TablesRelation.create(schema="analytics", identifier="orders")


def state(
    schema: Schema, spec: PartitionSpec = UNPARTITIONED_PARTITION_SPEC, version: int = 3
) -> TableState:
    return TableState(schema, {}, 1, {}, spec, version)


def plan(
    iceberg: FakeIceberg,
    *,
    properties: dict[str, str] | None = None,
    partition_by: Any = None,
    audited: bool = False,
    not_null: tuple[str, ...] = ("id",),
    execute: Any = None,
    query: spark.StructType = QUERY,
) -> Any:
    warehouse = Warehouse(
        engine=FakeEngine(query),  # type: ignore[arg-type]  # the methods a plan calls
        execute=lambda sql: None,
        fetch=lambda sql: [],
        fetch_rows=lambda sql: [],
        iceberg=iceberg,  # type: ignore[arg-type]  # the methods a plan calls
    )
    return plan_required_columns(
        model_name="orders",
        target=TARGET,
        warehouse=warehouse,
        execute=execute or (lambda sql: AdapterResponse("OK")),
        not_null=not_null,
        sql="select 1",
        properties={"format-version": "3"} if properties is None else properties,
        partition_by=partition_by,
        table_exists=iceberg.state is not None,
        audited=audited,
    )


def test_only_a_v3_table_whose_metadata_pyiceberg_writes_declares_its_columns() -> None:
    new = plan(FakeIceberg(None))
    assert new is not None and new.creates_table
    assert new.column_definitions == "`id` int NOT NULL, `note` string, `nothing` string"
    assert plan(FakeIceberg(None), properties={}) is None  # created at v2
    assert plan(FakeIceberg(None, client_writes_metadata=False)) is None  # a REST catalog
    assert plan(FakeIceberg(None), not_null=()) is None  # nothing to declare
    # An existing v3 table stays at v3 when the model names no version.
    assert plan(FakeIceberg(state(BUILT)), properties={}) is not None


def test_a_rebuild_of_the_same_columns_and_partitioning_overwrites_in_one_statement() -> None:
    statements: list[str] = []

    def execute(sql: str) -> AdapterResponse:
        statements.append(sql)
        return AdapterResponse("OK")

    iceberg = FakeIceberg(state(BUILT))
    build = plan(iceberg, properties={"format-version": "3", "k": "v"}, execute=execute)
    response, written = build.overwrite()
    assert iceberg.properties_set == [{"k": "v"}]  # the version is not a property
    assert statements == [written] and written.startswith(
        "INSERT OVERWRITE `analytics`.`orders`\nSELECT `id`, `note`, `nothing` FROM ("
    )
    assert response == AdapterResponse("OK")


def test_a_rebuild_that_changes_columns_or_partitioning_is_refused_naming_the_fix() -> None:
    changed = table_schema(("id", IntegerType(), False), ("note", StringType(), False))
    with pytest.raises(ModelConfigError) as refused:
        plan(FakeIceberg(state(changed)))
    message = refused.value.msg
    assert message.startswith(
        "Model `orders`, config `contract`: its table `analytics.orders` is at Iceberg format "
        "v3 and this build changes it (column `nothing` is new; column `id` becomes NOT NULL)"
    )
    assert "nothing was written" in message and "\n" not in message
    assert (
        "Fix: drop the table (`dbt run-operation s3tables_drop_table --args "
        "'{name: analytics.orders}'`; its snapshot history goes with it)"
    ) in message

    # The table is partitioned by day(ts); the model (ts among its columns) is not.
    timed = Schema(*BUILT.fields, NestedField(4, "ts", TimestamptzType(), required=False))
    by_day = PartitionSpec(PartitionField(4, 1000, DayTransform(), "ts_day"))
    iceberg = FakeIceberg(state(timed, by_day))
    iceberg_query = spark.StructType(
        [*QUERY.fields, spark.StructField("ts", spark.TimestampType())]
    )
    with pytest.raises(ModelConfigError) as refused:
        plan(iceberg, query=iceberg_query)
    assert "config `partition_by`: " in str(refused.value)
    assert "(the partitioning changes (day(ts) -> unpartitioned))" in str(refused.value)


def test_an_audited_build_needs_the_table_to_require_its_not_null_columns() -> None:
    assert plan(FakeIceberg(state(BUILT)), audited=True) is not None
    optional = table_schema(("id", IntegerType(), False), ("note", StringType(), False))
    with pytest.raises(ModelConfigError) as refused:
        plan(FakeIceberg(state(optional)), audited=True)
    assert "config `contract`: `not_null` column(s) `id` are not NOT NULL in its table" in str(
        refused.value
    )


def test_a_failed_first_build_drops_the_table_it_created() -> None:
    statements: list[str] = []

    def execute(sql: str) -> AdapterResponse:
        statements.append(sql)
        if sql.startswith("INSERT"):
            raise RuntimeError("Contract of model `orders`: column `id` is not_null")
        return AdapterResponse("OK")

    iceberg = FakeIceberg(None)
    build = plan(iceberg, execute=execute)
    iceberg.state = TableState(BUILT, {}, None, {}, UNPARTITIONED_PARTITION_SPEC, 3)  # created
    with pytest.raises(RuntimeError, match="is not_null"):
        build.create_and_fill("CREATE TABLE analytics.orders (...)")
    assert statements[0] == "CREATE TABLE analytics.orders (...)"
    assert statements[1].startswith("INSERT INTO `analytics`.`orders`\nSELECT `id`, `note`")
    assert statements[2:] == ["DROP TABLE IF EXISTS `analytics`.`orders` PURGE"]

    # Rows another writer committed meanwhile are never dropped.
    statements.clear()
    iceberg.state = state(BUILT)
    with pytest.raises(RuntimeError):
        build.create_and_fill("CREATE TABLE analytics.orders (...)")
    assert [s.split()[0] for s in statements] == ["CREATE", "INSERT"]
