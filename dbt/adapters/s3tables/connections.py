"""Connections: dbt's connection objects mapped onto the shared in-process SparkSession."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import (
    PyhiveConnectionWrapper,
    SparkConnectionManager,
    SparkConnectionWrapper,
)
from dbt_common.exceptions import DbtDatabaseError, DbtRuntimeError

from dbt.adapters.s3tables.catalogs.config import ICEBERG_EXTENSIONS, catalog_config_for
from dbt.adapters.s3tables.catalogs.iceberg import iceberg_catalog_for
from dbt.adapters.s3tables.credentials import S3TablesCredentials
from dbt.adapters.s3tables.seeds import (
    ROW_COLUMN,
    seed_rows_as_text,
    seed_text_table,
    text_rows_view_sql,
)
from dbt.adapters.s3tables.spark_errors import (
    StatementRefused,
    database_error,
    is_jvm_stopped,
    java_error_text,
    jvm_stopped_message,
    thrift_error,
    thrift_error_text,
)
from dbt.adapters.s3tables.spark_session import get_or_create_session, jvm_post_mortem
from dbt.adapters.s3tables.sql_text import split_statements
from dbt.adapters.s3tables.types import parse_spark_type, session_wall_time, time_zone
from dbt.adapters.s3tables.write_conflicts import ConflictRetries, run_with_conflict_retries

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row, SparkSession
    from pyspark.sql.types import StructType

logger = AdapterLogger("s3tables")


class RunningStatements:
    """How many statements this process's dbt threads are running: a failed write's files
    are removed only while no other statement could be writing files of its own."""

    def __init__(self) -> None:
        self._count = 0
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        with self._lock:
            self._count += 1

    def __exit__(self, *exc_info: object) -> None:
        with self._lock:
            self._count -= 1

    def running(self) -> int:
        with self._lock:
            return self._count


STATEMENTS_RUNNING = RunningStatements()


def clean_up_after_failure(
    credentials: S3TablesCredentials, started: float, own_statements: int = 0
) -> str | None:
    """Remove (or, when that is unsafe, list) the files a write that failed after
    `started` left behind, if its catalog type keeps any; the sentence to add to its error."""
    config = catalog_config_for(credentials)
    if credentials.method != "session":
        unsafe = "a Spark Thrift Server may still be writing them"
    elif STATEMENTS_RUNNING.running() > own_statements:
        unsafe = "other models of this run are writing"
    else:
        unsafe = None
    try:
        leftovers = config.kind.clean_up_failed_write(iceberg_catalog_for(config), started, unsafe)
    except Exception as error:  # reported with the write's own error, not instead
        logger.debug(f"leftover check failed: {error!r}")
        return f"Looking for files the failed write left failed too: {error}"
    if leftovers.removed:
        logger.debug(f"removed after a failed write: {[str(p) for p in leftovers.removed]}")
    return leftovers.describe()


class SparkSqlHandle(SparkConnectionWrapper):
    """DB-API-like cursor over `SparkSession.sql` for one dbt connection.

    Each dbt connection tags its Spark jobs with its own job group so that a cancel
    (Ctrl-C) stops exactly that connection's work.
    """

    def __init__(
        self,
        spark: SparkSession,
        job_group: str,
        retries: ConflictRetries | None = None,
        after_conflict: Callable[[float], object] | None = None,
    ) -> None:
        self.spark = spark
        self.job_group = job_group
        self.retries = retries or ConflictRetries()
        # An attempt that lost to a concurrent commit may leave files (a replace's
        # data and manifests): removed, or listed for later, before the next attempt.
        self.after_conflict = after_conflict
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

    def has_iceberg_extensions(self) -> bool:
        extensions = self.spark.conf.get("spark.sql.extensions", "") or ""
        return ICEBERG_EXTENSIONS in extensions

    @contextmanager
    def settings(self, values: dict[str, str]) -> Iterator[None]:
        """Apply SQL settings to this connection's session for one block, then restore."""
        previous = {key: self.spark.conf.get(key, None) for key in values}
        for key, value in values.items():
            self.spark.conf.set(key, value)
        try:
            yield
        finally:
            for key, value in previous.items():
                if value is None:
                    self.spark.conf.unset(key)
                else:
                    self.spark.conf.set(key, value)

    def query_schema(self, sql: str) -> StructType:
        """Output schema of a query; Spark analyses it without running it."""
        try:
            return self.spark.sql(sql).schema
        except Exception as error:
            raise database_error(error) from None

    def create_text_view(self, view_name: str, rows: Iterable[Iterable[Any]], width: int) -> None:
        """A temporary view of text columns `c0..cN` and `dbt_row`: one bulk Arrow transfer."""
        from pyspark.sql.types import LongType, StringType, StructField, StructType

        text_columns = [StructField(f"c{i}", StringType()) for i in range(width)]
        schema = StructType([*text_columns, StructField(ROW_COLUMN, LongType())])
        try:
            frame = seed_text_table(rows, width).to_pandas()
            self.spark.createDataFrame(frame, schema=schema).createOrReplaceTempView(view_name)
        except Exception as error:
            raise database_error(error) from None

    def drop_temp_view(self, view_name: str) -> None:
        self.spark.catalog.dropTempView(view_name)

    def session(self, model_name: str) -> SparkSession:
        """The SparkSession Python models run in."""
        return self.spark

    def engine_description(self) -> str:
        jvm = self.spark._jvm
        iceberg = jvm.org.apache.iceberg.IcebergBuild.version()  # type: ignore[union-attr]
        master = self.spark.sparkContext.master
        return f"Spark {self.spark.version} (in process, master {master}), Iceberg {iceberg}"

    def execute(self, sql: str, bindings: list[Any] | None = None) -> None:
        if bindings:
            raise DbtRuntimeError("s3tables runs plain SQL: query bindings are not supported")
        self._df = None
        self._rows = None
        # A model's sql_header (`SET ...;`) arrives in front of its statement.
        for statement in split_statements(sql):
            self.spark.sparkContext.setJobGroup(
                self.job_group, statement[:120], interruptOnCancel=True
            )
            try:
                self._df = run_with_conflict_retries(
                    lambda s=statement: self.spark.sql(s),
                    java_error_text,
                    self.retries,
                    statement,
                    self.after_conflict,
                )
            except Exception as error:
                raise database_error(error) from None

    def fetchall(self) -> list[Row] | None:
        if self._rows is None and self._df is not None:
            try:
                rows = self._df.collect()
            except Exception as error:
                raise database_error(error) from None
            self._rows = self._in_session_time(rows)
        return self._rows

    def _in_session_time(self, rows: list[Row]) -> list[Row]:
        """Rows with TIMESTAMP values as the session's wall time, not the Python
        process's local time PySpark gives them (dbt show, run_query, tests)."""
        from pyspark.sql import Row
        from pyspark.sql.types import TimestampType

        assert self._df is not None
        fields = self._df.schema.fields
        timestamps = [i for i, f in enumerate(fields) if isinstance(f.dataType, TimestampType)]
        if not timestamps or not rows:
            return rows
        zone = time_zone(str(self.spark.conf.get("spark.sql.session.timeZone")))
        row = Row(*[f.name for f in fields])
        converted = []
        for values in rows:
            values = list(values)
            for index in timestamps:
                values[index] = session_wall_time(values[index], zone)
            converted.append(row(*values))
        return converted

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


