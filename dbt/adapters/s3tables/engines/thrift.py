"""`method: thrift`: SQL runs on a Spark Thrift Server, over dbt-spark's PyHive connection.

Everything goes through SQL: settings are `SET` (the profile's `spark_conf` too, when the
connection opens), a query's schema is `DESCRIBE QUERY`, a seed's rows travel as a
`VALUES` view.
"""

from __future__ import annotations

import copy
import re
import socket
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import PyhiveConnectionWrapper, SparkConnectionManager
from dbt_common.exceptions import DbtDatabaseError, DbtRuntimeError

from dbt.adapters.s3tables.catalogs.config import ICEBERG_EXTENSIONS
from dbt.adapters.s3tables.engines.base import (
    HASH_JOIN_SETTINGS,
    ServerEngineKind,
    server_address,
)
from dbt.adapters.s3tables.engines.file_changes import RangeFiles
from dbt.adapters.s3tables.engines.progress import (
    DEFAULT_PROGRESS_SECONDS,
    START_TICK_SECONDS,
    Ticker,
    node_label,
    progress_line,
)
from dbt.adapters.s3tables.engines.query_inputs import SERVER_QUERY_INPUTS, QueryInputs
from dbt.adapters.s3tables.engines.server_catalog import check_server_catalog
from dbt.adapters.s3tables.engines.server_range_reads import ServerRangeReader
from dbt.adapters.s3tables.engines.spark_errors import thrift_error, thrift_error_text
from dbt.adapters.s3tables.engines.write_conflicts import ConflictRetries, run_with_conflict_retries
from dbt.adapters.s3tables.errors import cleaned_up_after
from dbt.adapters.s3tables.seeds.values import text_rows_view_sql
from dbt.adapters.s3tables.sql.text import split_statements
from dbt.adapters.s3tables.sql.types import parse_spark_type

if TYPE_CHECKING:
    from dbt.adapters.contracts.connection import Connection
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

    from dbt.adapters.s3tables.catalogs.range_files import RangePlan
    from dbt.adapters.s3tables.engines.base import EngineSettings, EngineSetup
    from dbt.adapters.s3tables.seeds.csv import SeedText

logger = AdapterLogger("s3tables")


# Whether a server (host, port) has Iceberg's SQL extensions, asked once per dbt process.
_EXTENSIONS: dict[tuple[str, int], bool] = {}
# Whether a server (host, port) gives a session the settings it opens with, asked once per
# dbt process, at the first block that relies on them.
_OPENING_APPLIED: dict[tuple[str, int], bool] = {}
# What a server session opens with, sent in the Thrift `OpenSession` request instead of a
# `SET` and a `RESET` around each keyed strategy's statement (two round trips per merge):
# the hash-join threshold those statements run under. It then holds for every statement of
# the session (one dbt node's), where it only lets Spark hash a join side whose every shuffle
# partition is under 64 MB.
SESSION_OPENING_SETTINGS = MappingProxyType(dict(HASH_JOIN_SETTINGS))
# `SET key=value` (a model's sql_header, the adapter's own settings).
_ASSIGNMENT = re.compile(r"\s*SET\s+([^\s=]+)\s*=", re.IGNORECASE)
# Spark's Thrift Server holds a status request until the statement ends or 5 s pass
# (HiveServer2's long polling): a request it held this long is followed by the next at
# once. A server that answers at once is asked again after a pause doubling from the first.
POLL_HELD_SECONDS = 1.0
FIRST_POLL_PAUSE_SECONDS = 0.05


def next_poll_pause(pause: float, held: float, ceiling: float) -> float:
    """Seconds to wait before the next status request of a running statement: none after
    a request the server `held` (it waited for the statement), else twice the last `pause`
    (from `FIRST_POLL_PAUSE_SECONDS`), at most `ceiling` (the profile's `poll_interval`)."""
    if held >= POLL_HELD_SECONDS:
        return 0.0
    return min(ceiling, max(FIRST_POLL_PAUSE_SECONDS, pause * 2))


