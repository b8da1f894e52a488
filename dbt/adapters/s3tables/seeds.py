"""Seed rows as text for a bulk load (pure functions)."""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Iterable
from typing import Any


def seed_value_as_text(value: Any) -> str | None:
    """A CSV cell as the text Spark casts back to its type without loss."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, decimal.Decimal):
        # Plain notation: `1E+2` would cast to double differently than `100`.
        return format(value, "f")
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return str(value)
    return str(value)


def seed_rows_as_text(rows: Iterable[Iterable[Any]]) -> list[tuple[str | None, ...]]:
    return [tuple(seed_value_as_text(value) for value in row) for row in rows]
