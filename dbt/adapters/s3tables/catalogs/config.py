"""One description of the Iceberg catalog, rendered for both Spark and PyIceberg.

Spark (Java Iceberg) and PyIceberg must open the very same catalog, so both sides'
settings come from one `CatalogConfig`; nothing else builds catalog settings. What
differs between catalog types is answered by the config's `kind` (see `base`); each field
names the profile key it is read from, so `catalog_config_for` needs no hand copy.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from dbt.adapters.s3tables.catalogs.base import CATALOG_TYPES, CatalogKeys, CatalogType
from dbt.adapters.s3tables.catalogs.jars import Artifact

# The embedded catalog's SQLite file, in its warehouse folder.
LOCAL_CATALOG_FILE = "catalog.db"
# The profile's `catalog` when it sets none.
DEFAULT_CATALOG_NAME = "local"
SPARK_CATALOG_IMPL = "org.apache.iceberg.spark.SparkCatalog"
ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
# Values of these properties are secrets: never printed, logged or put in an error.
SECRET_MARKERS = ("token", "credential", "secret", "password", "session", "authorization")
MASK = "****"
# Field metadata: the profile key (S3TablesCredentials attribute) a field is read from,
# and how its value is converted, if it is.
PROFILE_KEY = "profile_key"
CONVERT = "convert"


def is_secret(key: str) -> bool:
    return any(marker in key.lower() for marker in SECRET_MARKERS)


def masked(properties: dict[str, str]) -> dict[str, str]:
    """`properties` safe to print: secret values replaced by a mask."""
    return {k: MASK if is_secret(k) else v for k, v in properties.items()}


def from_profile(
    key: str, default: Any = MISSING, convert: Callable[[Any], Any] | None = None
) -> Any:
    """A field read from the profile key `key` (a new profile key is one such field)."""
    # A secret's value never appears in the config's repr (which can reach a log).
    return field(
        default=default, repr=not is_secret(key), metadata={PROFILE_KEY: key, CONVERT: convert}
    )


def sorted_pairs(mapping: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(mapping.items()))


@dataclass(frozen=True)
class CatalogConfig:
    """A catalog as the profile describes it, with paths and defaults already resolved."""

    name: str = from_profile("catalog")
    catalog_type: str = from_profile("catalog_type")
    # local: the warehouse folder; otherwise the warehouse the catalog service expects
    # (`rest` may leave it unset: then it is the text `None`).
    warehouse: str = from_profile("warehouse", convert=str)
    lock_timeout_seconds: int = from_profile("catalog_lock_timeout", 30)
    region: str | None = from_profile("region", None)
    uri: str | None = from_profile("catalog_uri", None)
    token: str | None = from_profile("token", None)
    credential: str | None = from_profile("credential", None)
    signing_name: str | None = from_profile("signing_name", None)
    aws_profile: str | None = from_profile("aws_profile", None)
    s3tables_client: str = from_profile("s3tables_client", "rest")
    # TEST ONLY: a location root for new tables on an emulator that assigns none.
    emulator_table_location: str | None = from_profile("emulator_table_location", None)
    # S3 Tables' naming rules (and no views) apply to what is written here.
    s3tables_rules: bool = from_profile("s3tables_rules", False, convert=bool)
    # `catalog_properties` of the profile, as sorted pairs (the config is hashable).
    extra_properties: tuple[tuple[str, str], ...] = from_profile(
        "catalog_properties", (), convert=sorted_pairs
    )

    @property
    def kind(self) -> CatalogType:
        """The catalog type `catalog_type` names, which answers what differs by type."""
        return CATALOG_TYPES[self.catalog_type]

    @property
    def sqlite_path(self) -> str:
        return os.path.join(self.warehouse, LOCAL_CATALOG_FILE)

    @property
    def warehouse_uri(self) -> str:
        return "file://" + self.warehouse

    @property
    def jar_artifacts(self) -> tuple[Artifact, ...]:
        """The jars Spark needs to reach this catalog."""
        return self.kind.jar_artifacts(self)

    @property
    def catalog_uri(self) -> str | None:
        """The REST endpoint: the profile's, else the catalog type's default."""
        if self.uri:
            return self.uri.rstrip("/")
        return self.kind.default_uri(self)

    @property
    def sigv4_signing_name(self) -> str | None:
        """The SigV4 service name requests are signed for (None: no SigV4)."""
        return self.kind.signing_name(self)

    @property
    def location(self) -> str:
        """Where the catalog lives, for `dbt debug` and error messages."""
        return self.kind.location(self)

    @property
    def scratch_dir(self) -> str:
        """A local folder for Spark's own session catalog, which holds nothing."""
        return self.kind.scratch_dir(self)

    def table_defaults(self) -> dict[str, str]:
        """Table properties every table of this catalog gets (a model's own win)."""
        return self.kind.table_defaults()

    def spark_settings(self) -> dict[str, str]:
        """The session's settings with this catalog as Spark's default catalog."""
        return {
            "spark.sql.extensions": ICEBERG_EXTENSIONS,
            "spark.sql.defaultCatalog": self.name,
            **self.catalog_spark_settings(),
        }

    def catalog_spark_settings(self) -> dict[str, str]:
        """This catalog's own Spark settings (`spark.sql.catalog.<name>*`), which also add
        it to a running session beside the default catalog."""
        prefix = f"spark.sql.catalog.{self.name}"
        settings = {
            prefix: SPARK_CATALOG_IMPL,
            # PyIceberg changes tables behind Spark's back (schema evolution): a cached
            # table would hide those commits, so every statement loads fresh metadata.
            f"{prefix}.cache-enabled": "false",
        }
        settings.update(self.kind.spark_settings(self, prefix))
        if self.aws_profile:
            settings["spark.executorEnv.AWS_PROFILE"] = self.aws_profile
        settings.update({f"{prefix}.{k}": v for k, v in self.extra_properties})
        return settings

    def pyiceberg_properties(self) -> dict[str, str]:
        properties = self.kind.pyiceberg_properties(self)
        properties.update(dict(self.extra_properties))
        return properties

    def describe(self) -> dict[str, str]:
        """Both sides' settings with every secret masked, for `dbt debug`."""
        return masked({**self.spark_settings(), **self.pyiceberg_properties()})


def catalog_config_for(credentials: CatalogKeys) -> CatalogConfig:
    """The profile's catalog: each field read from the profile key its metadata names."""
    values = {}
    for spec in fields(CatalogConfig):
        value = getattr(credentials, spec.metadata[PROFILE_KEY])
        convert = spec.metadata[CONVERT]
        values[spec.name] = convert(value) if convert else value
    return CatalogConfig(**values)
