"""When a merge trusts its source to hold each unique key once (no dedup): the user's
`unique_key_is_unique`, else a primary_key/unique constraint within the key."""

from __future__ import annotations

import pytest

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.incremental.key_uniqueness import (
    declared_unique_columns,
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
