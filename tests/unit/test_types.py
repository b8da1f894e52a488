"""Iceberg types spelled as Spark SQL type names."""

from __future__ import annotations

import pytest
from pyiceberg.types import (
    BooleanType,
    DecimalType,
    DoubleType,
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

from dbt.adapters.s3tables.types import spark_type_name


@pytest.mark.parametrize(
    ("iceberg_type", "spark"),
    [
        (LongType(), "bigint"),
        (IntegerType(), "int"),
        (BooleanType(), "boolean"),
        (DoubleType(), "double"),
        (StringType(), "string"),
        (DecimalType(10, 2), "decimal(10,2)"),
        (DecimalType(38, 0), "decimal(38,0)"),
        (TimestamptzType(), "timestamp"),
        (TimestampType(), "timestamp_ntz"),
    ],
)
def test_primitive_types(iceberg_type: object, spark: str) -> None:
    assert spark_type_name(iceberg_type) == spark


def test_list() -> None:
    assert spark_type_name(ListType(1, LongType())) == "array<bigint>"


def test_map() -> None:
    assert spark_type_name(MapType(1, StringType(), 2, DecimalType(10, 2))) == (
        "map<string,decimal(10,2)>"
    )


def test_nested_struct() -> None:
    struct = StructType(
        NestedField(1, "id", LongType()),
        NestedField(2, "tags", ListType(3, StringType())),
        NestedField(
            4,
            "attrs",
            MapType(5, StringType(), 6, StructType(NestedField(7, "at", TimestamptzType()))),
        ),
    )
    assert spark_type_name(struct) == (
        "struct<id:bigint,tags:array<string>,attrs:map<string,struct<at:timestamp>>>"
    )
