"""Catalog types: where the Iceberg catalog is and how Spark and PyIceberg reach it.

The profile's `catalog_type` names one `CatalogType`; everything that differs between
catalog types is a member of it, answered in that type's module:

- `base`: `CatalogType`, the interface (profile keys, Spark settings, PyIceberg
  properties, table defaults, what opening a connection and the catalog involves).
- `local`: the embedded SQLite catalog in a warehouse folder on this machine.
- `rest`: any Iceberg REST catalog; `RestCatalogType` and `AwsRestCatalogType` are also
  the shared base of the REST-based types.
- `s3tables`: an S3 Tables table bucket (REST endpoint or Amazon's catalog jar).
- `glue`: the Glue Data Catalog's Iceberg REST endpoint.
- `config`: `CatalogConfig`, one catalog as the profile describes it, rendered for Spark
  and PyIceberg by its type; `catalog_config_for` reads it from the profile.
- `iceberg`: `IcebergCatalog`, the adapter's metadata access through PyIceberg.
- `local_files`, `failed_writes`: the embedded catalog's files (catalog file checks,
  process locks) and what a failed write left in its warehouse.
- `table_bucket`: the S3 Tables bucket check made when a connection opens.
- `node_catalog`: the catalog a node asks for when dbt names its relation.

To add a catalog type: add one module defining a `CatalogType` subclass (a REST catalog
extends `RestCatalogType`) and register it in `CATALOG_TYPES` here; a profile key of its
own is a field of `S3TablesCredentials` and, if the settings need it, of `CatalogConfig`.
"""

from __future__ import annotations

from dbt.adapters.s3tables.catalogs.base import CATALOG_TYPES, CatalogKeys, CatalogType
from dbt.adapters.s3tables.catalogs.embedded.catalog import LocalCatalogType
from dbt.adapters.s3tables.catalogs.glue import GlueCatalogType
from dbt.adapters.s3tables.catalogs.rest import RestCatalogType
from dbt.adapters.s3tables.catalogs.s3tables.catalog import S3TablesCatalogType
from dbt.adapters.s3tables.errors import ProfileError

CATALOG_TYPES.update(
    (kind.name, kind)
    for kind in (LocalCatalogType(), S3TablesCatalogType(), RestCatalogType(), GlueCatalogType())
)


def catalog_type_named(name: str) -> CatalogType:
    """The catalog type a profile's `catalog_type` names, or an error listing them."""
    if name not in CATALOG_TYPES:
        raise ProfileError.unknown_value("catalog_type", name, CATALOG_TYPES)
    return CATALOG_TYPES[name]


def check_catalog_keys(credentials: CatalogKeys) -> None:
    """Check the profile's keys against its catalog type (keys of other types included)
    and fill the defaults the type derives, `s3tables_rules` among them."""
    kind = catalog_type_named(str(credentials.catalog_type))
    for other in CATALOG_TYPES.values():
        if other is not kind:
            other.refuse_own_keys(credentials, kind.name)
    kind.check_profile(credentials)
    if credentials.s3tables_rules is None:
        credentials.s3tables_rules = kind.follows_s3tables_rules
