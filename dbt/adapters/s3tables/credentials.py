"""Profile contract of the s3tables adapter: keys, defaults and their validation.

Validation happens here, when dbt reads the profile, so a bad key fails before any
Spark process starts or any folder is created; each catalog type checks its own keys
(see `catalogs`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from dbt.adapters.catalogs import CatalogIntegrationConfig
from dbt.adapters.spark.connections import SparkCredentials
from dbt_common.dataclass_schema import ValidationError

from dbt.adapters.s3tables.catalogs import catalog_type_named, check_catalog_keys
from dbt.adapters.s3tables.catalogs.config import (
    DEFAULT_CATALOG_NAME,
    CatalogConfig,
    catalog_config_for,
    is_secret,
)
from dbt.adapters.s3tables.catalogs.integrations import IDENTIFIER, INTEGRATION_TYPES, PROPERTY_KEYS
from dbt.adapters.s3tables.catalogs.jars import FETCH_COMMAND, MAVEN_CENTRAL, JarSources
from dbt.adapters.s3tables.engines import ENGINES
from dbt.adapters.s3tables.engines.base import EngineSettings
from dbt.adapters.s3tables.errors import CatalogsYmlError, ProfileError
from dbt.adapters.s3tables.keys.spelling import nearest_key

# Every `method` an engine is registered for (engines/__init__.py).
SUPPORTED_METHODS = tuple(ENGINES)
DEFAULT_MASTER = "local[*]"
# The default port of each server `method`.
SERVER_PORTS = {"thrift": 10000, "connect": 15002}

# dbt-spark's keys of its `odbc` and `http` methods, which this adapter does not have
# (nothing here reads them), with dbt-spark's defaults, which a serialized profile holds.
OTHER_METHOD_KEYS: dict[str, str | None] = {
    "driver": None,
    "cluster": None,
    "endpoint": None,
    "organization": "0",
    "connection_string_suffix": None,
}

# Spark and Iceberg catalog names become SQL identifiers and JDBC rows: keep them plain.
_CATALOG_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def scalar_mapping(key: str, value: Any, what: str, example: str) -> dict[str, str]:
    """A profile mapping of scalar settings as string pairs, or an error naming the key."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ProfileError(
            key,
            f"expected a mapping of {what}, got {type(value).__name__}",
            f"write it as `{key}: {example}`",
        )
    pairs: dict[str, str] = {}
    for name, item in value.items():
        if isinstance(item, bool):
            pairs[str(name)] = "true" if item else "false"
        elif isinstance(item, (str, int, float)):
            pairs[str(name)] = str(item)
        else:
            raise ProfileError(
                f"{key}.{name}",
                f"value must be a string, number or boolean, got {type(item).__name__}",
                "give a single scalar value (lists are written comma-separated in one string)",
            )
    return pairs


def validate_spark_conf(spark_conf: Any) -> dict[str, str]:
    """Return `spark_conf` as string pairs, or raise naming the offending key.

    Keys must start with `spark.`: Spark silently ignores anything else, which turns a
    typo into a setting that quietly does nothing.
    """
    for name in spark_conf if isinstance(spark_conf, dict) else ():
        if not str(name).startswith("spark."):
            raise ProfileError(
                f"spark_conf.{name}",
                "Spark settings start with `spark.`; Spark would silently ignore this one",
                f"rename it to the full Spark setting name, e.g. `spark.{name}`",
            )
    return scalar_mapping("spark_conf", spark_conf, "Spark settings", "{spark.executor.memory: 2g}")


