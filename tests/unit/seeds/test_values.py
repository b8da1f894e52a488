"""Seed cells as text that Spark casts back without loss."""

from __future__ import annotations

import datetime
import decimal

import pytest

from dbt.adapters.s3tables.seeds.values import seed_value_as_text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, None),
        (True, "true"),
        (False, "false"),
        (decimal.Decimal("1E+2"), "100"),
        (decimal.Decimal("10.50"), "10.50"),
        (decimal.Decimal("-0.001"), "-0.001"),
        (datetime.date(2024, 2, 29), "2024-02-29"),
        (datetime.datetime(2024, 2, 29, 13, 5, 9), "2024-02-29 13:05:09"),
        (datetime.datetime(2024, 1, 1, 0, 0, 0, 120000), "2024-01-01 00:00:00.120000"),
        (0, "0"),
        ("", ""),
    ],
)
def test_seed_value_as_text(value: object, text: str | None) -> None:
    assert seed_value_as_text(value) == text


@pytest.mark.parametrize("text", ["Zürich", "日本語", "emoji 🎉", "  spaced  ", "1E+2"])
def test_strings_are_unchanged(text: str) -> None:
    assert seed_value_as_text(text) == text


def test_decimals_never_use_exponent_notation() -> None:
    for value in ("1E+5", "1.5E-7", "2E+10"):
        text = seed_value_as_text(decimal.Decimal(value))
        assert "E" not in text.upper()
        assert decimal.Decimal(text) == decimal.Decimal(value)
