"""`catalogs.yml`: dbt's catalog integrations, as catalogs of this adapter.

A project's `catalogs.yml` declares catalogs beside the profile's; a model, seed or
snapshot with `catalog_name: <catalog>` is written there, and a source with
`database: <catalog>` is read from there. Each catalog's active write integration names a
type (`local`, `s3_tables` as dbt-athena names it, `glue`, `iceberg_rest`) and, under
`adapter_properties`, the same keys a profile gives that catalog type; they are checked as
the profile's are, and the catalog is known to Spark and PyIceberg by the catalog's name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dbt.adapters.catalogs import CatalogIntegration, CatalogIntegrationConfig

if TYPE_CHECKING:
    from dbt.adapters.contracts.relation import RelationConfig

# dbt's integration type -> this adapter's catalog_type.
INTEGRATION_TYPES = {
    "local": "local",
    "s3_tables": "s3tables",
    "glue": "glue",
    "iceberg_rest": "rest",
}
# The profile keys a catalog of catalogs.yml may set under `adapter_properties`.
PROPERTY_KEYS = (
    "warehouse",
    "table_bucket_arn",
    "region",
    "catalog_uri",
    "token",
    "credential",
    "signing_name",
    "aws_profile",
    "s3tables_client",
    "catalog_properties",
    "s3tables_rules",
    "catalog_lock_timeout",
    "emulator_table_location",
)
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
