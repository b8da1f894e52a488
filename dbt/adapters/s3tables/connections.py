"""Connections: dbt's connection objects, each opened on the engine of the profile's `method`
(`engines/`), and what a failed statement left in the embedded warehouse."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import SparkConnectionManager
from dbt_common.exceptions import DbtDatabaseError, DbtRuntimeError

from dbt.adapters.s3tables.catalogs.catalog_set import CatalogSet
from dbt.adapters.s3tables.catalogs.config import CatalogConfig, catalog_config_for
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog, iceberg_catalog_for
from dbt.adapters.s3tables.credentials import S3TablesCredentials
from dbt.adapters.s3tables.engines.base import EngineSetup
from dbt.adapters.s3tables.engines.registry import engine_kind
from dbt.adapters.s3tables.engines.spark_errors import lost_to_another_writer, thrift_error
from dbt.adapters.s3tables.engines.write_conflicts import ConflictRetries
from dbt.adapters.s3tables.errors import StatementRefused
from dbt.adapters.s3tables.lifecycle.audit import running_node

logger = AdapterLogger("s3tables")


class RunningStatements:
    """How many statements and catalog operations this process's dbt threads are running,
    and the gate a failed write's cleanup closes: its files are removed only while nothing
    else runs, and nothing starts until it is done. Checking first and removing after,
    with the gate open, let another model's write start in between: the files it had
    written and not yet committed looked like leftovers, were removed, and its commit
    then referenced missing files."""

    def __init__(self) -> None:
        self._count = 0
        # The thread removing a failed write's files (None: none is).
        self._sweeper: int | None = None
        self._changed = threading.Condition()

    def __enter__(self) -> None:
        me = threading.get_ident()
        with self._changed:
            while self._sweeper is not None and self._sweeper != me:
                self._changed.wait()
            self._count += 1

    def __exit__(self, *exc_info: object) -> None:
        with self._changed:
            self._count -= 1
            self._changed.notify_all()

    def running(self) -> int:
        with self._changed:
            return self._count

    @contextmanager
    def alone(self, own: int) -> Iterator[bool]:
        """Whether this thread runs alone (no more than its `own` statements are running);
        while it does, no other thread's statement or catalog operation starts."""
        me = threading.get_ident()
        with self._changed:
            alone = self._count <= own and self._sweeper is None
            if alone:
                self._sweeper = me
        try:
            yield alone
        finally:
            if alone:
                with self._changed:
                    self._sweeper = None
                    self._changed.notify_all()


STATEMENTS_RUNNING = RunningStatements()


def clean_up_after_failure(
    credentials: S3TablesCredentials,
    catalogs: CatalogSet,
    started: float,
    own_statements: int = 0,
    lost_a_conflict: bool = False,
) -> str | None:
    """Remove (or, when that is unsafe, list) the files a write that failed after
    `started` left behind in any catalog whose type keeps them; the sentence to add to its
    error.

    A write that `lost_a_conflict` (a commit conflict, or a table another run created
    first) proves another writer is at work on the table: its files in flight (not
    committed yet) look exactly like this write's leftovers, so nothing is removed then,
    only listed for a later run that is alone to re-check."""
    notes = []
    with STATEMENTS_RUNNING.alone(own_statements) as alone:
        if lost_a_conflict:
            unsafe: str | None = "another writer is committing to this table"
        elif not engine_kind(credentials.method).writes_from_this_process:
            unsafe = "a Spark Thrift Server may still be writing them"
        elif not alone:
            unsafe = "other models of this run are writing"
        else:
            unsafe = None
        for config in catalogs.all():
            try:
                leftovers = config.kind.clean_up_failed_write(
                    iceberg_catalog_for(config), started, unsafe
                )
            except Exception as error:  # reported with the write's own error, not instead
                logger.debug(f"leftover check failed: {error!r}")
                notes.append(f"Looking for files the failed write left failed too: {error}")
                continue
            if leftovers.removed:
                logger.debug(f"removed after a failed write: {[str(p) for p in leftovers.removed]}")
            note = leftovers.describe()
            if note:
                notes.append(note)
    return "\n  ".join(notes) or None


