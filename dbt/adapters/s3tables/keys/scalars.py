"""A mapping of scalar settings as string pairs, or an error naming its key (pure).

The profile's `spark_conf` and a catalog's `catalog_properties` are both such mappings:
Spark and PyIceberg take every value as text.
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.s3tables.errors import ProfileError


def scalar_mapping(key: str, value: Any, what: str, example: str) -> dict[str, str]:
    """A profile mapping of scalar settings as string pairs, or an error naming the key."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ProfileError(
            key,
            f"expected a mapping of {what}, got {type(value).__name__}",
            f"write it as `{key}: {example}`",
        )
    pairs: dict[str, str] = {}
    for name, item in value.items():
        if isinstance(item, bool):
            pairs[str(name)] = "true" if item else "false"
        elif isinstance(item, (str, int, float)):
            pairs[str(name)] = str(item)
        else:
            raise ProfileError(
                f"{key}.{name}",
                f"value must be a string, number or boolean, got {type(item).__name__}",
                "give a single scalar value (lists are written comma-separated in one string)",
            )
    return pairs
