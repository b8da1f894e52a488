"""`catalogs.yml`: dbt's catalog integrations, as catalogs of this adapter.

A project's `catalogs.yml` declares catalogs beside the profile's; a model, seed or
snapshot with `catalog_name: <catalog>` is written there, and a source with
`database: <catalog>` is read from there. Each catalog's active write integration names a
type (`local`, `s3_tables` as dbt-athena names it, `glue`, `iceberg_rest`) and, under
`adapter_properties`, the same keys a profile gives that catalog type (`keys.PROPERTY_KEYS`);
they are read into `CatalogKeys` and checked by the profile's path, and the catalog is known
to Spark and PyIceberg by the catalog's name, or by its `catalog_database` when it gives one
(the relations' database, as dbt's `generate_database_name` takes it).

With dbt 1.12's `flags: {use_catalogs_v2: true}`, catalogs.yml is in the v2 spec: each
catalog a `name`, a `type` (the same four), `table_format: iceberg` and its keys under
`config.s3tables`; dbt's `bridge_v2_catalog` turns it into the integration above once
`check_v2_catalog` has checked what dbt's bridge would pass over.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dbt.adapters.catalogs import CatalogIntegration, CatalogIntegrationConfig
from dbt_common.dataclass_schema import ValidationError

from dbt.adapters.s3tables.catalogs import catalog_type_named, check_catalog_keys
from dbt.adapters.s3tables.catalogs.config import CatalogConfig, catalog_config_for
from dbt.adapters.s3tables.catalogs.keys import IDENTIFIER, PROPERTY_KEYS, CatalogKeys
from dbt.adapters.s3tables.errors import CatalogsYmlError, ProfileError
from dbt.adapters.s3tables.keys.spelling import did_you_mean, nearest_key

if TYPE_CHECKING:
    from dbt.adapters.contracts.relation import RelationConfig

# dbt's integration type -> this adapter's catalog_type.
INTEGRATION_TYPES = {
    "local": "local",
    "s3_tables": "s3tables",
    "glue": "glue",
    "iceberg_rest": "rest",
}
# The keys of an integration dbt itself reads, beside `adapter_properties`.
INTEGRATION_KEYS = ("external_volume", "file_format", "catalog_database")
# A v2 catalog's block of keys for this adapter: `config.<this>` (dbt's bridge reads it by the
# adapter's type); other adapters' blocks may sit beside it.
V2_PLATFORM = "s3tables"
# What Iceberg writes a table's data files as here: dbt's `file_format` may say it, nothing else.
FILE_FORMAT = "parquet"


@dataclass
class IcebergCatalogRelation:
    """What dbt's `build_catalog_relation` answers for a model written to a catalog."""

    catalog_name: str | None
    # dbt's default generate_database_name takes a relation's database from here.
    catalog_database: str | None = None
    table_format: str | None = "iceberg"
    external_volume: str | None = None
    file_format: str | None = "parquet"


class S3TablesCatalogIntegration(CatalogIntegration):
    """A catalog of catalogs.yml: every table it holds is an Iceberg table."""

    table_format = "iceberg"
    file_format = "parquet"
    allows_writes = True

    def build_relation(self, config: RelationConfig) -> IcebergCatalogRelation:
        return IcebergCatalogRelation(
            catalog_name=self.name, catalog_database=self.catalog_database or self.name
        )


def _integration_type(dbt_type: str) -> type[S3TablesCatalogIntegration]:
    return type(
        f"{dbt_type.title().replace('_', '')}CatalogIntegration",
        (S3TablesCatalogIntegration,),
        {"catalog_type": dbt_type},
    )


CATALOG_INTEGRATIONS = [_integration_type(name) for name in INTEGRATION_TYPES]


def active_catalog_integrations(
    project: Any,
    catalogs_v2: bool,
    bridge: Callable[[Any], CatalogIntegrationConfig],
) -> list[CatalogIntegrationConfig]:
    """The active write integration of each catalog in the project's catalogs.yml, read
    as dbt reads it: v1, or v2 (`catalogs_v2`, dbt 1.12's `use_catalogs_v2` flag) through
    `bridge`, the adapter's `bridge_v2_catalog` (none without a project, as in `dbt debug`)."""
    project_root = getattr(project, "project_root", None)
    if not project_root:
        return []
    name, cli_vars = project.project_name, getattr(project, "cli_vars", {})
    if catalogs_v2:
        # dbt 1.12's (the flag does not exist on 1.11).
        from dbt.config.catalogs import load_catalogs_v2

        return [bridge(catalog) for catalog in load_catalogs_v2(project_root, name, cli_vars)]
    from dbt.config.catalogs import get_active_write_integration, load_catalogs

    catalogs = load_catalogs(project_root, name, cli_vars)
    return [i for i in map(get_active_write_integration, catalogs) if i is not None]


