"""Profile contract of the s3tables adapter: keys, defaults and their validation.

Validation happens here, when dbt reads the profile, so a bad key fails before any
Spark process starts or any folder is created.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from dbt.adapters.spark.connections import SparkCredentials
from dbt_common.exceptions import DbtRuntimeError

SUPPORTED_METHODS = ("session",)
SUPPORTED_CATALOG_TYPES = ("local",)
DEFAULT_WAREHOUSE = "./warehouse"
DEFAULT_MASTER = "local[*]"
DEFAULT_CATALOG_NAME = "local"

# Spark and Iceberg catalog names become SQL identifiers and JDBC rows: keep them plain.
_CATALOG_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ProfileError(DbtRuntimeError):
    """A profile key has a value the adapter cannot use."""

    def __init__(self, key: str, problem: str, fix: str) -> None:
        super().__init__(f"s3tables profile key `{key}`: {problem}. Fix: {fix}")


def validate_spark_conf(spark_conf: Any) -> dict[str, str]:
    """Return `spark_conf` as string pairs, or raise naming the offending key.

    Keys must start with `spark.`: Spark silently ignores anything else, which turns a
    typo into a setting that quietly does nothing.
    """
    if spark_conf is None:
        return {}
    if not isinstance(spark_conf, dict):
        raise ProfileError(
            "spark_conf",
            f"expected a mapping of Spark settings, got {type(spark_conf).__name__}",
            "write it as `spark_conf: {spark.executor.memory: 2g}`",
        )
    settings: dict[str, str] = {}
    for key, value in spark_conf.items():
        name = str(key)
        if not name.startswith("spark."):
            raise ProfileError(
                f"spark_conf.{name}",
                "Spark settings start with `spark.`; Spark would silently ignore this one",
                f"rename it to the full Spark setting name, e.g. `spark.{name}`",
            )
        if isinstance(value, bool):
            settings[name] = "true" if value else "false"
        elif isinstance(value, (str, int, float)):
            settings[name] = str(value)
        else:
            raise ProfileError(
                f"spark_conf.{name}",
                f"value must be a string, number or boolean, got {type(value).__name__}",
                "give a single scalar value (lists are written comma-separated in one string)",
            )
    return settings


def resolve_warehouse(warehouse: str, project_root: str | None) -> str:
    """Absolute warehouse path: relative paths resolve against the dbt project folder."""
    path = os.path.expanduser(warehouse)
    if not os.path.isabs(path):
        path = os.path.join(project_root or os.getcwd(), path)
    return os.path.normpath(path)


@dataclass
class S3TablesCredentials(SparkCredentials):
    """Profile of `type: s3tables`. Inherits dbt-spark's keys (host, port, auth...)."""

    method: str = "session"  # type: ignore[assignment]
    warehouse: str = DEFAULT_WAREHOUSE
    master: str = DEFAULT_MASTER
    catalog: str = DEFAULT_CATALOG_NAME
    catalog_type: str = "local"
    # Typed loosely so a wrong shape reaches `validate_spark_conf`, whose error names the
    # key, instead of dbt's generic schema message.
    spark_conf: Any = None
    # Seconds a SQLite catalog writer waits for a lock before it is retried.
    catalog_lock_timeout: int = 30

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
        self.database = None  # type: ignore[assignment]
        if self.method not in SUPPORTED_METHODS:
            raise ProfileError(
                "method",
                f"unknown value `{self.method}`",
                f"use one of: {', '.join(SUPPORTED_METHODS)}",
            )
        if self.catalog_type not in SUPPORTED_CATALOG_TYPES:
            raise ProfileError(
                "catalog_type",
                f"unknown value `{self.catalog_type}`",
                f"use one of: {', '.join(SUPPORTED_CATALOG_TYPES)}",
            )
        if not _CATALOG_NAME_RE.fullmatch(self.catalog or ""):
            raise ProfileError(
                "catalog",
                f"`{self.catalog}` is not a plain identifier",
                "use letters, digits and underscores, e.g. `local`",
            )
        if not str(self.warehouse or "").strip():
            raise ProfileError("warehouse", "is empty", f"omit it for `{DEFAULT_WAREHOUSE}`")
        if not str(self.master or "").strip():
            raise ProfileError("master", "is empty", f"omit it for `{DEFAULT_MASTER}`")
        if self.catalog_lock_timeout <= 0:
            raise ProfileError(
                "catalog_lock_timeout", "must be a positive number of seconds", "omit it for 30"
            )
        if self.server_side_parameters:
            raise ProfileError(
                "server_side_parameters",
                "is dbt-spark's key and is not read by this adapter",
                "move these settings under `spark_conf`",
            )
        self.spark_conf = validate_spark_conf(self.spark_conf)

    @property
    def type(self) -> str:
        return "s3tables"

    @property
    def unique_field(self) -> str:
        return f"{self.catalog_type}:{self.warehouse}"

    def _connection_keys(self) -> tuple[str, ...]:
        return ("method", "master", "catalog_type", "catalog", "warehouse", "schema")
