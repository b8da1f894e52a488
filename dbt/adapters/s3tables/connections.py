"""Connections: dbt's connection objects mapped onto the shared in-process SparkSession."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import SparkConnectionManager, SparkConnectionWrapper
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.s3tables.catalog_config import CatalogConfig
from dbt.adapters.s3tables.credentials import ProfileError, S3TablesCredentials
from dbt.adapters.s3tables.iceberg_catalog import IcebergCatalog
from dbt.adapters.s3tables.spark_session import get_or_create_session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row, SparkSession

logger = AdapterLogger("s3tables")


def catalog_config_for(credentials: S3TablesCredentials) -> CatalogConfig:
    return CatalogConfig(
        name=credentials.catalog,
        catalog_type=credentials.catalog_type,
        warehouse=credentials.warehouse,
        lock_timeout_seconds=credentials.catalog_lock_timeout,
    )


@cache
def iceberg_catalog_for(config: CatalogConfig) -> IcebergCatalog:
    """One PyIceberg catalog per catalog description and process, shared by all threads."""
    return IcebergCatalog(config)


def check_writable_folder(path: str, key: str = "warehouse") -> None:
    """Raise unless `path` exists as a writable folder or can be created; create nothing."""
    probe = path
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if not os.path.isdir(probe):
        raise ProfileError(key, f"`{probe}` is a file, not a folder", "point it at a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ProfileError(
            key,
            f"`{path}` cannot be written (no write permission on `{probe}`)",
            "choose a folder you can write to, or fix its permissions",
        )


def prepare_local_catalog(config: CatalogConfig) -> None:
    """Create the warehouse folder and switch the SQLite catalog file to WAL mode.

    WAL is a property of the file, so setting it once serves the JVM and Python alike.
    """
    check_writable_folder(config.warehouse)
    os.makedirs(config.warehouse, exist_ok=True)
    connection = sqlite3.connect(config.sqlite_path, timeout=config.lock_timeout_seconds)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
    finally:
        connection.close()


def spark_error_message(error: BaseException) -> str:
    """The readable part of a Spark error: messages of the Java cause chain, no stack."""
    java_error = getattr(error, "java_exception", None)
    if java_error is None:
        return str(error).strip()
    messages: list[str] = []
    while java_error is not None and len(messages) < 5:
        message = java_error.toString()
        if message not in messages:
            messages.append(message)
        java_error = java_error.getCause()
    return "\n  caused by: ".join(messages)


class SparkSqlHandle(SparkConnectionWrapper):
    """DB-API-like cursor over `SparkSession.sql` for one dbt connection.

    Each dbt connection tags its Spark jobs with its own job group so that a cancel
    (Ctrl-C) stops exactly that connection's work.
    """

    def __init__(self, spark: SparkSession, job_group: str) -> None:
        self.spark = spark
        self.job_group = job_group
        self._df: DataFrame | None = None
        self._rows: list[Row] | None = None

    def cursor(self) -> SparkSqlHandle:
        self._df = None
        self._rows = None
        return self

    def cancel(self) -> None:
        self.spark.sparkContext.cancelJobGroup(self.job_group)

    def close(self) -> None:
        self._df = None
        self._rows = None

    def rollback(self, *args: Any, **kwargs: Any) -> None:
        logger.debug("rollback: Spark has no transactions; each statement is atomic")

    def execute(self, sql: str, bindings: list[Any] | None = None) -> None:
        if bindings:
            raise DbtRuntimeError("s3tables runs plain SQL: query bindings are not supported")
        sql = sql.strip()
        if sql.endswith(";"):
            sql = sql[:-1]
        self.spark.sparkContext.setJobGroup(self.job_group, sql[:120], interruptOnCancel=True)
        try:
            self._df = self.spark.sql(sql)
            self._rows = None
        except Exception as error:
            raise DbtRuntimeError(spark_error_message(error)) from error

    def fetchall(self) -> list[Row] | None:
        if self._rows is None and self._df is not None:
            try:
                self._rows = self._df.collect()
            except Exception as error:
                raise DbtRuntimeError(spark_error_message(error)) from error
        return self._rows

    def fetchone(self) -> Row | None:
        rows = self.fetchall()
        return rows.pop(0) if rows else None

    @property
    def description(self) -> Sequence[tuple[str, Any, None, None, None, None, bool]]:
        if self._df is None:
            return []
        return [
            (f.name, f.dataType.simpleString(), None, None, None, None, f.nullable)
            for f in self._df.schema.fields
        ]


class S3TablesConnectionManager(SparkConnectionManager):
    TYPE = "s3tables"

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == ConnectionState.OPEN:
            return connection
        credentials: S3TablesCredentials = connection.credentials
        config = catalog_config_for(credentials)
        if config.uses_sqlite:
            prepare_local_catalog(config)
        # PyIceberg creates the catalog tables first so the JVM never races it to do so.
        iceberg_catalog_for(config).ensure_initialized()
        spark = get_or_create_session(config, credentials.master, credentials.spark_conf)
        connection.handle = SparkSqlHandle(spark, job_group=f"dbt:{connection.name}")
        connection.state = ConnectionState.OPEN
        return connection
