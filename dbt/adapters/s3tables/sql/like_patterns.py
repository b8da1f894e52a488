"""SQL `ILIKE` patterns matched in Python (pure), for dbt_utils' relation lookups, which
other adapters answer from `information_schema` and this one from the Iceberg catalog."""

from __future__ import annotations

import re


def like_regex(pattern: str) -> re.Pattern[str]:
    """A SQL LIKE pattern as a case-insensitive regular expression: `%` is any run of
    characters, `_` any one character, and a backslash makes the next one literal."""
    parts: list[str] = []
    escaped = False
    for character in pattern:
        if escaped:
            parts.append(re.escape(character))
            escaped = False
        elif character == "\\":
            escaped = True
        elif character == "%":
            parts.append(".*")
        elif character == "_":
            parts.append(".")
        else:
            parts.append(re.escape(character))
    if escaped:
        parts.append(re.escape("\\"))
    return re.compile("".join(parts), re.IGNORECASE | re.DOTALL)


def ilike(value: str, pattern: str) -> bool:
    return like_regex(pattern).fullmatch(value) is not None
