"""A keyed run's key span: which key columns take part, the aggregates of the pass, and
the condition on the target's rows built from their values."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import DbtInternalError
from pyiceberg.schema import Schema
from pyiceberg.types import (
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
)
from pyspark.sql import types as spark

from dbt.adapters.s3tables.incremental.key_span import (
    VALUES_PER_COLUMN,
    SpanColumn,
    span_aggregates,
    span_columns,
    span_condition,
    span_pass_sql,
)

TABLE = Schema(
    NestedField(1, "ID", LongType(), required=False),
    NestedField(2, "code", StringType(), required=False),
    NestedField(3, "day", DateType(), required=False),
    NestedField(4, "at", TimestamptzType(), required=False),
    NestedField(5, "local_at", TimestampType(), required=False),
    NestedField(6, "amount", DecimalType(10, 2), required=False),
    NestedField(7, "ratio", DoubleType(), required=False),
    NestedField(8, "n", IntegerType(), required=False),
)


def rows(*fields: tuple[str, spark.DataType]) -> spark.StructType:
    return spark.StructType([spark.StructField(name, data_type) for name, data_type in fields])


def spanned(source: spark.StructType, keys: list[str]) -> list[SpanColumn]:
    targets = {key: {"id": "ID"}.get(key, key) for key in keys}
    return span_columns(source, TABLE, keys, targets)


def test_columns_of_one_kind_in_the_model_and_the_table_take_part() -> None:
    source = rows(
        ("id", spark.IntegerType()),  # int in the model, long in the table: both numbers
        ("code", spark.StringType()),
        ("day", spark.DateType()),
        ("at", spark.TimestampType()),
        ("amount", spark.DecimalType(12, 3)),
    )
    keys = ["id", "code", "day", "at", "amount"]
    assert spanned(source, keys) == [
        SpanColumn("id", "ID", "number", "int"),
        SpanColumn("code", "code", "string", "string"),
        SpanColumn("day", "day", "date", "date"),
        SpanColumn("at", "at", "timestamp", "timestamp"),
        SpanColumn("amount", "amount", "number", "decimal(12,3)"),
    ]


@pytest.mark.parametrize(
    ("key", "data_type"),
    [
        ("n", spark.StringType()),  # a string in the model, a number in the table
        ("ratio", spark.DoubleType()),  # NaN and -0.0 order otherwise than they match
        ("local_at", spark.TimestampNTZType()),
        ("missing", spark.LongType()),  # a column the table does not have yet
    ],
)
def test_other_columns_take_no_part(key: str, data_type: spark.DataType) -> None:
    assert spanned(rows((key, data_type)), [key]) == []


def test_aggregates_give_literal_texts_and_whether_a_value_is_null() -> None:
    columns = [SpanColumn("id", "ID", "number", "bigint"), SpanColumn("c", "c", "string", "string")]
    aggregates = span_aggregates(columns)
    assert len(aggregates) == 2 * VALUES_PER_COLUMN
    assert aggregates[0] == (
        "concat('CAST(', char(39), CAST(min(`id`) AS STRING), char(39), ' AS bigint)')"
    )
    assert aggregates[2] == "coalesce(max(`id` IS NULL), false)"
    assert aggregates[4] == (
        "concat('CAST(X', char(39), hex(CAST(max(`c`) AS BINARY)), char(39), ' AS STRING)')"
    )


def test_the_pass_without_a_key_count_counts_the_rows_then_spans() -> None:
    column = SpanColumn("id", "id", "number", "bigint")
    sql = span_pass_sql("SELECT * FROM `rows`", [column])
    assert sql == (
        f"SELECT count(*), {', '.join(span_aggregates([column]))} FROM (SELECT * FROM `rows`)"
    )


def test_the_condition_bounds_each_column_and_keeps_null_where_a_key_is_null() -> None:
    columns = [SpanColumn("id", "ID", "number", "bigint"), SpanColumn("d", "d", "date", "date")]
    values = (
        "CAST('-5' AS bigint)",
        "CAST('12' AS bigint)",
        False,
        "date_from_unix_date(19000)",
        "date_from_unix_date(19010)",
        "true",  # a boolean as dbt's tables may give it: its text
    )
    assert span_condition("orders", columns, values, "T") == (
        "T.`ID` BETWEEN CAST('-5' AS bigint) AND CAST('12' AS bigint) AND "
        "(T.`d` IS NULL OR T.`d` BETWEEN date_from_unix_date(19000) AND "
        "date_from_unix_date(19010))"
    )


def test_a_column_whose_values_are_all_null_matches_null_only() -> None:
    column = SpanColumn("id", "id", "number", "int")
    assert span_condition("orders", [column], (None, None, True), "T") == "T.`id` IS NULL"


def test_no_columns_no_condition() -> None:
    assert span_condition("orders", [], (), "T") is None


@pytest.mark.parametrize(
    "bound",
    ["CAST('1' AS bigint) OR 1=1", "CAST('x' AS STRING)", "1", None, "timestamp_micros(1)--"],
)
def test_a_bound_that_is_not_a_literal_is_never_written(bound: object) -> None:
    column = SpanColumn("id", "id", "number", "bigint")
    with pytest.raises(DbtInternalError, match="orders: the key span of `id`"):
        span_condition("orders", [column], ("CAST('1' AS bigint)", bound, False), "T")


def test_a_decimal_bound_in_scientific_notation_is_a_literal() -> None:
    """Spark may give a small decimal's text as `1E-8`: parsed from a string, it is exact."""
    column = SpanColumn("amount", "amount", "number", "decimal(10,8)")
    values = ("CAST('1E-8' AS decimal(10,8))", "CAST('0.5' AS decimal(10,8))", False)
    assert "BETWEEN CAST('1E-8' AS decimal(10,8))" in str(
        span_condition("orders", [column], values, "T")
    )
