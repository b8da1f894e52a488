"""Iceberg types spelled as Spark SQL type names."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

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

from dbt.adapters.s3tables.sql.types import session_wall_time, spark_type_name, time_zone


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


@pytest.mark.parametrize(
    ("name", "offset_hours"),
    [("UTC", 0), ("+02:00", 2), ("-05:30", -5.5), ("GMT+1", 1), ("Asia/Kolkata", 5.5)],
)
def test_session_time_zones(name: str, offset_hours: float) -> None:
    zone = time_zone(name)
    instant = datetime(2024, 1, 15, 12, 0, tzinfo=timezone.utc)
    assert instant.astimezone(zone).utcoffset() == timedelta(hours=offset_hours)


def test_fetched_timestamps_become_session_wall_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # PySpark turns the instant 2020-01-01T00:00Z into New York local time.
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        local = datetime.fromtimestamp(datetime(2020, 1, 1, tzinfo=timezone.utc).timestamp())
        assert local == datetime(2019, 12, 31, 19, 0)
        assert session_wall_time(local, time_zone("UTC")) == datetime(2020, 1, 1, 0, 0)
        assert session_wall_time(local, time_zone("Europe/Paris")) == datetime(2020, 1, 1, 1, 0)
        # The autumn hour that happens twice keeps its instant.
        second = datetime.fromtimestamp(
            datetime(2024, 11, 3, 6, 30, tzinfo=timezone.utc).timestamp()
        )
        assert session_wall_time(second, time_zone("UTC")) == datetime(2024, 11, 3, 6, 30)
        assert session_wall_time(None, time_zone("UTC")) is None
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
