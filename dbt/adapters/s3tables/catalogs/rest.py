"""`rest`: any Iceberg REST catalog, and what every REST-based catalog type shares.

`RestCatalogType` renders the REST catalog properties Java Iceberg and PyIceberg share
(endpoint, warehouse, SigV4, token or OAuth credential) and the raised commit retries of
a shared catalog. `AwsRestCatalogType` adds what AWS's Iceberg REST endpoints have in
common: an endpoint per region, SigV4 for the service, data through S3.
"""

from __future__ import annotations

from typing import ClassVar

from dbt.adapters.s3tables.catalogs.base import CatalogType, emulator_location_error
from dbt.adapters.s3tables.catalogs.description import CatalogDescription
from dbt.adapters.s3tables.catalogs.jars import ICEBERG_AWS_BUNDLE, Artifact, iceberg_spark_runtime
from dbt.adapters.s3tables.catalogs.keys import CatalogKeys
from dbt.adapters.s3tables.errors import ProfileError

S3_FILE_IO = "org.apache.iceberg.aws.s3.S3FileIO"

# Iceberg's commit retries, raised for shared catalogs: S3 Tables compacts tables on its
# own, and a compaction commit landing first makes a writer's commit retry (Iceberg's
# defaults: 4 retries, 100 ms to 60 s apart).
SHARED_CATALOG_TABLE_DEFAULTS = {
    "commit.retry.num-retries": "10",
    "commit.retry.min-wait-ms": "250",
    "commit.retry.max-wait-ms": "30000",
}


class RestCatalogType(CatalogType):
    name = "rest"
    # The FileIO Spark writes data with (None: Iceberg's choice for the warehouse).
    file_io: ClassVar[str | None] = None

    def check_profile(self, credentials: CatalogKeys) -> None:
        self.check_keys(credentials)
        # An emulator is reached through `catalog_uri` (real catalogs need no such key).
        if credentials.emulator_table_location and not credentials.catalog_uri:
            raise emulator_location_error()

    def check_keys(self, credentials: CatalogKeys) -> None:
        """This REST type's required keys; defaults derived from the others."""
        if not credentials.catalog_uri:
            raise ProfileError(
                "catalog_uri",
                "is required for catalog_type rest",
                "set it to the catalog's base URL, e.g. https://catalog.example.com/iceberg",
            )
        if credentials.signing_name and not credentials.region:
            raise ProfileError(
                "region", "is required when `signing_name` turns on SigV4", "e.g. us-east-1"
            )
        if credentials.token and credentials.credential:
            raise ProfileError(
                "token", "is set together with `credential`", "keep only one of the two"
            )

    def signing_name(self, config: CatalogDescription) -> str | None:
        return config.signing_name

    def rest_properties(self, config: CatalogDescription) -> dict[str, str]:
        """The catalog properties Java Iceberg and PyIceberg share for a REST catalog."""
        properties = {"uri": self.catalog_uri(config) or "", "warehouse": config.warehouse}
        signing_name = self.signing_name(config)
        if signing_name:
            properties.update(
                {
                    "rest.sigv4-enabled": "true",
                    "rest.signing-name": signing_name,
                    "rest.signing-region": config.region or "",
                }
            )
        if config.token:
            properties["token"] = config.token
        if config.credential:
            properties["credential"] = config.credential
        return properties

    def spark_settings(self, config: CatalogDescription, prefix: str) -> dict[str, str]:
        settings = {f"{prefix}.type": "rest"}
        settings.update({f"{prefix}.{k}": v for k, v in self.rest_properties(config).items()})
        if self.file_io:
            settings[f"{prefix}.io-impl"] = self.file_io
        return settings

    def pyiceberg_properties(self, config: CatalogDescription) -> dict[str, str]:
        properties = {"type": "rest", **self.rest_properties(config)}
        if config.region:
            properties["client.region"] = config.region
        if config.aws_profile:
            properties["client.profile-name"] = config.aws_profile
        return properties

    def jar_artifacts(self, config: CatalogDescription) -> tuple[Artifact, ...]:
        if self.file_io == S3_FILE_IO:
            return (iceberg_spark_runtime(), ICEBERG_AWS_BUNDLE)
        return super().jar_artifacts(config)

    def table_defaults(self) -> dict[str, str]:
        return dict(SHARED_CATALOG_TABLE_DEFAULTS)

    def location(self, config: CatalogDescription) -> str:
        return f"{self.catalog_uri(config)} (warehouse {config.warehouse})"


class AwsRestCatalogType(RestCatalogType):
    """An AWS service's Iceberg REST endpoint (PyIceberg has no S3 Tables or Glue type:
    both are its REST catalog)."""

    # The AWS service: its endpoint's host name and the name requests are signed for.
    service: ClassVar[str]
    file_io = S3_FILE_IO

    def default_uri(self, config: CatalogDescription) -> str | None:
        return f"https://{self.service}.{config.region}.amazonaws.com/iceberg"

    def signing_name(self, config: CatalogDescription) -> str | None:
        return self.service
