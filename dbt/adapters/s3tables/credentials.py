"""Profile contract of the s3tables adapter: keys, defaults and their validation.

Validation happens here, when dbt reads the profile, so a bad key fails before any
Spark process starts or any folder is created. The catalog keys are declared and checked
in `catalogs` (`CatalogKeys`, which the profile inherits, and `check_catalog_keys`), as
for each catalog of catalogs.yml; the engine of the profile's `method` checks the keys it
takes (`EngineKind.check_profile`); the keys of the jars are here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from dbt.adapters.spark.connections import SparkCredentials

from dbt.adapters.s3tables.catalogs import check_catalog_keys
from dbt.adapters.s3tables.catalogs.jars import FETCH_COMMAND, MAVEN_CENTRAL, JarSources
from dbt.adapters.s3tables.catalogs.keys import CatalogKeys
from dbt.adapters.s3tables.engines.base import EngineSettings
from dbt.adapters.s3tables.engines.progress import DEFAULT_PROGRESS_SECONDS
from dbt.adapters.s3tables.engines.registry import engine_kind
from dbt.adapters.s3tables.errors import ProfileError
from dbt.adapters.s3tables.keys.scalars import scalar_mapping
from dbt.adapters.s3tables.keys.spelling import nearest_key

DEFAULT_MASTER = "local[*]"

# dbt-spark's keys of its `odbc` and `http` methods, which this adapter does not have
# (nothing here reads them), with dbt-spark's defaults, which a serialized profile holds.
OTHER_METHOD_KEYS: dict[str, str | None] = {
    "driver": None,
    "cluster": None,
    "endpoint": None,
    "organization": "0",
    "connection_string_suffix": None,
}


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


@dataclass
class S3TablesCredentials(CatalogKeys, SparkCredentials):
    """Profile of `type: s3tables`: the catalog keys (`CatalogKeys`, first so its `token`
    is the one declared), dbt-spark's keys (host, port, auth...) and those below."""

    method: str = "session"  # type: ignore[assignment]  # dbt-spark's is an enum
    # A server method's port (dbt-spark's default, 443, is for HTTP); its engine fills its
    # default (`ServerEngineKind.default_port`).
    port: int | None = None  # type: ignore[assignment]  # dbt-spark's is int; None until checked
    master: str = DEFAULT_MASTER
    # Typed loosely so a wrong shape reaches `validate_spark_conf`, whose error names the
    # key, instead of dbt's generic schema message.
    spark_conf: Any = None
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
    # A line every this many seconds while a node's statement runs (0: none), with what the
    # engine reports of its progress.
    progress_interval_seconds: float = DEFAULT_PROGRESS_SECONDS
    # session: Spark's web UI on, its address said at start.
    spark_ui: bool = False

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
        engine = engine_kind(self.method)
        engine.check_profile(self)
        check_catalog_keys(self)
        if not str(self.master or "").strip():
            raise ProfileError("master", "is empty", f"omit it for `{DEFAULT_MASTER}`")
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
        if self.progress_interval_seconds != 0 and self.progress_interval_seconds < 1:
            raise ProfileError(
                "progress_interval_seconds",
                f"`{self.progress_interval_seconds}` is not 0 (no progress lines) or a number "
                "of seconds from 1",
                f"omit it for {DEFAULT_PROGRESS_SECONDS}, or set 0",
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
        engine.check_spark_conf(self.method, self.spark_conf)

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
            progress_seconds=self.progress_interval_seconds,
            spark_ui=self.spark_ui,
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
