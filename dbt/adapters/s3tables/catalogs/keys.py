"""The catalog keys: every key that describes a catalog, declared once, in `CatalogKeys`.

A profile holds them (`S3TablesCredentials` inherits `CatalogKeys`), and so does each
catalog of catalogs.yml (read into a `CatalogKeys`: `catalog` and `catalog_type` from its
entry, the others from its `adapter_properties`). Both are checked by the one path,
`catalogs.check_catalog_keys`, and become a `CatalogConfig` (`catalog_config_for`), whose
fields name the key each is read from. A new catalog key is one field here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any

from dbt_common.dataclass_schema import dbtClassMixin

# The profile's `catalog` when it sets none.
DEFAULT_CATALOG_NAME = "local"
DEFAULT_LOCK_TIMEOUT_SECONDS = 30
# Spark and Iceberg catalog names become SQL identifiers and JDBC rows: keep them plain.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Field metadata: the key's value is a secret (never in a repr, a log or an error).
SECRET = "secret"


def secret_key() -> Any:
    """A key whose value is a secret: left out of every repr (which can reach a log)."""
    return field(default=None, repr=False, metadata={SECRET: True})


@dataclass(kw_only=True)
class CatalogKeys(dbtClassMixin):
    """The keys of one catalog, as a profile or catalogs.yml gives them (checked by
    `catalogs.check_catalog_keys`, which fills those a catalog type derives)."""

    # The catalog's name in Spark (`spark.sql.catalog.<name>`) and in its Iceberg catalog
    # (catalogs.yml: the catalog's name).
    catalog: str = DEFAULT_CATALOG_NAME
    # A name in `CATALOG_TYPES`; default: s3tables with `table_bucket_arn`, else local
    # (catalogs.yml: the integration's type).
    catalog_type: str | None = None
    # local: the warehouse folder; rest: the catalog's warehouse; glue: the catalog id
    # (`<account>` or `<account>:s3tablescatalog/<bucket>`); s3tables: the bucket ARN.
    warehouse: str | None = None
    # s3tables: the table bucket's ARN (which gives the region and the warehouse).
    table_bucket_arn: str | None = None
    # The AWS region (s3tables: read from the ARN; glue, and rest with SigV4: required).
    region: str | None = None
    # The REST endpoint: required for rest, an override of AWS's (VPC endpoint, emulator)
    # otherwise.
    catalog_uri: str | None = None
    # rest: a bearer token; connect: the server's bearer token (sent over TLS only).
    token: str | None = secret_key()
    # rest: an OAuth client credential `<client id>:<secret>`.
    credential: str | None = secret_key()
    # rest: sign requests with SigV4 under this service name (s3tables and glue always do).
    signing_name: str | None = None
    # The AWS credentials profile, for both PyIceberg and Spark (default: AWS's chain).
    aws_profile: str | None = None
    # s3tables: `rest` (its Iceberg REST endpoint) or `catalog_jar` (Amazon's catalog).
    s3tables_client: str = "rest"
    # Iceberg catalog properties passed to both Spark and PyIceberg. Typed loosely so a
    # wrong shape reaches `scalar_mapping`, whose error names the key.
    catalog_properties: Any = None
    # Check S3 Tables' naming rules (and refuse views); default: on for s3tables only.
    s3tables_rules: bool | None = None
    # Seconds a SQLite catalog writer waits for a lock before it is retried.
    catalog_lock_timeout: int = DEFAULT_LOCK_TIMEOUT_SECONDS
    # The Iceberg format version of the tables created in this catalog (2 or 3); a model's
    # `format_version` wins. Unset: Iceberg's default, 2.
    format_version: int | None = None
    # TEST ONLY, for emulators: a root under which new tables get an explicit location
    # (ministack returns tables without one). Real S3 Tables assigns locations itself.
    emulator_table_location: str | None = None


# The keys a catalog of catalogs.yml takes from its entry, not its `adapter_properties`.
ENTRY_KEYS = ("catalog", "catalog_type")
# The keys a catalog of catalogs.yml may set under `adapter_properties`.
PROPERTY_KEYS = tuple(f.name for f in fields(CatalogKeys) if f.name not in ENTRY_KEYS)
