"""Spark-to-Iceberg types and the schema diff behind on_schema_change."""

from __future__ import annotations

import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import (
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
)
from pyspark.sql import types as spark

from dbt.adapters.s3tables.errors import ModelConfigError, UnsupportedTypeError
from dbt.adapters.s3tables.incremental.schema_evolution import plan_evolution, schema_diff
from dbt.adapters.s3tables.sql.types import iceberg_type


@pytest.mark.parametrize(
    ("spark_type", "expected"),
    [
        (spark.ByteType(), IntegerType()),
        (spark.ShortType(), IntegerType()),
        (spark.IntegerType(), IntegerType()),
        (spark.LongType(), LongType()),
        (spark.FloatType(), FloatType()),
        (spark.DecimalType(12, 3), DecimalType(12, 3)),
        (spark.VarcharType(10), StringType()),
        (spark.TimestampType(), TimestamptzType()),
        (spark.TimestampNTZType(), TimestampType()),
    ],
)
def test_primitive_types(spark_type: spark.DataType, expected) -> None:
    assert iceberg_type(spark_type, "c") == expected


def test_nested_types_map_recursively() -> None:
    nested = spark.StructType(
        [
            spark.StructField("tags", spark.ArrayType(spark.StringType())),
            spark.StructField("scores", spark.MapType(spark.StringType(), spark.LongType())),
        ]
    )
    result = iceberg_type(nested, "c")
    assert isinstance(result, StructType)
    tags, scores = result.fields
    assert isinstance(tags.field_type, ListType)
    assert tags.field_type.element_type == StringType()
    assert isinstance(scores.field_type, MapType)
    assert scores.field_type.value_type == LongType()


def test_unsupported_type_names_the_column() -> None:
    with pytest.raises(UnsupportedTypeError, match="`payload.when`"):
        iceberg_type(spark.DayTimeIntervalType(), "payload.when")


TABLE = Schema(
    NestedField(1, "CustomerID", IntegerType(), required=False),
    NestedField(2, "amount", FloatType(), required=False),
    NestedField(3, "old", StringType(), required=False),
    NestedField(
        4,
        "address",
        StructType(NestedField(5, "city", StringType(), required=False)),
        required=False,
    ),
)


def model(*fields: spark.StructField) -> spark.StructType:
    return spark.StructType(list(fields))


def test_diff_is_case_insensitive_and_sees_nested_additions() -> None:
    diff = schema_diff(
        TABLE,
        model(
            spark.StructField("customerid", spark.IntegerType()),
            spark.StructField("amount", spark.FloatType()),
            spark.StructField(
                "address",
                spark.StructType(
                    [
                        spark.StructField("city", spark.StringType()),
                        spark.StructField("zip", spark.StringType()),
                    ]
                ),
            ),
            spark.StructField("new", spark.DateType()),
        ),
    )
    assert [path for path, _ in diff.added] == [("address", "zip"), ("new",)]
    assert diff.removed == ["old"]
    assert diff.changed == []


def widened_model() -> spark.StructType:
    return model(
        spark.StructField("customerid", spark.LongType()),
        spark.StructField("amount", spark.DoubleType()),
    )


def test_sync_all_columns_widens_and_keeps_removed_columns() -> None:
    plan = plan_evolution("m", "sync_all_columns", schema_diff(TABLE, widened_model()))
    assert [(c.path, c.new) for c in plan.changed] == [
        (("CustomerID",), LongType()),
        (("amount",), DoubleType()),
    ]
    assert plan.removed == []


def test_append_new_columns_ignores_type_changes() -> None:
    plan = plan_evolution("m", "append_new_columns", schema_diff(TABLE, widened_model()))
    assert plan.empty


def test_narrowing_is_refused_with_every_difference_named() -> None:
    narrowing = model(spark.StructField("amount", spark.StringType()))
    with pytest.raises(ModelConfigError) as error:
        plan_evolution("orders", "sync_all_columns", schema_diff(TABLE, narrowing))
    message = str(error.value)
    assert "`orders`" in message and "`amount` from float to string" in message


def test_fail_lists_every_difference_and_unknown_mode_is_refused() -> None:
    with pytest.raises(ModelConfigError) as error:
        plan_evolution("orders", "fail", schema_diff(TABLE, widened_model()))
    message = str(error.value)
    assert "`old`" in message and "`CustomerID`" in message
    with pytest.raises(ModelConfigError, match="ignore, fail, append_new_columns"):
        plan_evolution("orders", "drop_everything", schema_diff(TABLE, widened_model()))
