"""`catalogs.yml`: dbt's catalog integrations, as catalogs of this adapter.

A project's `catalogs.yml` declares catalogs beside the profile's; a model, seed or
snapshot with `catalog_name: <catalog>` is written there, and a source with
`database: <catalog>` is read from there. Each catalog's active write integration names a
type (`local`, `s3_tables` as dbt-athena names it, `glue`, `iceberg_rest`) and, under
`adapter_properties`, the same keys a profile gives that catalog type (`keys.PROPERTY_KEYS`);
they are read into `CatalogKeys` and checked by the profile's path, and the catalog is known
to Spark and PyIceberg by the catalog's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dbt.adapters.catalogs import CatalogIntegration, CatalogIntegrationConfig
from dbt_common.dataclass_schema import ValidationError

from dbt.adapters.s3tables.catalogs import catalog_type_named, check_catalog_keys
from dbt.adapters.s3tables.catalogs.config import CatalogConfig, catalog_config_for
from dbt.adapters.s3tables.catalogs.keys import IDENTIFIER, PROPERTY_KEYS, CatalogKeys
from dbt.adapters.s3tables.errors import CatalogsYmlError, ProfileError

if TYPE_CHECKING:
    from dbt.adapters.contracts.relation import RelationConfig

# dbt's integration type -> this adapter's catalog_type.
INTEGRATION_TYPES = {
    "local": "local",
    "s3_tables": "s3tables",
    "glue": "glue",
    "iceberg_rest": "rest",
}


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
        return IcebergCatalogRelation(catalog_name=self.name, catalog_database=self.name)


def _integration_type(dbt_type: str) -> type[S3TablesCatalogIntegration]:
    return type(
        f"{dbt_type.title().replace('_', '')}CatalogIntegration",
        (S3TablesCatalogIntegration,),
        {"catalog_type": dbt_type},
    )


CATALOG_INTEGRATIONS = [_integration_type(name) for name in INTEGRATION_TYPES]


def active_catalog_integrations(project: Any) -> list[CatalogIntegrationConfig]:
    """The active write integration of each catalog in the project's catalogs.yml, read
    as dbt reads it (none without a project, as in `dbt debug`)."""
    project_root = getattr(project, "project_root", None)
    if not project_root:
        return []
    from dbt.config.catalogs import get_active_write_integration, load_catalogs

    catalogs = load_catalogs(project_root, project.project_name, getattr(project, "cli_vars", {}))
    return [i for i in map(get_active_write_integration, catalogs) if i is not None]


def catalog_config_from_integration(
    integration: CatalogIntegrationConfig, project_root: str | None
) -> CatalogConfig:
    """The catalog a catalogs.yml integration declares, checked like a profile's, or a
    CatalogsYmlError naming the catalog, the key and the fix."""
    name = integration.name
    if not IDENTIFIER.fullmatch(name):
        raise CatalogsYmlError(
            name,
            "name",
            "is not a plain identifier (it becomes the Spark catalog name)",
            "use letters, digits and underscores",
        )
    catalog_type = INTEGRATION_TYPES.get(integration.catalog_type.casefold())
    if catalog_type is None:
        raise CatalogsYmlError(
            name,
            "catalog_type",
            f"unknown value `{integration.catalog_type}`",
            f"use one of: {', '.join(INTEGRATION_TYPES)}",
        )
    if (integration.table_format or "iceberg").casefold() != "iceberg":
        raise CatalogsYmlError(
            name, "table_format", f"is `{integration.table_format}`", "use `iceberg` or omit it"
        )
    properties: dict[str, Any] = dict(integration.adapter_properties or {})
    unknown = sorted(set(properties) - set(PROPERTY_KEYS))
    if unknown:
        raise CatalogsYmlError(
            name,
            f"adapter_properties.{unknown[0]}",
            "is not a key this adapter reads",
            f"use only: {', '.join(PROPERTY_KEYS)}",
        )
    if integration.external_volume and "warehouse" not in properties:
        # dbt's external volume is where the tables' files go: the warehouse.
        properties["warehouse"] = integration.external_volume
    given = {"catalog": name, "catalog_type": catalog_type, **properties}
    try:
        # Types checked as dbt checks a profile's, before the values are read.
        CatalogKeys.validate(given)
        keys = CatalogKeys.from_dict(given)
        check_catalog_keys(keys)
    except ValidationError as error:
        where = ".".join(["adapter_properties", *map(str, error.path)])
        raise CatalogsYmlError(
            name,
            where,
            f"has the wrong type ({error.message})",
            "give it the type docs/profile.md says",
        ) from None
    except ProfileError as error:
        raise CatalogsYmlError(
            name, f"adapter_properties.{error.key}", error.problem, error.fix
        ) from None
    keys.warehouse = catalog_type_named(catalog_type).resolve_warehouse(
        str(keys.warehouse), project_root
    )
    return catalog_config_for(keys)
