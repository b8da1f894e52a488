"""Partition evolution's pure pieces: `partition_by` entries parsed into Iceberg partition
fields (or refused, naming model, key and fix), the spec change against a table's actual
spec, the checks of added fields, and the statements replacing partitions by value."""

from __future__ import annotations

import pytest
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    VoidTransform,
    YearTransform,
)
from pyiceberg.types import IntegerType, NestedField, StringType, TimestamptzType

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.incremental.config import check_against_columns, incremental_config
from dbt.adapters.s3tables.incremental.partition_evolution import (
    PartitionTerm,
    check_added_sources,
    parse_partition_by,
    parse_partition_term,
    spec_change,
)
from dbt.adapters.s3tables.incremental.statement_parts import IncrementalWrite
from dbt.adapters.s3tables.incremental.strategies import (
    partition_values_overwrite_fallback_sql,
    partition_values_overwrite_sql,
)

SCHEMA = Schema(
    NestedField(1, "id", IntegerType(), required=False),
    NestedField(2, "ts", TimestamptzType(), required=False),
    NestedField(3, "Name", StringType(), required=False),
)


def spec(*fields: tuple[int, int, object, str], spec_id: int = 0) -> PartitionSpec:
    return PartitionSpec(
        *(
            PartitionField(source, field_id, transform, name)
            for source, field_id, transform, name in fields
        ),
        spec_id=spec_id,
    )


DAY_TS = (2, 1000, DayTransform(), "ts_day")
BUCKET_ID = (1, 1001, BucketTransform(4), "id_bucket")


@pytest.mark.parametrize(
    ("entry", "source", "transform"),
    [
        ("day", "day", IdentityTransform()),
        ("`my col`", "my col", IdentityTransform()),
        ("`a(b)`", "a(b)", IdentityTransform()),
        ("identity(id)", "id", IdentityTransform()),
        ("years(ts)", "ts", YearTransform()),
        ("year(ts)", "ts", YearTransform()),
        ("MONTHS( ts )", "ts", MonthTransform()),
        ("days(ts)", "ts", DayTransform()),
        ("date(ts)", "ts", DayTransform()),
        ("day(`ts`)", "ts", DayTransform()),
        ("hours(ts)", "ts", HourTransform()),
        ("bucket(16, id)", "id", BucketTransform(16)),
        ("bucket(id, 16)", "id", BucketTransform(16)),
        ("truncate(4, `s`)", "s", TruncateTransform(4)),
        ("truncate(`a,b`, 2)", "a,b", TruncateTransform(2)),
    ],
)
def test_entries_parse_to_iceberg_transforms(entry: str, source: str, transform: object) -> None:
    term = parse_partition_term("m", entry)
    assert (term.source, term.transform) == (source, transform)
    assert term.entry == entry


@pytest.mark.parametrize(
    "entry",
    [
        "zorder(a, b)",
        "bucket(id)",
        "bucket(0, id)",
        "truncate(a, b)",
        "days()",
        "days(a, b)",
        "date_hour(ts)",
        "a + b)",
        "bucket(4, id, x)",
    ],
)
def test_an_entry_that_cannot_be_mapped_names_model_key_value_and_fix(entry: str) -> None:
    with pytest.raises(ModelConfigError) as raised:
        parse_partition_term("orders", entry)
    message = str(raised.value)
    assert "Model `orders`, config `partition_by`" in message
    assert f"`{entry}`" in message
    assert "Fix:" in message and "bucket(16, id)" in message


def test_one_string_listing_several_fields_gives_each() -> None:
    terms = parse_partition_by("m", ["day, bucket(4, id)", "`a,b`"])
    assert [(t.source, t.transform) for t in terms] == [
        ("day", IdentityTransform()),
        ("id", BucketTransform(4)),
        ("a,b", IdentityTransform()),
    ]


def test_two_time_transforms_of_one_column_are_refused() -> None:
    with pytest.raises(ModelConfigError) as raised:
        parse_partition_by("orders", ["days(ts)", "bucket(4, id)", "months(TS)"])
    message = str(raised.value)
    assert "Model `orders`, config `partition_by`" in message
    assert "`days(ts)` and `months(TS)` both partition column `TS` by time" in message
    assert "Fix: keep one of them" in message
    assert len(parse_partition_by("orders", ["days(ts)", "day(ts)", "months(other)"])) == 3


def test_a_bad_entry_fails_when_the_config_is_parsed_before_any_build() -> None:
    with pytest.raises(ModelConfigError, match="zorder"):
        incremental_config("orders", {"partition_by": ["days(ts)", "zorder(ts, id)"]})


def test_partition_columns_must_be_in_the_model_output() -> None:
    settings = incremental_config("orders", {"partition_by": ["bucket(4, `customer id`)"]})
    assert [t.source for t in settings.partitioning] == ["customer id"]
    with pytest.raises(ModelConfigError, match="partition_by.*customer id"):
        check_against_columns(settings, ["id", "ts"])
    check_against_columns(settings, ["id", "customer id"])


@pytest.mark.parametrize(
    ("entry", "described"),
    [
        ("id", "id"),
        ("days(ts)", "day(ts)"),
        ("bucket(4, id)", "bucket(4, id)"),
        ("truncate(8, s)", "truncate(8, s)"),
        ("years(ts)", "year(ts)"),
    ],
)
def test_fields_are_described_as_iceberg_names_them(entry: str, described: str) -> None:
    assert parse_partition_term("m", entry).describe() == described


def test_the_same_spec_in_another_spelling_or_order_is_no_change() -> None:
    current = spec(DAY_TS, BUCKET_ID)
    wanted = parse_partition_by("m", ["bucket(4, ID)", "day(`ts`)"])
    assert spec_change(current, SCHEMA, wanted).empty
    assert spec_change(UNPARTITIONED_PARTITION_SPEC, SCHEMA, ()).empty


