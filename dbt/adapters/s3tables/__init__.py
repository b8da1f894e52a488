from dbt.adapters.base import AdapterPlugin

from dbt.adapters.s3tables.connections import S3TablesConnectionManager  # noqa: F401
from dbt.adapters.s3tables.credentials import S3TablesCredentials
from dbt.adapters.s3tables.impl import S3TablesAdapter
from dbt.include import s3tables

Plugin = AdapterPlugin(
    adapter=S3TablesAdapter,  # type: ignore[arg-type]
    credentials=S3TablesCredentials,
    include_path=s3tables.PACKAGE_PATH,
    dependencies=["spark"],
)