def check_profile_keys(profile: Mapping[str, Any], known: Iterable[str]) -> None:
    """Every key of the profile is one the adapter reads: a misspelt key (`wharehouse`)
    would otherwise be ignored and its default used. dbt takes `type` and `threads` out
    before the adapter sees the profile."""
    known = set(known)
    given = list(profile)
    for key in given:
        if key in OTHER_METHOD_KEYS and profile[key] != OTHER_METHOD_KEYS[key]:
            raise ProfileError(
                key,
                "is dbt-spark's key for `method: odbc` or `http`, which this adapter does not "
                "have; nothing reads it",
                "remove it",
            )
    unknown = [key for key in given if key not in known and key not in OTHER_METHOD_KEYS]
    if not unknown:
        return
    key, others = unknown[0], unknown[1:]
    nearest = nearest_key(key, known)
    hint = f" (did you mean `{nearest}`?)" if nearest else ""
    also = f"; also unknown: {', '.join(f'`{k}`' for k in others)}" if others else ""
    raise ProfileError(
        key,
        f"is not a key of the s3tables profile and would be ignored{hint}{also}",
        f"rename it to `{nearest}`" if nearest else "remove it (docs/profile.md lists the keys)",
    )


def refuse_secret_server_settings(method: str, spark_conf: Mapping[str, str]) -> None:
    """A server method gives `spark_conf` to its server session as `SET` statements, which
    the server logs: a secret must be configured on the server instead."""
    secrets = [key for key in spark_conf if is_secret(key)]
    if secrets:
        others = f" (and {', '.join(f'`{k}`' for k in secrets[1:])})" if secrets[1:] else ""
        raise ProfileError(
            f"spark_conf.{secrets[0]}",
            f"names a secret{others}, which `method: {method}` could only send to the server "
            "in a SET statement its logs record",
            "configure it where the server starts (its spark-defaults.conf or `--conf`) and "
            "remove it from `spark_conf`",
        )


