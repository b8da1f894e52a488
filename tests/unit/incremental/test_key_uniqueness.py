"""When a merge trusts its source to hold each unique key once (no dedup): the user's
`unique_key_is_unique`, else a primary_key/unique constraint within the key."""

from __future__ import annotations

import pytest

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.incremental.key_uniqueness import (
    KeyCounts,
    declared_unique_columns,
    key_counts,
    key_counts_sql,
    key_uniqueness,
    uniqueness_setting,
)


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