def test_a_changed_transform_removes_the_old_field_and_adds_the_new_ones() -> None:
    change = spec_change(
        spec(DAY_TS), SCHEMA, parse_partition_by("m", ["months(ts)", "bucket(4, id)"])
    )
    assert change.removed == ("ts_day",)
    assert [(t.source, t.transform) for t in change.added] == [
        ("ts", MonthTransform()),
        ("id", BucketTransform(4)),
    ]
    assert change.describe() == "day(ts) -> month(ts), bucket(4, id)"


def test_kept_fields_stay_and_a_new_bucket_count_is_a_new_field() -> None:
    change = spec_change(
        spec(DAY_TS, BUCKET_ID), SCHEMA, parse_partition_by("m", ["days(ts)", "bucket(8, id)"])
    )
    assert change.removed == ("id_bucket",)
    assert [t.transform for t in change.added] == [BucketTransform(8)]
    assert change.describe() == "day(ts), bucket(4, id) -> day(ts), bucket(8, id)"


def test_partitioning_added_to_and_removed_from_a_table() -> None:
    added = spec_change(UNPARTITIONED_PARTITION_SPEC, SCHEMA, parse_partition_by("m", ["Name"]))
    assert added.removed == () and added.describe() == "unpartitioned -> Name"
    removed = spec_change(spec(DAY_TS), SCHEMA, ())
    assert removed.removed == ("ts_day",) and removed.describe() == "day(ts) -> unpartitioned"


def test_a_field_listed_twice_is_added_once_and_void_fields_are_ignored() -> None:
    # A format-1 table keeps a removed field as a void transform: it partitions nothing.
    current = spec((2, 1000, VoidTransform(), "ts_day"))
    change = spec_change(current, SCHEMA, parse_partition_by("m", ["days(ts)", "day(ts)"]))
    assert change.removed == ()
    assert [t.describe() for t in change.added] == ["day(ts)"]


def column_type(name: str):
    try:
        return SCHEMA.find_field(name, case_sensitive=False).field_type
    except ValueError:
        return None


def test_an_added_field_on_a_column_the_table_lacks_is_refused_with_the_fix() -> None:
    with pytest.raises(ModelConfigError) as raised:
        check_added_sources("orders", parse_partition_by("orders", ["days(created)"]), column_type)
    message = str(raised.value)
    assert "Model `orders`, config `partition_by`" in message
    assert "`days(created)`" in message and "does not have" in message
    assert "append_new_columns" in message and "--full-refresh" in message


def test_an_added_field_whose_transform_does_not_fit_the_type_is_refused() -> None:
    with pytest.raises(ModelConfigError, match=r"`days\(name\)` cannot partition column `name`"):
        check_added_sources("orders", parse_partition_by("orders", ["days(name)"]), column_type)
    check_added_sources("orders", parse_partition_by("orders", ["truncate(2, name)"]), column_type)


def overwrite_write(*entries: str) -> IncrementalWrite:
    return IncrementalWrite(
        target="`s`.`t`",
        source_sql="select * from src",
        target_columns=["id", "ts", "Name"],
        source_columns=["id", "ts", "name"],
        predicates=["DBT_INTERNAL_DEST.id > 0"],
        partitioning=parse_partition_by("m", entries),
        function_catalog="`local`",
    )


def test_overwrite_by_partition_values_is_one_merge_on_the_current_spec_values() -> None:
    sql = partition_values_overwrite_sql(overwrite_write("months(ts)", "bucket(4, id)", "name"))
    assert sql.count("MERGE INTO `s`.`t`") == 1 and ";" not in sql
    on = sql.split("\nON ", 1)[1].split("\n", 1)[0]
    assert on == (
        "(DBT_INTERNAL_SOURCE.dbt_internal_action = 'delete' AND "
        "`local`.system.months(DBT_INTERNAL_DEST.`ts`) <=> "
        "DBT_INTERNAL_SOURCE.`dbt_internal_partition_0` AND "
        "`local`.system.bucket(4, DBT_INTERNAL_DEST.`id`) <=> "
        "DBT_INTERNAL_SOURCE.`dbt_internal_partition_1` AND "
        "DBT_INTERNAL_DEST.`Name` <=> DBT_INTERNAL_SOURCE.`dbt_internal_partition_2`)"
    )
    # One delete row per distinct partition value; the insert rows carry NULL values.
    assert "SELECT DISTINCT NULL AS `id`, NULL AS `ts`, NULL AS `Name`, " in sql
    assert (
        "`local`.system.months(DBT_INTERNAL_SOURCE_keys.`ts`) AS `dbt_internal_partition_0`" in sql
    )
    assert ", NULL AS `dbt_internal_partition_2`, 'insert' AS dbt_internal_action" in sql
    assert "WHEN MATCHED THEN DELETE" in sql


def test_overwrite_by_partition_values_without_merge_is_one_insert_overwrite() -> None:
    sql = partition_values_overwrite_fallback_sql(overwrite_write("days(ts)"))
    assert sql.startswith("INSERT OVERWRITE `s`.`t`") and "MERGE" not in sql
    assert (
        "WHERE `local`.system.days(DBT_INTERNAL_DEST.`ts`) <=> "
        "`local`.system.days(DBT_INTERNAL_SOURCE.`ts`))" in sql
    )
    assert sql.count("UNION ALL") == 1


def test_terms_compare_by_column_case_insensitively_and_transform() -> None:
    assert (
        PartitionTerm("ID", BucketTransform(4)).key == PartitionTerm("id", BucketTransform(4)).key
    )
    assert (
        PartitionTerm("id", BucketTransform(4)).key != PartitionTerm("id", BucketTransform(8)).key
    )