@dataclass
class S3TablesCredentials(SparkCredentials):
    """Profile of `type: s3tables`. Inherits dbt-spark's keys (host, port, auth...)."""

    method: str = "session"  # type: ignore[assignment]  # dbt-spark's is an enum
    # thrift: the Spark Thrift Server's port (dbt-spark's default, 443, is for HTTP);
    # connect: the Spark Connect server's (default 15002, set in `_check_server_keys`).
    port: int | None = None  # type: ignore[assignment]  # dbt-spark's is int; None until checked
    # local: the warehouse folder; rest: the catalog's warehouse; glue: the catalog id
    # (`<account>` or `<account>:s3tablescatalog/<bucket>`); s3tables: the bucket ARN.
    warehouse: str | None = None
    master: str = DEFAULT_MASTER
    catalog: str = DEFAULT_CATALOG_NAME
    catalog_type: str | None = None
    table_bucket_arn: str | None = None
    region: str | None = None
    catalog_uri: str | None = None
    # rest: a bearer token, or an OAuth client credential `<client id>:<secret>`;
    # connect: the server's bearer token (sent over TLS only).
    token: str | None = None
    credential: str | None = None
    # rest: sign requests with SigV4 under this service name (s3tables and glue always do).
    signing_name: str | None = None
    aws_profile: str | None = None
    s3tables_client: str = "rest"
    catalog_properties: Any = None
    # TEST ONLY, for emulators: a root under which new tables get an explicit location
    # (ministack returns tables without one). Real S3 Tables assigns locations itself.
    emulator_table_location: str | None = None
    # Check S3 Tables' naming rules (and refuse views); default: on for s3tables only.
    s3tables_rules: bool | None = None
    # Typed loosely so a wrong shape reaches `validate_spark_conf`, whose error names the
    # key, instead of dbt's generic schema message.
    spark_conf: Any = None
    # Seconds a SQLite catalog writer waits for a lock before it is retried.
    catalog_lock_timeout: int = 30
    # A write that lost its commit to a concurrent writer is re-run this often, the first
    # time after this many seconds (then doubling, jittered).
    write_conflict_retries: int = 3
    write_conflict_wait_seconds: float = 1.0
    # Where Spark's jars come from besides the local Maven repository: an offline folder,
    # and the Maven repository missing jars are downloaded from (see `jars`).
    jars_dir: str | None = None
    maven_repository: str = MAVEN_CENTRAL
    # session: the Spark driver JVM maps an archive of the classes an earlier start loaded
    # (written once into the user's cache folder), and starts seconds sooner.
    class_data_sharing: bool = True

    @classmethod
    def __pre_deserialize__(cls, data: Mapping[str, Any]) -> Any:
        check_profile_keys(data, cls.profile_keys())
        return super().__pre_deserialize__(data)

    @classmethod
    def profile_keys(cls) -> list[str]:
        """The keys a profile of this adapter may hold (dbt's `type` and `threads` aside)."""
        return [f.name for f in fields(cls) if f.name not in OTHER_METHOD_KEYS]

    def __post_init__(self) -> None:
        if self.schema is None:
            raise ProfileError("schema", "is required", "set `schema: analytics` (the namespace)")
        if self.database is not None and self.database != self.schema:
            raise ProfileError(
                "database",
                f"is `{self.database}` but schema is `{self.schema}`; Iceberg namespaces "
                "are one level here",
                "remove `database` from the profile",
            )
        self.database = None
        if self.method not in SUPPORTED_METHODS:
            raise ProfileError.unknown_value("method", self.method, SUPPORTED_METHODS)
        if self.method in SERVER_PORTS:
            self._check_server_keys()
        if not _CATALOG_NAME_RE.fullmatch(self.catalog or ""):
            raise ProfileError(
                "catalog",
                f"`{self.catalog}` is not a plain identifier",
                "use letters, digits and underscores, e.g. `local`",
            )
        if self.catalog_type is None:
            self.catalog_type = "s3tables" if self.table_bucket_arn else "local"
        check_catalog_keys(self)
        if not str(self.master or "").strip():
            raise ProfileError("master", "is empty", f"omit it for `{DEFAULT_MASTER}`")
        if self.catalog_lock_timeout <= 0:
            raise ProfileError(
                "catalog_lock_timeout", "must be a positive number of seconds", "omit it for 30"
            )
        if self.write_conflict_retries < 0:
            raise ProfileError(
                "write_conflict_retries",
                "must be 0 (never re-run) or a positive number of retries",
                "omit it for 3",
            )
        if self.write_conflict_wait_seconds <= 0:
            raise ProfileError(
                "write_conflict_wait_seconds",
                "must be a positive number of seconds",
                "omit it for 1",
            )
        if self.server_side_parameters:
            raise ProfileError(
                "server_side_parameters",
                "is dbt-spark's key and is not read by this adapter",
                "move these settings under `spark_conf`",
            )
        if self.jars_dir is not None and not os.path.isdir(os.path.expanduser(self.jars_dir)):
            raise ProfileError(
                "jars_dir",
                f"`{self.jars_dir}` is not a folder",
                f"create it with `{FETCH_COMMAND} --to {self.jars_dir}` or remove the key",
            )
        if not str(self.maven_repository).startswith(("https://", "http://", "file:")):
            raise ProfileError(
                "maven_repository",
                f"`{self.maven_repository}` is not a URL",
                f"omit it for {MAVEN_CENTRAL}, or give a mirror's https:// URL",
            )
        self.spark_conf = validate_spark_conf(self.spark_conf)
        if self.method in SERVER_PORTS:
            refuse_secret_server_settings(self.method, self.spark_conf)
        # Passed to both Spark and PyIceberg.
        self.catalog_properties = scalar_mapping(
            "catalog_properties",
            self.catalog_properties,
            "Iceberg catalog properties",
            "{header.x-client: dbt}",
        )

    def _check_server_keys(self) -> None:
        """A Spark Thrift Server or Spark Connect server: where it listens and who connects."""
        if not self.host:
            raise ProfileError(
                "host",
                f"is required for method {self.method}",
                "set it to the server's host name, e.g. `127.0.0.1`",
            )
        default_port = SERVER_PORTS[self.method]
        if self.port is None:
            self.port = default_port
        if not isinstance(self.port, int) or self.port <= 0:
            raise ProfileError(
                "port", f"`{self.port}` is not a port number", f"omit it for {default_port}"
            )
        if self.method == "connect" and self.token is not None and not str(self.token).strip():
            raise ProfileError("token", "is empty", "remove it, or give the server's token")
        self.user = self.user or "dbt"
        if self.connect_timeout <= 0:
            raise ProfileError(
                "connect_timeout", "must be a positive number of seconds", "omit it for 10"
            )

    @property
    def type(self) -> str:
        return "s3tables"

    @property
    def unique_field(self) -> str:
        return f"{self.catalog_type}:{self.warehouse}"

    @property
    def jar_sources(self) -> JarSources:
        jars_dir = os.path.expanduser(self.jars_dir) if self.jars_dir else None
        return JarSources(jars_dir=jars_dir, repository_url=self.maven_repository)

    def engine_settings(self) -> EngineSettings:
        """What the engines read of this profile (they never see the profile class)."""
        return EngineSettings(
            method=self.method,
            master=self.master,
            spark_conf=dict(self.spark_conf),
            jar_sources=self.jar_sources,
            class_data_sharing=self.class_data_sharing,
            host=self.host,
            port=self.port,
            token=self.token,
            connect_retries=self.connect_retries,
            connect_timeout=self.connect_timeout,
        )

    def _connection_keys(self) -> tuple[str, ...]:
        # Never the token or the credential: `dbt debug` prints these.
        return (
            "method",
            "host",
            "port",
            "master",
            "catalog_type",
            "catalog",
            "warehouse",
            "region",
            "catalog_uri",
            "s3tables_rules",
            "emulator_table_location",
            "catalog_lock_timeout",
            "write_conflict_retries",
            "write_conflict_wait_seconds",
            "schema",
        )


