"""The `format_version` key (a model's config, a catalog's default): which Iceberg format
versions a table can be created at, and the table property that carries it."""

from __future__ import annotations

# The table property that sets a table's format version at creation and at an upgrade;
# Iceberg does not keep it among the table's properties.
FORMAT_VERSION_PROPERTY = "format-version"
SUPPORTED_FORMAT_VERSIONS = (2, 3)
FORMAT_VERSION_FIX = "set `format_version` to 2 or 3 (or leave it unset for 2)"


def format_version_value(value: object) -> int | None:
    """`value` as a format version (an int, or its text: vars render as strings); None
    when it is none of them."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value in SUPPORTED_FORMAT_VERSIONS else None
    text = str(value).strip()
    if text.isdigit() and int(text) in SUPPORTED_FORMAT_VERSIONS:
        return int(text)
    return None


def format_version_problem(value: object) -> str | None:
    """What is wrong with a `format_version` value (None: it is unset or valid)."""
    if value is None or format_version_value(value) is not None:
        return None
    return f"`{value}` is not an Iceberg format version this adapter creates tables at"
