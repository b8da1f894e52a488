"""IncrementalTable: the model state it reads and drops, and first-build rendering."""

from __future__ import annotations

from typing import Any

from dbt.adapters.s3tables.incremental.model_state import LAST_PROCESSED_VALUE, STRATEGY
from dbt.adapters.s3tables.incremental.table import IncrementalTable
from dbt.adapters.s3tables.relation import S3TablesRelation
from tests.unit.incremental.test_run import FakeIceberg

ORDERS = S3TablesRelation.create(schema="analytics", identifier="orders", type="table")


def table(iceberg: FakeIceberg, exists: bool = True) -> IncrementalTable:
    def find_relation(database: Any, schema: str, identifier: str) -> Any:
        assert (schema, identifier) == ("analytics", "orders")
        return ORDERS if exists else None

    def no_warehouse() -> Any:
        raise AssertionError("reading or dropping the state opens no connection")

    return IncrementalTable(ORDERS, iceberg, no_warehouse, find_relation)  # type: ignore[arg-type]


def test_forget_state_drops_only_the_model_state() -> None:
    iceberg = FakeIceberg(
        properties={LAST_PROCESSED_VALUE: "2024-01-02", STRATEGY: "merge", "owner": "data"}
    )
    table(iceberg).forget_state()
    assert iceberg.properties == {"owner": "data"}


def test_last_processed_value_is_none_without_a_table() -> None:
    iceberg = FakeIceberg(properties={LAST_PROCESSED_VALUE: "2024-01-02"})
    assert table(iceberg).last_processed_value() == "2024-01-02"
    assert table(iceberg, exists=False).last_processed_value() is None


def test_is_incremental_is_false_only_while_rendering_as_a_first_build() -> None:
    orders = table(FakeIceberg())
    seen: list[bool] = []

    def render(raw_code: str) -> str:
        seen.append(orders.renders_as_first_build())
        return raw_code.upper()

    assert orders.render_as_first_build(render, "select 1") == "SELECT 1"
    assert seen == [True]
    assert not orders.renders_as_first_build()
