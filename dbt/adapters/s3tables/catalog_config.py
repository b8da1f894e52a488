"""One description of the Iceberg catalog, rendered for both Spark and PyIceberg.

Spark (Java Iceberg) and PyIceberg must open the very same catalog, so both sides'
settings come from one `CatalogConfig`; nothing else builds catalog settings.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

SPARK_CATALOG_IMPL = "org.apache.iceberg.spark.SparkCatalog"
ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
LOCAL_CATALOG_FILE = "catalog.db"
S3_FILE_IO = "org.apache.iceberg.aws.s3.S3FileIO"
S3TABLES_CATALOG_IMPL = "software.amazon.s3tables.iceberg.S3TablesCatalog"
# Catalog types whose catalog is an Iceberg REST service.
REST_TYPES = ("s3tables", "rest", "glue")
# Values of these properties are secrets: never printed, logged or put in an error.
SECRET_MARKERS = ("token", "credential", "secret", "password", "session", "authorization")
MASK = "****"


def is_secret(key: str) -> bool:
    return any(marker in key.lower() for marker in SECRET_MARKERS)


def masked(properties: dict[str, str]) -> dict[str, str]:
    """`properties` safe to print: secret values replaced by a mask."""
    return {k: MASK if is_secret(k) else v for k, v in properties.items()}


# Iceberg's commit retries, raised for shared catalogs: S3 Tables compacts tables on its
# own, and a compaction commit landing first makes a writer's commit retry (Iceberg's
# defaults: 4 retries, 100 ms to 60 s apart).
SHARED_CATALOG_TABLE_DEFAULTS = {
    "commit.retry.num-retries": "10",
    "commit.retry.min-wait-ms": "250",
    "commit.retry.max-wait-ms": "30000",
}


@dataclass(frozen=True)
class CatalogConfig:
    """A catalog as the profile describes it, with paths and defaults already resolved."""

    name: str
    catalog_type: str
    # local: the warehouse folder; otherwise the warehouse the catalog service expects.
    warehouse: str
    lock_timeout_seconds: int = 30
    region: str | None = None
    uri: str | None = None
    token: str | None = None
    credential: str | None = None
    signing_name: str | None = None
    aws_profile: str | None = None
    s3tables_client: str = "rest"
    # `catalog_properties` of the profile, as sorted pairs (the config is hashable).
    extra_properties: tuple[tuple[str, str], ...] = ()

    @property
    def sqlite_path(self) -> str:
        return os.path.join(self.warehouse, LOCAL_CATALOG_FILE)

    @property
    def warehouse_uri(self) -> str:
        return "file://" + self.warehouse

    @property
    def uses_sqlite(self) -> bool:
        return self.catalog_type == "local"

    @property
    def catalog_uri(self) -> str | None:
        """The REST endpoint: the profile's, else AWS's for s3tables and glue."""
        if self.uri:
            return self.uri.rstrip("/")
        if self.catalog_type == "s3tables":
            return f"https://s3tables.{self.region}.amazonaws.com/iceberg"
        if self.catalog_type == "glue":
            return f"https://glue.{self.region}.amazonaws.com/iceberg"
        return None

    @property
    def sigv4_signing_name(self) -> str | None:
        """The SigV4 service name requests are signed for (None: no SigV4)."""
        if self.catalog_type in ("s3tables", "glue"):
            return self.catalog_type
        return self.signing_name

    @property
    def location(self) -> str:
        """Where the catalog lives, for `dbt debug` and error messages."""
        if self.uses_sqlite:
            return self.sqlite_path
        return f"{self.catalog_uri} (warehouse {self.warehouse})"

    @property
    def scratch_dir(self) -> str:
        """A local folder for Spark's own session catalog, which holds nothing."""
        if self.uses_sqlite:
            return os.path.join(self.warehouse, "spark-warehouse")
        return os.path.join(tempfile.gettempdir(), "dbt-s3tables-spark-warehouse")

    def table_defaults(self) -> dict[str, str]:
        """Table properties every table of this catalog gets (a model's own win)."""
        return {} if self.uses_sqlite else dict(SHARED_CATALOG_TABLE_DEFAULTS)

    def _rest_properties(self) -> dict[str, str]:
        """The catalog properties Java Iceberg and PyIceberg share for a REST catalog."""
        properties = {"uri": self.catalog_uri or "", "warehouse": self.warehouse}
        signing_name = self.sigv4_signing_name
        if signing_name:
            properties.update(
                {
                    "rest.sigv4-enabled": "true",
                    "rest.signing-name": signing_name,
                    "rest.signing-region": self.region or "",
                }
            )
        if self.token:
            properties["token"] = self.token
        if self.credential:
            properties["credential"] = self.credential
        return properties

    def spark_settings(self) -> dict[str, str]:
        prefix = f"spark.sql.catalog.{self.name}"
        settings = {
            "spark.sql.extensions": ICEBERG_EXTENSIONS,
            "spark.sql.defaultCatalog": self.name,
            prefix: SPARK_CATALOG_IMPL,
            # PyIceberg changes tables behind Spark's back (schema evolution): a cached
            # table would hide those commits, so every statement loads fresh metadata.
            f"{prefix}.cache-enabled": "false",
        }
        if self.uses_sqlite:
            settings.update(self._local_spark_settings(prefix))
        elif self.catalog_type == "s3tables" and self.s3tables_client == "catalog_jar":
            # Amazon's S3 Tables catalog (its jar must be on the classpath).
            settings[f"{prefix}.catalog-impl"] = S3TABLES_CATALOG_IMPL
            settings[f"{prefix}.warehouse"] = self.warehouse
        else:
            settings[f"{prefix}.type"] = "rest"
            settings.update({f"{prefix}.{k}": v for k, v in self._rest_properties().items()})
            if self.catalog_type in ("s3tables", "glue"):
                settings[f"{prefix}.io-impl"] = S3_FILE_IO
            if self.catalog_type == "s3tables":
                # As AWS documents for its endpoint: it takes no metrics reports.
                settings[f"{prefix}.rest-metrics-reporting-enabled"] = "false"
        if self.aws_profile:
            settings["spark.executorEnv.AWS_PROFILE"] = self.aws_profile
        settings.update({f"{prefix}.{k}": v for k, v in self.extra_properties})
        return settings

    def _local_spark_settings(self, prefix: str) -> dict[str, str]:
        busy_ms = self.lock_timeout_seconds * 1000
        return {
            f"{prefix}.type": "jdbc",
            # WAL lets readers and one writer share the file across the JVM and Python;
            # busy_timeout makes a writer wait for the lock instead of failing at once.
            f"{prefix}.uri": (
                f"jdbc:sqlite:{self.sqlite_path}?journal_mode=WAL&busy_timeout={busy_ms}"
            ),
            # V1 schema stores views next to tables (Iceberg views in the JDBC catalog).
            f"{prefix}.jdbc.schema-version": "V1",
            # PyIceberg creates the catalog tables before Spark starts. Iceberg's own
            # creation check leaves a metadata ResultSet open, which pins an old read
            # snapshot on a pooled connection: every later JVM commit after a Python
            # write then fails with SQLITE_BUSY_SNAPSHOT.
            f"{prefix}.jdbc.init-catalog-tables": "false",
            f"{prefix}.warehouse": self.warehouse_uri,
        }

    def pyiceberg_properties(self) -> dict[str, str]:
        if self.uses_sqlite:
            properties = {
                "type": "sql",
                "uri": f"sqlite:///{self.sqlite_path}?timeout={self.lock_timeout_seconds}",
                "warehouse": self.warehouse_uri,
                "schema_version": "v1",
            }
        else:
            # PyIceberg has no S3 Tables or Glue REST type: both are its REST catalog.
            properties = {"type": "rest", **self._rest_properties()}
            if self.region:
                properties["client.region"] = self.region
            if self.aws_profile:
                properties["client.profile-name"] = self.aws_profile
        properties.update(dict(self.extra_properties))
        return properties

    def describe(self) -> dict[str, str]:
        """Both sides' settings with every secret masked, for `dbt debug`."""
        return masked({**self.spark_settings(), **self.pyiceberg_properties()})
