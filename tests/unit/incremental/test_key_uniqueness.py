"""When a merge trusts its source to hold each unique key once (no dedup): the user's
`unique_key_is_unique`, else a primary_key/unique constraint within the key."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import types as spark

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.incremental.key_uniqueness import (
    COLLECTED_KEY_ROWS,
    KeyCounts,
    collected_key_columns,
    collected_keys_sql,
    counted_keys,
    declared_unique_columns,
    key_counts,
    key_counts_sql,
    key_uniqueness,
    uniqueness_setting,
)

# The collection of one key column `id`.
COLLECTED_IDS = "to_json(collect_list(named_struct('k0', `id`)), map('ignoreNullFields', 'false'))"


def node(constraints: list | None = None, columns: dict | None = None) -> dict:
    """A model node as dbt's `model` context variable holds it."""
    return {"name": "orders", "constraints": constraints or [], "columns": columns or {}}


def test_model_and_column_constraints_declare_unique_columns() -> None:
    model = node(
        constraints=[
            {"type": "primary_key", "columns": ["Id", "day"]},
            {"type": "check", "columns": ["amount"], "expression": "amount > 0"},
        ],
        columns={
            "code": {"name": "code", "constraints": [{"type": "unique"}]},
            "amount": {"name": "amount", "constraints": [{"type": "not_null"}]},
        },
    )
    assert declared_unique_columns(model) == [frozenset({"id", "day"}), frozenset({"code"})]


def test_a_node_without_constraints_declares_nothing() -> None:
    assert declared_unique_columns({"name": "orders"}) == []
    assert declared_unique_columns(node(columns={"id": {"name": "id"}})) == []


@pytest.mark.parametrize(
    ("key", "declared", "unique"),
    [
        (["id"], [frozenset({"id"})], True),
        (["ID"], [frozenset({"id"})], True),
        # A unique column makes every key containing it unique.
        (["id", "day"], [frozenset({"id"})], True),
        # A key inside a unique set is not made unique by it.
        (["id"], [frozenset({"id", "day"})], False),
        (["id"], [frozenset({"code"})], False),
        (["id"], [], False),
    ],
)
def test_a_constraint_within_the_key_skips_the_dedup(
    key: list[str], declared: list[frozenset[str]], unique: bool
) -> None:
    assert key_uniqueness(key, None, declared).source_unique is unique


def test_the_explicit_setting_wins_over_constraints() -> None:
    assert key_uniqueness(["id"], True, []).source_unique
    decision = key_uniqueness(["id"], False, [frozenset({"id"})])
    assert not decision.source_unique
    assert "unique_key_is_unique: false" in decision.reason


@pytest.mark.parametrize(
    ("value", "setting"),
    [(None, None), (True, True), (False, False), ("True", True), ("false", False)],
)
def test_setting_values(value: object, setting: bool | None) -> None:
    assert uniqueness_setting("orders", value) is setting


def test_an_unknown_setting_names_the_model_key_and_fix() -> None:
    with pytest.raises(
        ModelConfigError, match="orders.*unique_key_is_unique.*`yes`.*Fix: set true"
    ):
        uniqueness_setting("orders", "yes")


def test_the_key_count_reads_the_key_columns_alone() -> None:
    sql = key_counts_sql("SELECT * FROM rows", ["id", "day"])
    assert "GROUP BY `id`, `day`" in sql
    assert "max(" not in sql
    assert key_counts((5, 1, 2)) == KeyCounts(5, 1, 2)


def test_the_key_count_carries_the_watermark_aggregate_in_the_same_pass() -> None:
    """The greatest watermark value to record comes fourth, from the same grouped pass: the
    inner query keeps each key's greatest, the outer one aggregates those."""
    aggregate = "CAST(GREATEST(MAX(`version`), CAST('2' AS int)) AS STRING)"
    sql = key_counts_sql("SELECT * FROM rows", ["id"], ("version", aggregate))
    assert "max(`version`) AS `version`" in sql and "GROUP BY `id`" in sql
    assert sql.index(aggregate) < sql.index("FROM (SELECT count(*)")
    assert key_counts((5, 0, 0, "7")) == KeyCounts(5, 0, 0, "7")
    assert key_counts((0, 0, 0, None)).also is None


def test_a_watermark_column_named_like_the_count_keeps_its_own_name() -> None:
    sql = key_counts_sql("SELECT * FROM rows", ["id"], ("n", "CAST(MAX(`n`) AS STRING)"))
    assert "count(*) AS dbt_rows_of_key, max(`n`) AS `n`" in sql


def schema(**types: spark.DataType) -> spark.StructType:
    return spark.StructType([spark.StructField(name, t) for name, t in types.items()])


def test_keys_are_collected_as_spark_groups_them() -> None:
    """A string by its UTF-8 bytes and a date by its day number (Python's dates end at year
    9999); whole numbers, booleans and decimals as they are."""
    rows = schema(
        id=spark.LongType(),
        code=spark.StringType(),
        day=spark.DateType(),
        ok=spark.BooleanType(),
        amount=spark.DecimalType(10, 2),
    )
    assert collected_key_columns(rows, ["ID", "code", "day", "ok", "amount"]) == [
        "`ID`",
        "CAST(`code` AS BINARY)",
        "unix_date(`day`)",
        "`ok`",
        "`amount`",
    ]