class S3TablesConnectionManager(SparkConnectionManager):
    TYPE = "s3tables"

    def __init__(self, profile: Any, mp_context: Any) -> None:
        super().__init__(profile, mp_context)
        # The profile's catalog and those catalogs.yml declares (the adapter adds them).
        self.catalogs = CatalogSet(catalog_config_for(profile.credentials))
        self.attach(self.catalogs.default)

    def set_connection_name(self, name: str | None = None) -> Connection:
        # The node this thread runs: what its `ref()`s resolve for (a snapshot reads main
        # while a parent is staged for its audit, see lifecycle/audit.py).
        running_node(name or "")
        return super().set_connection_name(name)

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
                    credentials: S3TablesCredentials = self.profile.credentials  # type: ignore[assignment]  # this adapter's profile
                    note = clean_up_after_failure(
                        credentials,
                        self.catalogs,
                        started,
                        own_statements=1,
                        lost_a_conflict=lost_to_another_writer(str(error.msg)),
                    )
                    if note:
                        raise DbtDatabaseError(f"{error.msg}\n  {note}") from None
                    raise
        except DbtRuntimeError:
            raise
        except Exception as error:
            logger.debug(f"Error while running:\n{sql}")
            response: Any = error.args[0] if error.args else None
            if hasattr(response, "status"):
                raise thrift_error(str(response.status.errorMessage)) from None
            raise DbtRuntimeError(f"{type(error).__name__}: {error}") from error

    def attach(self, config: CatalogConfig) -> IcebergCatalog:
        """The catalog's PyIceberg access, bound to this invocation (it is shared by the
        process's invocations: an orchestrator's, a test run's), from its first use on."""
        iceberg = iceberg_catalog_for(config)
        credentials: S3TablesCredentials = self.profile.credentials  # type: ignore[assignment]  # this adapter's profile
        # A PyIceberg commit (schema evolution, properties) that fails on a full disk
        # leaves a partial metadata file, cleaned up like a failed statement's.
        iceberg.access.after_failed_write = partial(
            clean_up_after_failure, credentials, self.catalogs
        )
        # Its operations (commits write metadata files) count as running, as statements do.
        iceberg.access.operations = STATEMENTS_RUNNING
        # Changes to format-v3 tables PyIceberg cannot write go through Spark SQL.
        iceberg.changes.run_sql = self.run_catalog_sql
        return iceberg

    def run_catalog_sql(self, sql: str) -> None:
        """A catalog change run as a statement on this thread's connection."""
        self.execute(sql)

    def open(self, connection: Connection) -> Connection:  # type: ignore[override]  # dbt's is a classmethod
        # An instance method (dbt calls it on the instance): the catalogs are this
        # invocation's.
        if connection.state == ConnectionState.OPEN:
            return connection
        credentials: S3TablesCredentials = connection.credentials
        engine = engine_kind(credentials.method)
        for config in self.catalogs.all():
            # Bound again at each open: several adapters can share a process (dbt's test
            # fixtures keep one beside each run's), and the one opening is the one in use.
            iceberg = self.attach(config)
            # The catalog type's checks and set-up; an embedded catalog that Spark in this
            # process writes to also takes a process lock against other processes' cleanup.
            config.kind.open_connection(iceberg, spark_in_process=engine.writes_from_this_process)
        conflict_retries = ConflictRetries(
            credentials.write_conflict_retries, credentials.write_conflict_wait_seconds
        )
        setup = EngineSetup(
            credentials.engine_settings(),
            self.catalogs.default,
            conflict_retries,
            after_conflict=partial(
                clean_up_after_failure,
                credentials,
                self.catalogs,
                own_statements=1,
                lost_a_conflict=True,
            ),
            other_catalogs=self.catalogs.declared,
        )
        connection.handle = engine.open(connection, setup)
        connection.state = ConnectionState.OPEN
        return connection
