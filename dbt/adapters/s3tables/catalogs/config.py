"""One description of the Iceberg catalog, rendered for both Spark and PyIceberg.

Spark (Java Iceberg) and PyIceberg must open the very same catalog, so both sides'
settings come from one `CatalogConfig`; nothing else builds catalog settings. Its values
are a `CatalogDescription` (read from the checked catalog keys by `catalog_config_for`);
what differs between catalog types is answered by the config's `kind` (see `base`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from dbt.adapters.s3tables.catalogs.base import CATALOG_TYPES, CatalogType
from dbt.adapters.s3tables.catalogs.description import CONVERT, KEY, CatalogDescription
from dbt.adapters.s3tables.catalogs.jars import Artifact
from dbt.adapters.s3tables.catalogs.keys import CatalogKeys
from dbt.adapters.s3tables.keys.format_version import FORMAT_VERSION_PROPERTY

SPARK_CATALOG_IMPL = "org.apache.iceberg.spark.SparkCatalog"
ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
# Values of these properties are secrets: never printed, logged or put in an error.
SECRET_MARKERS = ("token", "credential", "secret", "password", "session", "authorization")
MASK = "****"


def is_secret(key: str) -> bool:
    return any(marker in key.lower() for marker in SECRET_MARKERS)


def masked(properties: dict[str, str]) -> dict[str, str]:
    """`properties` safe to print: secret values replaced by a mask."""
    return {k: MASK if is_secret(k) else v for k, v in properties.items()}


@dataclass(frozen=True)
class CatalogConfig(CatalogDescription):
    """A catalog as its keys describe it, rendered for Spark and PyIceberg by its type."""

    @property
    def kind(self) -> CatalogType:
        """The catalog type `catalog_type` names, which answers what differs by type."""
        return CATALOG_TYPES[self.catalog_type]

    @property
    def jar_artifacts(self) -> tuple[Artifact, ...]:
        """The jars Spark needs to reach this catalog."""
        return self.kind.jar_artifacts(self)

    @property
    def catalog_uri(self) -> str | None:
        """The REST endpoint: the profile's, else the catalog type's default."""
        return self.kind.catalog_uri(self)

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
        """Table properties every table of this catalog gets (a model's own win), its
        `format_version` among them when set."""
        defaults = self.kind.table_defaults()
        if self.format_version is not None:
            defaults[FORMAT_VERSION_PROPERTY] = str(self.format_version)
        return defaults

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


def catalog_config_for(keys: CatalogKeys) -> CatalogConfig:
    """The catalog that checked keys (`catalogs.check_catalog_keys`) describe: each field
    read from the key its metadata names."""
    values = {}
    for spec in fields(CatalogConfig):
        value = getattr(keys, spec.metadata[KEY])
        convert = spec.metadata[CONVERT]
        values[spec.name] = convert(value) if convert else value
    return CatalogConfig(**values)
