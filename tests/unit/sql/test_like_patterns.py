"""SQL ILIKE semantics for dbt_utils' get_relations_by_pattern / _by_prefix."""

from __future__ import annotations

import pytest

from dbt.adapters.s3tables.sql.like_patterns import ilike


@pytest.mark.parametrize(
    ("value", "pattern", "expected"),
    [
        ("orders", "orders", True),
        ("ORDERS", "orders", True),
        ("orders_2024", "orders%", True),
        ("my_orders", "orders%", False),
        ("orders", "%", True),
        ("ab", "a_", True),
        ("abc", "a_", False),
        ("a_b", "a\\_b", True),
        ("axb", "a\\_b", False),
        ("50%off", "50\\%%", True),
        ("a.b", "a.b", True),
        ("axb", "a.b", False),
        ("stg_x", "", False),
        ("", "", True),
    ],
)
def test_ilike(value: str, pattern: str, expected: bool) -> None:
    assert ilike(value, pattern) is expected
