"""One description of the Iceberg catalog, rendered for both Spark and PyIceberg.

Spark (Java Iceberg) and PyIceberg must open the very same catalog, so both sides'
settings come from one `CatalogConfig`; nothing else builds catalog settings.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

SPARK_CATALOG_IMPL = "org.apache.iceberg.spark.SparkCatalog"
ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
LOCAL_CATALOG_FILE = "catalog.db"


@dataclass(frozen=True)
class CatalogConfig:
    """A catalog as the profile describes it, with paths already resolved."""

    name: str
    catalog_type: str
    warehouse: str
    lock_timeout_seconds: int = 30

    @property
    def sqlite_path(self) -> str:
        return os.path.join(self.warehouse, LOCAL_CATALOG_FILE)

    @property
    def warehouse_uri(self) -> str:
        return "file://" + self.warehouse

    @property
    def location(self) -> str:
        """Where the catalog lives, for `dbt debug` and error messages."""
        return self.sqlite_path

    @property
    def uses_sqlite(self) -> bool:
        return self.catalog_type == "local"

    def spark_settings(self) -> dict[str, str]:
        prefix = f"spark.sql.catalog.{self.name}"
        busy_ms = self.lock_timeout_seconds * 1000
        return {
            "spark.sql.extensions": ICEBERG_EXTENSIONS,
            "spark.sql.defaultCatalog": self.name,
            prefix: SPARK_CATALOG_IMPL,
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
            # PyIceberg changes tables behind Spark's back (schema evolution): a cached
            # table would hide those commits, so every statement loads fresh metadata.
            f"{prefix}.cache-enabled": "false",
        }

    def pyiceberg_properties(self) -> dict[str, str]:
        return {
            "type": "sql",
            "uri": f"sqlite:///{self.sqlite_path}?timeout={self.lock_timeout_seconds}",
            "warehouse": self.warehouse_uri,
            "schema_version": "v1",
        }
