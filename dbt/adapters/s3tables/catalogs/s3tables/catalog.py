"""`s3tables`: an Amazon S3 Tables table bucket, through its Iceberg REST endpoint or
Amazon's S3 Tables catalog jar (`s3tables_client`).

The profile names the bucket by its ARN, which also gives the region and the warehouse;
the bucket is checked when a connection opens (see `table_bucket`), and S3 Tables'
naming rules apply unless the profile turns them off.
"""

from __future__ import annotations

from dbt.adapters.s3tables.catalogs.base import OpenedCatalog
from dbt.adapters.s3tables.catalogs.description import CatalogDescription
from dbt.adapters.s3tables.catalogs.jars import S3TABLES_CATALOG_RUNTIME, Artifact
from dbt.adapters.s3tables.catalogs.keys import CatalogKeys
from dbt.adapters.s3tables.catalogs.rest import AwsRestCatalogType
from dbt.adapters.s3tables.catalogs.s3tables.rules import parse_table_bucket_arn
from dbt.adapters.s3tables.catalogs.s3tables.table_bucket import ensure_table_bucket
from dbt.adapters.s3tables.errors import ProfileError

S3TABLES_CLIENTS = ("rest", "catalog_jar")
S3TABLES_CATALOG_IMPL = "software.amazon.s3tables.iceberg.S3TablesCatalog"


class S3TablesCatalogType(AwsRestCatalogType):
    name = "s3tables"
    service = "s3tables"
    follows_s3tables_rules = True
    maintains_its_tables = True

    def refuse_own_keys(self, credentials: CatalogKeys, catalog_type: str) -> None:
        if credentials.table_bucket_arn:
            raise ProfileError(
                "table_bucket_arn",
                f"is only read by catalog_type s3tables, and catalog_type is `{catalog_type}`",
                "remove `catalog_type` (the ARN implies s3tables) or remove the ARN",
            )

    def check_keys(self, credentials: CatalogKeys) -> None:
        if not credentials.table_bucket_arn:
            raise ProfileError(
                "table_bucket_arn",
                "is required for catalog_type s3tables",
                "set it to arn:aws:s3tables:<region>:<account>:bucket/<name>",
            )
        try:
            bucket = parse_table_bucket_arn(credentials.table_bucket_arn)
        except ValueError as error:
            raise ProfileError(
                "table_bucket_arn", str(error), "copy the ARN from the S3 console"
            ) from None
        if credentials.region and credentials.region != bucket.region:
            raise ProfileError(
                "region",
                f"is `{credentials.region}` but the table bucket is in `{bucket.region}`",
                "remove `region` (it is read from the ARN)",
            )
        if credentials.warehouse and credentials.warehouse != bucket.arn:
            raise ProfileError(
                "warehouse",
                "is set, but for catalog_type s3tables the warehouse is the table bucket ARN",
                "remove `warehouse`",
            )
        credentials.region = bucket.region
        credentials.warehouse = bucket.arn
        if credentials.s3tables_client not in S3TABLES_CLIENTS:
            raise ProfileError.unknown_value(
                "s3tables_client", credentials.s3tables_client, S3TABLES_CLIENTS
            )
        if credentials.s3tables_client == "catalog_jar" and credentials.emulator_table_location:
            # Given a location, Amazon's catalog never calls CreateTable: its first commit
            # then fails, on AWS as on an emulator.
            raise ProfileError(
                "emulator_table_location",
                "cannot be combined with `s3tables_client: catalog_jar`, whose catalog "
                "creates a table only when it chooses the location",
                "remove `emulator_table_location`",
            )

    def spark_settings(self, config: CatalogDescription, prefix: str) -> dict[str, str]:
        if config.s3tables_client == "catalog_jar":
            # Amazon's S3 Tables catalog (its jar must be on the classpath).
            return {
                f"{prefix}.catalog-impl": S3TABLES_CATALOG_IMPL,
                f"{prefix}.warehouse": config.warehouse,
            }
        settings = super().spark_settings(config, prefix)
        # As AWS documents for its endpoint: it takes no metrics reports.
        settings[f"{prefix}.rest-metrics-reporting-enabled"] = "false"
        return settings

    def jar_artifacts(self, config: CatalogDescription) -> tuple[Artifact, ...]:
        jars = super().jar_artifacts(config)
        if config.s3tables_client == "catalog_jar":
            return (*jars, S3TABLES_CATALOG_RUNTIME)
        return jars

    def open_connection(self, iceberg: OpenedCatalog, *, spark_in_process: bool) -> None:
        # Before the catalog is reached: a missing bucket or permission would otherwise
        # surface as an obscure REST error.
        config = iceberg.config
        ensure_table_bucket(config.warehouse, str(config.region), config.aws_profile)
        super().open_connection(iceberg, spark_in_process=spark_in_process)
