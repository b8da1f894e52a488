"""Catalog types: where the Iceberg catalog is and how Spark and PyIceberg reach it.

The profile's `catalog_type` names one `CatalogType`; everything that differs between
catalog types is a member of it, answered in that type's module. From the bottom up:

- `keys`: `CatalogKeys`, every key that describes a catalog, declared once (the profile
  class inherits it; a catalogs.yml catalog is read into it).
- `description`: `CatalogDescription`, a catalog's keys resolved into a value.
- `base`: `CatalogType`, the interface (keys checked, Spark settings, PyIceberg
  properties, table defaults, what opening a connection and the catalog involves, which
  errors a retry clears, how views are listed, read and dropped), typed against the keys,
  the description and `OpenedCatalog`, never against what is above it.
- the types: `embedded` (`local`: the embedded SQLite catalog, its files, its views and
  what a failed write left), `rest` (any Iceberg REST catalog; `RestCatalogType` and
  `AwsRestCatalogType` are also the shared base of the REST-based types), `s3tables` (an
  S3 Tables table bucket, its naming rules and bucket check), `glue` (the Glue Data
  Catalog's Iceberg REST endpoint).
- `config`: `CatalogConfig`, one catalog rendered for Spark and PyIceberg by its type;
  `catalog_config_for` reads it from checked keys.
- the PyIceberg access, which asks the catalog's type and imports none: `access`
  (`CatalogAccess`: the catalog opened, operations retried and explained), `relations`,
  `table_changes`, `history`, and `iceberg`'s `IcebergCatalog`, the façade over them.
- `recover_command`: `dbt-s3tables-recover`, the embedded catalog rebuilt through
  `IcebergCatalog`.
- `integrations`: catalogs.yml's catalogs; `node_catalog`: the catalog a node asks for.

A profile and each catalog of catalogs.yml go through the same path: `check_catalog_keys`
(here), then `catalog_config_for`.

To add a catalog type: add one module defining a `CatalogType` subclass (a REST catalog
extends `RestCatalogType`) and register it in `CATALOG_TYPES` here. A key of its own is one
field of `CatalogKeys` (the profile and catalogs.yml then accept it), and a field of
`CatalogDescription` (`from_key`) if its settings read it.
"""

from __future__ import annotations

from dbt.adapters.s3tables.catalogs.base import CATALOG_TYPES, CatalogType
from dbt.adapters.s3tables.catalogs.embedded.catalog import LocalCatalogType
from dbt.adapters.s3tables.catalogs.glue import GlueCatalogType
from dbt.adapters.s3tables.catalogs.keys import (
    DEFAULT_LOCK_TIMEOUT_SECONDS,
    IDENTIFIER,
    CatalogKeys,
)
from dbt.adapters.s3tables.catalogs.rest import RestCatalogType
from dbt.adapters.s3tables.catalogs.s3tables.catalog import S3TablesCatalogType
from dbt.adapters.s3tables.errors import ProfileError
from dbt.adapters.s3tables.keys.format_version import FORMAT_VERSION_FIX, format_version_problem
from dbt.adapters.s3tables.keys.scalars import scalar_mapping

CATALOG_TYPES.update(
    (kind.name, kind)
    for kind in (LocalCatalogType(), S3TablesCatalogType(), RestCatalogType(), GlueCatalogType())
)


def catalog_type_named(name: str) -> CatalogType:
    """The catalog type a profile's `catalog_type` names, or an error listing them."""
    if name not in CATALOG_TYPES:
        raise ProfileError.unknown_value("catalog_type", name, CATALOG_TYPES)
    return CATALOG_TYPES[name]


def check_catalog_keys(keys: CatalogKeys) -> None:
    """Check a catalog's keys (the profile's, or a catalogs.yml catalog's), its catalog
    type's keys among them (and keys only other types read), raising ProfileError naming
    the key and the fix; fill what is derived: `catalog_type`, the keys the type derives
    (`s3tables_rules` among them), `catalog_properties` as string pairs."""
    if not IDENTIFIER.fullmatch(keys.catalog or ""):
        raise ProfileError(
            "catalog",
            f"`{keys.catalog}` is not a plain identifier",
            "use letters, digits and underscores, e.g. `local`",
        )
    if keys.catalog_type is None:
        keys.catalog_type = "s3tables" if keys.table_bucket_arn else "local"
    kind = catalog_type_named(keys.catalog_type)
    for other in CATALOG_TYPES.values():
        if other is not kind:
            other.refuse_own_keys(keys, kind.name)
    kind.check_profile(keys)
    if keys.s3tables_rules is None:
        keys.s3tables_rules = kind.follows_s3tables_rules
    problem = format_version_problem(keys.format_version)
    if problem:
        raise ProfileError("format_version", problem, FORMAT_VERSION_FIX)
    if keys.catalog_lock_timeout <= 0:
        raise ProfileError(
            "catalog_lock_timeout",
            "must be a positive number of seconds",
            f"omit it for {DEFAULT_LOCK_TIMEOUT_SECONDS}",
        )
    # Passed to both Spark and PyIceberg.
    keys.catalog_properties = scalar_mapping(
        "catalog_properties",
        keys.catalog_properties,
        "Iceberg catalog properties",
        "{header.x-client: dbt}",
    )