class ThriftSqlHandle(PyhiveConnectionWrapper):
    """A dbt connection to a Spark Thrift Server (one server session per connection, so
    settings and temporary views stay with it). Everything goes through SQL."""

    def __init__(self, *args: Any, retries: ConflictRetries, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.retries = retries

    def execute(self, sql: str, bindings: list[Any] | None = None) -> None:
        # A model's sql_header (`SET ...;`) arrives in front of its statement.
        for statement in split_statements(sql):
            run_with_conflict_retries(
                lambda s=statement: super(ThriftSqlHandle, self).execute(s, bindings),
                thrift_error_text,
                self.retries,
                statement,
            )

    def _run(self, sql: str) -> None:
        """A statement without a result set (PyHive fails when asked to fetch from one)."""
        self.cursor()
        self.execute(sql)

    def _rows(self, sql: str) -> list[Any]:
        self._run(sql)
        return list(self.fetchall() or [])

    def query_schema(self, sql: str) -> StructType:
        """Output schema of a query from `DESCRIBE QUERY` (analysis only)."""
        from pyspark.sql.types import StructField, StructType

        fields = []
        for name, type_text, *_ in self._rows(f"DESCRIBE QUERY {sql}"):
            try:
                fields.append(StructField(name, parse_spark_type(type_text)))
            except ValueError as error:
                raise DbtRuntimeError(f"column `{name}`: {error}") from error
        return StructType(fields)

    def has_iceberg_extensions(self) -> bool:
        rows = self._rows("SET spark.sql.extensions")
        return bool(rows) and ICEBERG_EXTENSIONS in str(rows[0][1])

    @contextmanager
    def settings(self, values: dict[str, str]) -> Iterator[None]:
        """`SET` for one block of this server session, then restore (or `RESET`)."""
        previous = {}
        for key in values:
            rows = self._rows(f"SET {key}")
            previous[key] = rows[0][1] if rows and rows[0][1] != "<undefined>" else None
        for key, value in values.items():
            self._run(f"SET {key}={value}")
        try:
            yield
        finally:
            for key, value in previous.items():
                self._run(f"SET {key}={value}" if value is not None else f"RESET {key}")

    def create_text_view(self, view_name: str, rows: Iterable[Iterable[Any]], width: int) -> None:
        self._run(text_rows_view_sql(view_name, seed_rows_as_text(rows), width))

    def drop_temp_view(self, view_name: str) -> None:
        self._run(f"DROP VIEW IF EXISTS {view_name}")

    def session(self, model_name: str) -> SparkSession:
        raise DbtRuntimeError(
            f"Python model `{model_name}` needs `method: session`: a Spark Thrift Server "
            "only runs SQL"
        )

    def engine_description(self) -> str:
        version = self._rows("SELECT version()")[0][0]
        return f"Spark {version} (Spark Thrift Server)"


def check_reachable(host: str, port: int, timeout: float) -> None:
    """Fail fast, naming host and port, when nothing answers there (PyHive would wait)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return
    except OSError as error:
        raise DbtRuntimeError(
            f"Cannot reach the Spark Thrift Server at {host}:{port} within {timeout:g} s "
            f"({error}). Fix: start the server, or correct `host` / `port` in the profile"
        ) from None


class S3TablesConnectionManager(SparkConnectionManager):
    TYPE = "s3tables"

    @classmethod
    def _rollback_handle(cls, connection: Connection) -> None:
        # Spark has no transactions, and touching the handle would start the engine
        # for a command that needs only the catalog (dbt source freshness).
        logger.debug("rollback: Spark has no transactions; each statement is atomic")

    @contextmanager
    def exception_handler(self, sql: str) -> Iterator[None]:
        """A failed statement is a database error with a readable message; the adapter's
        own errors pass unchanged (dbt-spark re-wraps everything as a runtime error).
        Files a failed statement left in the embedded catalog's warehouse are removed."""
        started = time.time()
        try:
            with STATEMENTS_RUNNING:
                try:
                    yield
                except StatementRefused:
                    raise  # never ran: it left nothing
                except DbtDatabaseError as error:
                    # The failed statement itself is still counted as running.
                    credentials: S3TablesCredentials = self.profile.credentials  # type: ignore[assignment]
                    note = clean_up_after_failure(credentials, started, own_statements=1)
                    if note:
                        raise DbtDatabaseError(f"{error.msg}\n  {note}") from None
                    raise
        except DbtRuntimeError:
            raise
        except Exception as error:
            logger.debug(f"Error while running:\n{sql}")
            response = error.args[0] if error.args else None
            if hasattr(response, "status"):
                raise thrift_error(str(response.status.errorMessage)) from None
            raise DbtRuntimeError(f"{type(error).__name__}: {error}") from error

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == ConnectionState.OPEN:
            return connection
        credentials: S3TablesCredentials = connection.credentials
        config = catalog_config_for(credentials)
        iceberg = iceberg_catalog_for(config)
        # A PyIceberg commit (schema evolution, properties) that fails on a full disk
        # leaves a partial metadata file, cleaned up like a failed statement's.
        iceberg.after_failed_write = partial(clean_up_after_failure, credentials)
        config.kind.open_connection(iceberg, spark_in_process=credentials.method == "session")
        conflict_retries = ConflictRetries(
            credentials.write_conflict_retries, credentials.write_conflict_wait_seconds
        )
        if credentials.method == "thrift":
            return cls._open_thrift(connection, credentials, conflict_retries)
        try:
            spark = get_or_create_session(config, credentials.master, credentials.spark_conf)
            # Each connection (one per dbt thread) gets its own session over the shared
            # SparkContext: SQL settings and temporary views never leak between models
            # that run at the same time.
            session = spark.newSession()
        except Exception as error:
            if is_jvm_stopped(error):  # it died during an earlier statement
                raise DbtRuntimeError(jvm_stopped_message(*jvm_post_mortem())) from None
            raise
        connection.handle = SparkSqlHandle(
            session,
            job_group=f"dbt:{connection.name}",
            retries=conflict_retries,
            after_conflict=partial(clean_up_after_failure, credentials, own_statements=1),
        )
        connection.state = ConnectionState.OPEN
        return connection

    @classmethod
    def _open_thrift(
        cls, connection: Connection, credentials: S3TablesCredentials, retries: ConflictRetries
    ) -> Connection:
        """dbt-spark's thrift connection (auth, retries), checked for reachability first
        and wrapped in a handle that does everything through SQL."""
        attempts = 1 + max(0, credentials.connect_retries)
        for attempt in range(attempts):
            try:
                check_reachable(
                    str(credentials.host), int(credentials.port), credentials.connect_timeout
                )
                break
            except DbtRuntimeError:
                if attempt == attempts - 1:
                    raise
                logger.warning(
                    f"Spark Thrift Server at {credentials.host}:{credentials.port} not reachable; "
                    f"retry {attempt + 1} of {attempts - 1} in {credentials.connect_timeout} s"
                )
                time.sleep(credentials.connect_timeout)
        connection = SparkConnectionManager.open(connection)
        wrapper = connection.handle
        connection.handle = ThriftSqlHandle(
            wrapper.handle,
            poll_interval=wrapper.poll_interval,
            query_timeout=wrapper.query_timeout,
            query_retries=wrapper.query_retries,
            retries=retries,
        )
        return connection