@pytest.mark.parametrize(
    "key_type",
    [
        spark.DoubleType(),  # NaN and -0.0 group in Spark as they compare in Python not
        spark.TimestampType(),  # read in the process's local time: two instants can meet
        spark.BinaryType(),
        spark.ArrayType(spark.LongType()),
        spark.StructType([spark.StructField("a", spark.LongType())]),
    ],
)
def test_keys_python_cannot_compare_as_spark_groups_are_counted_by_spark(
    key_type: spark.DataType,
) -> None:
    assert collected_key_columns(schema(id=spark.LongType(), k=key_type), ["id", "k"]) is None


def test_a_key_column_the_rows_lack_is_counted_by_spark() -> None:
    assert collected_key_columns(schema(id=spark.LongType()), ["missing"]) is None


def test_the_collection_reads_the_key_columns_of_one_row_more_than_it_counts() -> None:
    sql = collected_keys_sql("SELECT * FROM rows", ["id", "day"], ["`id`", "unix_date(`day`)"])
    assert sql.startswith(
        "SELECT to_json(collect_list(named_struct('k0', `id`, 'k1', unix_date(`day`))), "
        "map('ignoreNullFields', 'false')) FROM (SELECT"
    )
    assert "(SELECT `id`, `day` FROM (\nSELECT * FROM rows\n)" in sql
    assert f"LIMIT {COLLECTED_KEY_ROWS + 1})" in sql


def test_the_collection_carries_the_watermark_aggregate_over_the_same_rows() -> None:
    """The aggregate reads the watermark column beside the keys (once, when it is one);
    over the collected rows, which are all the rows whenever the keys are counted here."""
    aggregate = "CAST(MAX(`version`) AS STRING)"
    sql = collected_keys_sql("SELECT * FROM rows", ["id"], ["`id`"], ("version", aggregate))
    assert sql.startswith(f"SELECT {COLLECTED_IDS}, {aggregate} FROM (SELECT")
    assert "(SELECT `id`, `version` FROM" in sql
    same = collected_keys_sql("SELECT * FROM rows", ["id"], ["`id`"], ("ID", aggregate))
    assert "(SELECT `id` FROM" in same
    assert counted_keys(('[{"k0":1},{"k0":2}]', 7)) == KeyCounts(2, 0, 0, "7")
    assert counted_keys(("[]", None)) == KeyCounts(0, 0, 0, None)


def test_collected_keys_are_counted_with_null_equal_to_null() -> None:
    collected = [(1, "YQ=="), (1, "YQ=="), (2, None), (2, None), (2, None), (3, 1.5), (None, None)]
    text = json.dumps([{"k0": k0, "k1": k1} for k0, k1 in collected])
    assert counted_keys((text,)) == KeyCounts(7, 2, 5)
    assert counted_keys(("[]",)) == KeyCounts(0, 0, 0)


def test_more_rows_than_are_collected_are_not_counted_here() -> None:
    def keys(n: int) -> str:
        return json.dumps([{"k0": i} for i in range(n)])

    assert counted_keys((keys(COLLECTED_KEY_ROWS + 1),)) is None
    assert counted_keys((keys(COLLECTED_KEY_ROWS),)) == KeyCounts(COLLECTED_KEY_ROWS, 0, 0)


def test_the_key_span_comes_last_from_the_same_pass_over_the_key_groups() -> None:
    span = ["min(`id`)", "max(`id`)"]
    sql = key_counts_sql(
        "SELECT * FROM rows", ["id", "day"], ("id", "CAST(MAX(`id`) AS STRING)"), span
    )
    # The groups carry the key columns (the watermark column, a key here, once).
    assert "FROM (SELECT `day`, count(*) AS dbt_rows_of_key, max(`id`) AS `id`" in sql
    assert sql.index("CAST(MAX(`id`) AS STRING)") < sql.index("min(`id`)")
    assert key_counts((5, 0, 0, "7", "a", "b"), 2) == KeyCounts(5, 0, 0, "7", ("a", "b"))
    assert key_counts((5, 0, 0, "a", "b"), 2).also is None
    collected = collected_keys_sql("SELECT * FROM rows", ["id"], ["`id`"], None, span)
    assert collected.startswith(f"SELECT {COLLECTED_IDS}, min(`id`), max(`id`) FROM")
    counted = counted_keys(('[{"k0":1},{"k0":1}]', "a", "b"), 2)
    assert counted == KeyCounts(2, 1, 2, None, ("a", "b"))


def test_the_collection_is_one_json_text() -> None:
    """The keys come as one JSON text (on every engine: faster to fetch than the list),
    each an object of its values in order, NULL fields kept."""
    sql = collected_keys_sql("SELECT * FROM rows", ["id", "id"], ["`id`", "`id`"])
    assert sql.startswith(
        "SELECT to_json(collect_list(named_struct('k0', `id`, 'k1', `id`)), "
        "map('ignoreNullFields', 'false')) FROM (SELECT"
    )


def test_a_json_collection_is_counted_exactly() -> None:
    """Equal keys give equal text (a string's bytes as base64, a date as its day number):
    decimals and large integers are read as written, so keys that differ in their last
    digit stay apart, and NULL equals NULL."""
    text = (
        '[{"k0":12345678901234567890,"k1":"YQ=="},{"k0":12345678901234567891,"k1":"YQ=="},'
        '{"k0":1.50,"k1":null},{"k0":1.5000000000000001,"k1":null},{"k0":null,"k1":null},'
        '{"k0":null,"k1":null}]'
    )
    assert counted_keys((text, "7"), 0) == KeyCounts(6, 1, 2, "7")
    assert counted_keys(("[]",)) == KeyCounts(0, 0, 0, None)
    many = "[" + ",".join(f'{{"k0":{i}}}' for i in range(COLLECTED_KEY_ROWS + 1)) + "]"
    assert counted_keys((many,)) is None
