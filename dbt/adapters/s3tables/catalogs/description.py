"""`CatalogDescription`: one catalog's keys resolved into a value (defaults filled, paths
absolute, properties as sorted pairs), which every catalog type renders its settings from.

It is data only: the catalog types (`base`) are built on it, and `CatalogConfig`
(`config`) adds what asks them. Each field is read from one catalog key (`from_key`), whose
declaration (`keys.CatalogKeys`) gives its default and whether it is a secret.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any

from dbt.adapters.s3tables.catalogs.keys import SECRET, CatalogKeys

# The embedded catalog's SQLite file, in its warehouse folder.
LOCAL_CATALOG_FILE = "catalog.db"
# Field metadata: the catalog key a field is read from, and how its value is converted.
KEY = "key"
CONVERT = "convert"
_KEYS: dict[str, Field[Any]] = {spec.name: spec for spec in fields(CatalogKeys)}


def from_key(
    key: str, convert: Callable[[Any], Any] | None = None, *, required: bool = False
) -> Any:
    """A field read from the catalog key `key`: its default is the key's (converted), and a
    secret key's value stays out of the repr."""
    declared = _KEYS[key]
    default = MISSING
    if not required:
        default = convert(declared.default) if convert else declared.default
    return field(
        default=default,
        repr=not declared.metadata.get(SECRET, False),
        metadata={KEY: key, CONVERT: convert},
    )


def sorted_pairs(mapping: Mapping[str, str] | None) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((mapping or {}).items()))


@dataclass(frozen=True)
class CatalogDescription:
    """A catalog as its keys describe it, with paths and defaults already resolved."""

    name: str = from_key("catalog", required=True)
    catalog_type: str = from_key("catalog_type", required=True)
    # local: the warehouse folder; otherwise the warehouse the catalog service expects
    # (`rest` may leave it unset: then it is the text `None`).
    warehouse: str = from_key("warehouse", str, required=True)
    lock_timeout_seconds: int = from_key("catalog_lock_timeout")
    region: str | None = from_key("region")
    # The key as given; `CatalogConfig.catalog_uri` is the endpoint used.
    uri: str | None = from_key("catalog_uri")
    token: str | None = from_key("token")
    credential: str | None = from_key("credential")
    signing_name: str | None = from_key("signing_name")
    aws_profile: str | None = from_key("aws_profile")
    s3tables_client: str = from_key("s3tables_client")
    emulator_table_location: str | None = from_key("emulator_table_location")
    # S3 Tables' naming rules (and no views) apply to what is written here.
    s3tables_rules: bool = from_key("s3tables_rules", bool)
    # The format version of tables created here (None: Iceberg's default).
    format_version: int | None = from_key("format_version")
    # `catalog_properties`, as sorted pairs (the value is hashable).
    extra_properties: tuple[tuple[str, str], ...] = from_key("catalog_properties", sorted_pairs)

    @property
    def sqlite_path(self) -> str:
        return os.path.join(self.warehouse, LOCAL_CATALOG_FILE)

    @property
    def warehouse_uri(self) -> str:
        return "file://" + self.warehouse