def catalog_config_from_integration(
    integration: CatalogIntegrationConfig, project_root: str | None
) -> CatalogConfig:
    """The catalog a catalogs.yml integration declares, checked like a profile's, or a
    CatalogsYmlError naming the catalog, the key and the fix."""
    name = integration.name
    if not IDENTIFIER.fullmatch(name):
        raise CatalogsYmlError(
            name,
            "name",
            "is not a plain identifier (it becomes the Spark catalog name)",
            "use letters, digits and underscores",
        )
    catalog_type = INTEGRATION_TYPES.get(integration.catalog_type.casefold())
    if catalog_type is None:
        raise CatalogsYmlError(
            name,
            "catalog_type",
            f"unknown value `{integration.catalog_type}`",
            f"use one of: {', '.join(INTEGRATION_TYPES)}",
        )
    if (integration.table_format or "iceberg").casefold() != "iceberg":
        raise CatalogsYmlError(
            name, "table_format", f"is `{integration.table_format}`", "use `iceberg` or omit it"
        )
    properties: dict[str, Any] = dict(integration.adapter_properties or {})
    unknown = sorted(set(properties) - set(PROPERTY_KEYS))
    if unknown:
        raise CatalogsYmlError(
            name,
            f"adapter_properties.{unknown[0]}",
            "is not a key this adapter reads",
            f"use only: {', '.join(PROPERTY_KEYS)}",
        )
    if integration.external_volume and "warehouse" not in properties:
        # dbt's external volume is where the tables' files go: the warehouse.
        properties["warehouse"] = integration.external_volume
    try:
        credentials = S3TablesCredentials.from_dict(
            {"schema": "default", "catalog": name, "catalog_type": catalog_type, **properties}
        )
    except ProfileError as error:
        raise CatalogsYmlError(
            name, f"adapter_properties.{error.key}", error.problem, error.fix
        ) from None
    except ValidationError as error:
        raise CatalogsYmlError(
            name, "adapter_properties", f"a value has the wrong type ({error})", "fix its type"
        ) from None
    credentials.warehouse = catalog_type_named(catalog_type).resolve_warehouse(
        str(credentials.warehouse), project_root
    )
    return catalog_config_for(credentials)