def check_v2_catalog(catalog: Any) -> None:
    """What dbt's `bridge_v2_catalog` would pass over unread, refused naming the catalog
    and the key: an unknown type, a misspelt `config.s3tables` block, an unknown key in it."""
    name = catalog.name
    catalog_type = catalog.catalog_type
    if catalog_type not in INTEGRATION_TYPES:
        raise CatalogsYmlError(
            name,
            "type",
            f"unknown value `{catalog_type}`{did_you_mean(catalog_type, INTEGRATION_TYPES)}",
            f"use one of: {', '.join(INTEGRATION_TYPES)}",
        )
    blocks = dict(catalog.config)
    for platform in blocks:
        if platform != V2_PLATFORM and nearest_key(platform, [V2_PLATFORM]):
            raise CatalogsYmlError(
                name,
                f"config.{platform}",
                f"is not this adapter's block (did you mean `{V2_PLATFORM}`?)",
                f"put this adapter's keys under `config.{V2_PLATFORM}`",
            )
    known = (*PROPERTY_KEYS, *INTEGRATION_KEYS)
    for key in blocks.get(V2_PLATFORM) or {}:
        if key not in known:
            raise CatalogsYmlError(
                name,
                f"config.{V2_PLATFORM}.{key}",
                f"is not a key this adapter reads{did_you_mean(key, known)}",
                f"use only: {', '.join(known)}",
            )


def catalog_config_from_integration(
    integration: CatalogIntegrationConfig,
    project_root: str | None,
    properties_key: str = "adapter_properties",
) -> CatalogConfig:
    """The catalog a catalogs.yml integration declares, checked like a profile's, or a
    CatalogsYmlError naming the catalog, the key (its properties under `properties_key`,
    where the file has them: `config.s3tables` in v2) and the fix."""
    name = integration.name
    # The Spark catalog, and the relations' database: `catalog_database` when given.
    spark_name = getattr(integration, "catalog_database", None) or name
    if not IDENTIFIER.fullmatch(spark_name):
        key = "name" if spark_name == name else "catalog_database"
        raise CatalogsYmlError(
            name,
            key,
            "is not a plain identifier (it becomes the Spark catalog name)",
            "use letters, digits and underscores",
        )
    catalog_type = INTEGRATION_TYPES.get(integration.catalog_type.casefold())
    if catalog_type is None:
        raise CatalogsYmlError(
            name,
            "catalog_type",
            f"unknown value `{integration.catalog_type}`"
            + did_you_mean(integration.catalog_type, INTEGRATION_TYPES),
            f"use one of: {', '.join(INTEGRATION_TYPES)}",
        )
    if (integration.table_format or "iceberg").casefold() != "iceberg":
        raise CatalogsYmlError(
            name, "table_format", f"is `{integration.table_format}`", "use `iceberg` or omit it"
        )
    if (integration.file_format or FILE_FORMAT).casefold() != FILE_FORMAT:
        raise CatalogsYmlError(
            name,
            "file_format",
            f"is `{integration.file_format}`: this adapter writes Iceberg's data files as Parquet",
            "use `parquet` or omit it",
        )
    properties: dict[str, Any] = dict(integration.adapter_properties or {})
    unknown = sorted(set(properties) - set(PROPERTY_KEYS))
    if unknown:
        raise CatalogsYmlError(
            name,
            f"{properties_key}.{unknown[0]}",
            f"is not a key this adapter reads{did_you_mean(unknown[0], PROPERTY_KEYS)}",
            f"use only: {', '.join(PROPERTY_KEYS)}",
        )
    if integration.external_volume and "warehouse" not in properties:
        # dbt's external volume is where the tables' files go: the warehouse.
        properties["warehouse"] = integration.external_volume
    given = {"catalog": spark_name, "catalog_type": catalog_type, **properties}
    try:
        # Types checked as dbt checks a profile's, before the values are read.
        CatalogKeys.validate(given)
        keys = CatalogKeys.from_dict(given)
        check_catalog_keys(keys)
    except ValidationError as error:
        where = ".".join([properties_key, *map(str, error.path)])
        raise CatalogsYmlError(
            name,
            where,
            f"has the wrong type ({error.message})",
            "give it the type docs/profile.md says",
        ) from None
    except ProfileError as error:
        raise CatalogsYmlError(
            name, f"{properties_key}.{error.key}", error.problem, error.fix
        ) from None
    keys.warehouse = catalog_type_named(catalog_type).resolve_warehouse(
        str(keys.warehouse), project_root
    )
    return catalog_config_for(keys)