class ThriftEngine(PyhiveConnectionWrapper):
    """The engine of a dbt connection to a Spark Thrift Server (one server session per
    connection, so settings and temporary views stay with it). Everything goes through SQL."""

    def __init__(
        self,
        *args: Any,
        retries: ConflictRetries,
        address: tuple[str, int],
        node: Callable[[], str] = lambda: "",
        progress_seconds: float = DEFAULT_PROGRESS_SECONDS,
        opened_with: Mapping[str, str] = MappingProxyType({}),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.retries = retries
        self.address = address
        self.node = node
        # The server reports no progress over thrift: the lines say the elapsed time.
        self.progress_seconds = progress_seconds
        # Keys a statement of this server session set (its model's sql_header among them)
        # and those it opened with (`SESSION_OPENING_SETTINGS`): the only ones whose
        # session value is not the server's default.
        self._set_here: set[str] = set()
        self._opened_with = dict(opened_with)
        self._range_reads = ServerRangeReader(self._run, self._rows, self.settings)
        # Temporary views this connection no longer needs (`drop_temp_view`): dropped
        # before its next statement, or with the server session when none follows.
        self._released_views: list[str] = []

    def cursor(self) -> ThriftEngine:
        # dbt-spark's opens a server cursor and returns the wrapper, typed as its own class.
        super().cursor()
        return self

    def execute(self, sql: str, bindings: list[Any] | None = None) -> None:
        self._drop_released_views()
        # A model's sql_header (`SET ...;`) arrives in front of its statement.
        node = node_label(self.node())
        for statement in split_statements(sql):
            assigned = _ASSIGNMENT.match(statement)
            if assigned:
                self._set_here.add(assigned.group(1))
            with Ticker(
                self.progress_seconds,
                lambda elapsed: progress_line(node, elapsed, None),
                what=f"a statement of {node}",
            ):
                try:
                    run_with_conflict_retries(
                        partial(super().execute, statement, bindings),
                        thrift_error_text,
                        self.retries,
                        statement,
                    )
                except DbtDatabaseError as error:
                    # dbt-spark raises the server's whole text: its Java stack and plan go
                    # to the debug log, dbt shows the message.
                    raise thrift_error(str(error.msg)) from None

    def _execute_with_polling(self, sql: str, bindings: list[Any] | None) -> None:
        """The statement, sent to run in the background, and its status asked until it
        ends (dbt-spark's protocol). dbt-spark waits its `poll_interval` (5 s) after every
        status request, also after one the server held for 5 s, so a statement of 6 s took
        10: here the next request follows a held one at once (`next_poll_pause`)."""
        from TCLIService.ttypes import TOperationState

        running = {
            TOperationState.INITIALIZED_STATE,
            TOperationState.RUNNING_STATE,
            TOperationState.PENDING_STATE,
        }
        assert self._cursor, "Cursor not available"
        if bindings is not None:
            bindings = [self._fix_binding(binding) for binding in bindings]
        self._cursor.execute(sql.strip().removesuffix(";"), bindings, async_=True)
        started = time.monotonic()
        pause = 0.0
        while True:
            asked = time.monotonic()
            status = self._cursor.poll()
            if status.operationState not in running:
                break
            if self.query_timeout is not None and time.monotonic() - started > self.query_timeout:
                raise DbtRuntimeError(f"Query exceeded timeout of {self.query_timeout} seconds")
            pause = next_poll_pause(pause, time.monotonic() - asked, self.poll_interval)
            if pause:
                time.sleep(pause)
        if status.errorMessage:
            raise DbtDatabaseError(status.errorMessage)
        if status.operationState != TOperationState.FINISHED_STATE:
            state = TOperationState._VALUES_TO_NAMES.get(status.operationState, "unknown")
            raise DbtDatabaseError(f"Query failed with status: {state}")

    def fetchall(self) -> list[Any]:
        try:
            return list(super().fetchall() or [])
        except TypeError:
            if self._without_result():
                return []
            raise

    def fetchone(self) -> Any:
        # dbt-spark's wrapper has none (dbt then falls back to `fetchall()[0]`).
        assert self._cursor, "Cursor not available"
        try:
            return self._cursor.fetchone()
        except TypeError:
            if self._without_result():
                return None
            raise

    def _without_result(self) -> bool:
        """Whether the last statement had no result (DDL, a property change): the server
        describes one as a single `Result` column and sends no column data, which PyHive
        fails to fetch. It has no rows: `run_query()` of it works, as in process."""
        return [tuple(column[:2]) for column in self.description or []] == [
            ("Result", "STRING_TYPE")
        ]

    def _run(self, sql: str) -> None:
        """A statement without a result set (PyHive fails when asked to fetch from one)."""
        self.cursor()
        self.execute(sql)

    def _rows(self, sql: str) -> list[Any]:
        self._run(sql)
        return self.fetchall()

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
        # Asked once per dbt process and server: extensions are static, set when Spark
        # starts (each dbt node opens a server session of its own).
        if self.address not in _EXTENSIONS:
            rows = self._rows("SET spark.sql.extensions")
            _EXTENSIONS[self.address] = bool(rows) and ICEBERG_EXTENSIONS in str(rows[0][1])
        return _EXTENSIONS[self.address]

    @contextmanager
    def settings(self, values: dict[str, str]) -> Iterator[None]:
        """`SET` for one block of this server session, then back as it was: `RESET` to
        the server's default, unless a statement of this session set the key (a model's
        sql_header), whose value is read first and set again, or the session opened with
        it. A key the session opened with at that value and no statement changed is in
        effect already: nothing is sent for it."""
        opened = self._opened_with if self._opening_applied(values) else {}
        changed = {
            key: value
            for key, value in values.items()
            if key in self._set_here or opened.get(key) != value
        }
        previous = {key: self.setting(key) for key in changed if key in self._set_here}
        for key, value in changed.items():
            self._run(f"SET {key}={value}")

        def restore() -> None:
            for key in changed:
                earlier = previous.get(key, opened.get(key))
                self._run(f"SET {key}={earlier}" if earlier is not None else f"RESET {key}")

        with cleaned_up_after(restore, f"Setting {', '.join(changed)} back"):
            yield

    def _opening_applied(self, values: dict[str, str]) -> bool:
        """Whether this server gave the session the settings it opened with: read once per
        dbt process and server, from a key of `values` no statement of this session
        changed (a server that ignores them gets each block's `SET` and `RESET`)."""
        if self.address not in _OPENING_APPLIED:
            unchanged = [k for k in values if k in self._opened_with and k not in self._set_here]
            if not unchanged:
                return True  # nothing relies on them, or a statement set the keys since
            key = unchanged[0]
            _OPENING_APPLIED[self.address] = self.setting(key) == self._opened_with[key]
            if not _OPENING_APPLIED[self.address]:
                logger.debug(
                    f"The Spark Thrift Server at {self.address[0]}:{self.address[1]} does not "
                    f"apply the settings a session opens with: each block sets `{key}` itself"
                )
        return _OPENING_APPLIED[self.address]

    def set_setting(self, key: str, value: str) -> None:
        """One `SET` for the rest of this server session, sent as it is: a value may hold
        a `;`, which `execute` would take for the end of a statement."""
        self.cursor()
        super().execute(f"SET {key}={value}")
        self._set_here.add(key)

    def setting(self, key: str) -> str | None:
        """The server session's value of `key` (None when it has none)."""
        rows = self._rows(f"SET {key}")
        return str(rows[0][1]) if rows and rows[0][1] != "<undefined>" else None

    def create_text_view(self, view_name: str, seed: SeedText) -> None:
        # The server may not see this machine's files: the rows travel in the statement.
        rows = [
            row[: seed.width]
            for batch in seed.batches()
            for row in zip(*(column.to_pylist() for column in batch.columns), strict=True)
        ]
        self._run(text_rows_view_sql(view_name, rows, seed.width))

    def drop_temp_view(self, view_name: str) -> None:
        # Spark's Thrift Server drops a closing session's temporary views with their cache
        # (3.5 and 4.1): the view goes before this connection's next statement, and when
        # none follows (a merge's rows at the end of its node), with the session, a round
        # trip fewer.
        self._released_views.append(view_name)

    def _drop_released_views(self) -> None:
        views, self._released_views = self._released_views, []
        for view in views:
            self._run(f"DROP VIEW IF EXISTS {view}")

    def create_appended_rows_view(
        self, view_name: str, table: str, start: int, end: int, planned: Callable[[], RangePlan]
    ) -> None:
        # Spark SQL has no syntax for Iceberg's incremental append scan: the range's added
        # files are read as Parquet instead.
        plan = planned()
        if plan.fallback is not None:
            raise DbtRuntimeError(
                f"Model `{node_label(self.node())}`, upstream_changes({table}): over thrift "
                "the commits after a snapshot are read from the files they added, which "
                f"cannot be exact here ({plan.fallback}). Fix: run this model with `method: "
                "session` or `method: connect`, or read the upstream with ref()"
            )
        self._range_reads.appended(view_name, plan)

    def create_changed_rows_views(
        self,
        table: str,
        start: int,
        end: int,
        columns: Sequence[str],
        keys: Sequence[str],
        planned: Callable[[], RangePlan],
    ) -> RangeFiles:
        return self._range_reads.read(table, end, planned(), keys)

    def close(self) -> None:
        try:
            if self._range_reads.views:
                # A released view may be made from a cached part: dropped first, it is not
                # planned again when the part is uncached.
                self._drop_released_views()
            self._range_reads.release_views()
        finally:
            super().close()

    def query_inputs(self, sql: str) -> QueryInputs:
        return SERVER_QUERY_INPUTS

    def tag_node_commits(self, tags: dict[str, str]) -> bool:
        return False  # the server's JVM is out of reach

    def tag_next_write(self) -> None:
        return None  # nothing is tagged (tag_node_commits)

    def session(self, model_name: str) -> SparkSession:
        raise DbtRuntimeError(
            f"Python model `{model_name}` needs `method: session`: a Spark Thrift Server "
            "only runs SQL"
        )

    def engine_description(self) -> str:
        version = self._rows("SELECT version()")[0][0]
        return f"Spark {version} (Spark Thrift Server)"


def check_reachable(
    host: str, port: int, timeout: float, server: str = "Spark Thrift Server"
) -> None:
    """Fail fast, naming host and port, when nothing answers there (PyHive would wait)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return
    except OSError as error:
        raise DbtRuntimeError(
            f"Cannot reach the {server} at {host}:{port} within {timeout:g} s "
            f"({error}). Fix: start the server, or correct `host` / `port` in the profile"
        ) from None


def wait_until_reachable(settings: EngineSettings, server: str) -> None:
    """`check_reachable` on the profile's host and port, retried `connect_retries` times
    `connect_timeout` apart; the last failure is raised."""
    host, port = server_address(settings)
    attempts = 1 + max(0, settings.connect_retries)
    with Ticker(
        START_TICK_SECONDS,
        lambda elapsed: f"still waiting for the {server} at {host}:{port} ({elapsed:.0f} s)",
        what=f"the wait for the {server}",
    ):
        _wait(host, port, settings, server, attempts)


def _wait(host: str, port: int, settings: EngineSettings, server: str, attempts: int) -> None:
    for attempt in range(attempts):
        try:
            check_reachable(host, port, settings.connect_timeout, server)
            return
        except DbtRuntimeError:
            if attempt == attempts - 1:
                raise
            logger.warning(
                f"{server} at {host}:{port} not reachable; retry {attempt + 1} of "
                f"{attempts - 1} in {settings.connect_timeout} s"
            )
            time.sleep(settings.connect_timeout)


def opening_with(connection: Connection, settings: Mapping[str, str]) -> Connection:
    """A copy of `connection` whose server session opens with `settings`: dbt-spark sends
    its credentials' `server_side_parameters` with the Thrift `OpenSession` request, and
    the Spark Thrift Server gives a session each `set:hiveconf:` key as if it had been
    `SET` (the profile refuses that key, so nothing of the user's is replaced)."""
    credentials = copy.copy(connection.credentials)
    credentials.server_side_parameters = {
        f"set:hiveconf:{key}": value for key, value in settings.items()
    }
    opening = copy.copy(connection)
    opening.credentials = credentials
    return opening


def open_thrift_engine(connection: Connection, setup: EngineSetup) -> ThriftEngine:
    """dbt-spark's thrift connection (auth, retries), checked for reachability first
    and wrapped in an engine that does everything through SQL."""
    setup.refuse_declared_catalogs("thrift", "Spark Thrift Server")
    wait_until_reachable(setup.settings, "Spark Thrift Server")
    wrapper = SparkConnectionManager.open(opening_with(connection, SESSION_OPENING_SETTINGS)).handle
    # `setup.after_conflict` is not used: the server writes the files and may still be
    # writing a lost attempt's, so this process cannot remove them.
    address = server_address(setup.settings)
    engine = ThriftEngine(
        wrapper.handle,
        address=address,
        poll_interval=wrapper.poll_interval,
        query_timeout=wrapper.query_timeout,
        query_retries=wrapper.query_retries,
        retries=setup.conflict_retries,
        node=lambda: str(connection.name or ""),
        progress_seconds=setup.settings.progress_seconds,
        opened_with=SESSION_OPENING_SETTINGS,
    )
    setup.apply_spark_conf(
        "Spark Thrift Server", engine.set_setting, engine.setting, thrift_error_text
    )
    check_server_catalog(setup.catalog, address, "Spark Thrift Server", engine.setting)
    return engine


# `method: thrift`: the profile's `token` is not the server's (dbt-spark's thrift connection
# sends none).
ENGINE_KIND = ServerEngineKind(open_thrift_engine, default_port=10000)
