"""`glue`: the AWS Glue Data Catalog through its Iceberg REST endpoint (which also serves
S3 Tables buckets as `<account>:s3tablescatalog/<bucket>`)."""

from __future__ import annotations

from dbt.adapters.s3tables.catalogs.keys import CatalogKeys
from dbt.adapters.s3tables.catalogs.rest import AwsRestCatalogType
from dbt.adapters.s3tables.errors import ProfileError


class GlueCatalogType(AwsRestCatalogType):
    name = "glue"
    service = "glue"

    def check_keys(self, credentials: CatalogKeys) -> None:
        if not credentials.region:
            raise ProfileError("region", "is required for catalog_type glue", "e.g. us-east-1")
        if not credentials.warehouse:
            raise ProfileError(
                "warehouse",
                "is required for catalog_type glue: the Glue catalog id",
                "set it to your account id, or `<account>:s3tablescatalog/<bucket>` "
                "for S3 Tables through Glue",
            )
