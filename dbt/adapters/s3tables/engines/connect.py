"""`method: connect`: SQL and Python models run on a Spark Connect server (Spark 3.5's
DataFrame API over gRPC), such as the warm local one `dbt-s3tables-engine start connect`
starts.

Each dbt connection opens its own server session, so settings (the profile's `spark_conf`,
set when it opens) and temporary views stay with the connection, as in-process. What needs
the driver's JVM is not reachable over Connect and degrades explicitly: commits are not
tagged with the dbt run (run-level undo says so, as for thrift), cancel interrupts the
session's operations instead of a job group, and a stopped server is reported as
unreachable, not with a JVM post-mortem. pyspark 3.5's client warnings that it could not
release a finished result go to dbt's log file, not the console.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, TextIO

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.s3tables.engines.base import ServerEngineKind, server_address
from dbt.adapters.s3tables.engines.file_changes import RangeFiles
from dbt.adapters.s3tables.engines.progress import SparkProgress, Ticker, node_label, progress_line
from dbt.adapters.s3tables.engines.query_inputs import SERVER_QUERY_INPUTS, QueryInputs
from dbt.adapters.s3tables.engines.server_catalog import check_server_catalog
from dbt.adapters.s3tables.engines.server_range_reads import ServerRangeReader
from dbt.adapters.s3tables.engines.session import SessionEngine
from dbt.adapters.s3tables.engines.spark_errors import database_error
from dbt.adapters.s3tables.engines.thrift import wait_until_reachable
from dbt.adapters.s3tables.engines.write_conflicts import run_with_conflict_retries
from dbt.adapters.s3tables.errors import cleaned_up_after
from dbt.adapters.s3tables.seeds.values import ROW_COLUMN
from dbt.adapters.s3tables.sql.text import split_statements

if TYPE_CHECKING:
    from dbt.adapters.contracts.connection import Connection
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    from dbt.adapters.s3tables.catalogs.range_files import RangePlan
    from dbt.adapters.s3tables.engines.base import EngineSettings, EngineSetup
    from dbt.adapters.s3tables.seeds.csv import SeedText

logger = AdapterLogger("s3tables")

SERVER = "Spark Connect server"
RPC_RETRIES = 4
# pyspark 3.5's client tells the server in a background thread that it may drop a finished
# result, and warns (on stderr) when that fails because dbt closed the connection's channel
# first: harmless (the server drops abandoned results itself), so it goes to the log file.
# pyspark 4 logs it to its own Connect logger, off by default.
RELEASE_WARNING = "ReleaseExecute failed"
RELEASE_WARNING_FILE = os.path.join("pyspark", "sql", "connect", "client", "reattach.py")


# Iceberg's session setting whose suffix and value go into every commit's summary.
COMMIT_PROPERTY_CONF = "spark.sql.iceberg.snapshot-property."


def connect_url(host: str, port: int, token: str | None) -> str:
    """Spark Connect's connection string; a token makes the client use TLS (gRPC sends
    bearer tokens only over a secure channel)."""
    url = f"sc://{host}:{port}/"
    return f"{url};token={token}" if token else url


def connect_error_text(error: BaseException) -> str:
    """A Connect error's class and message (the server's exception class leads them)."""
    return f"{type(error).__name__}: {error}"


class ConnectEngine(SessionEngine):
    """The engine of one dbt connection on a Spark Connect server: a server session behind
    the same DB-API-like cursor as in-process (settings, query analysis, seeds' views,
    Python models' session all go through the DataFrame API)."""

    # The server's latest progress report of the running statement, and whether this
    # connection's session sends them here.
    _reported: SparkProgress | None = None
    _listening: bool = False

    def cancel(self) -> None:
        # Connect has no job groups: interrupt what this connection's session runs.
        self.spark.interruptAll()

    def close(self) -> None:
        try:
            self._range_reads.release_views()
        finally:
            super().close()
            # Spark 3.5 has no call to end a server session: closing the channel is all.
            self.spark.client.close()

    def engine_description(self) -> str:
        # Iceberg's version is a JVM call, which Connect does not offer.
        return f"Spark {self.spark.version} ({SERVER}), Iceberg's version not reported over Connect"

    def create_text_view(self, view_name: str, seed: SeedText) -> None:
        """The seed's text cells sent to the server (one Arrow transfer): its Parquet file
        is on this machine, which the server's need not be."""
        import pyarrow.parquet as pq

        # Declared, not inferred: a column of only empty cells has no type to infer.
        schema = ", ".join([*(f"c{i} string" for i in range(seed.width)), f"{ROW_COLUMN} bigint"])
        try:
            rows = pq.read_table(seed.parquet_path).to_pandas()
            self.spark.createDataFrame(rows, schema=schema).createOrReplaceTempView(view_name)
        except Exception as error:
            raise database_error(error) from None

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

    @cached_property
    def _range_reads(self) -> ServerRangeReader:
        return ServerRangeReader(self._server_statement, self._server_rows, self.settings)

    def _server_statement(self, sql: str) -> None:
        self._server_rows(sql)

    def _server_rows(self, sql: str) -> list[Any]:
        try:
            return list(self.spark.sql(sql).collect())
        except Exception as error:
            raise database_error(error) from None

    def query_inputs(self, sql: str) -> QueryInputs:
        return SERVER_QUERY_INPUTS

    def tag_node_commits(self, tags: dict[str, str]) -> bool:
        # commit_tags needs the server's JVM; Spark 4's Iceberg (1.11+) takes commit
        # properties from the session's conf instead, which Spark 3.5's does not read.
        if not self.server_tags_commits:
            return False
        return super().tag_node_commits(tags)

    @cached_property
    def server_tags_commits(self) -> bool:
        """Whether the server's Iceberg puts `COMMIT_PROPERTY_CONF` settings in commits."""
        return int(self.spark.version.split(".")[0]) >= 4

    @contextmanager
    def commit_properties(self, tags: dict[str, str]) -> Iterator[None]:
        """`tags` in the summary of the commits of the statements run inside: session
        settings, set for them and unset after (each dbt thread has its own session)."""
        for key, value in tags.items():
            self.spark.conf.set(COMMIT_PROPERTY_CONF + key, value)

        def unset() -> None:
            for key in tags:
                self.spark.conf.unset(COMMIT_PROPERTY_CONF + key)

        with cleaned_up_after(unset, "Unsetting the commits' tags"):
            yield

    def execute(self, sql: str, bindings: list[Any] | None = None) -> None:
        if bindings:
            raise DbtRuntimeError("s3tables runs plain SQL: query bindings are not supported")
        self._df = None
        self._rows = None
        # Commits carry only the node's own tags (see tag_node_commits), not the run's.
        tags = self.data_write_tags()
        for statement in split_statements(sql):
            try:
                with self.watched(), self.commit_properties(tags):
                    self._df = run_with_conflict_retries(
                        partial(self.spark.sql, statement),
                        connect_error_text,
                        self.retries,
                        statement,
                    )
            except Exception as error:
                raise database_error(error) from None

    def watched(self) -> Ticker:
        """Progress lines while a statement runs: the stages and tasks the server reports
        (Spark 4's servers send them; on 3.5 the line has the elapsed time only)."""
        node = node_label(self.node())
        self._reported = None
        if self.progress_seconds and not self._listening:
            register = getattr(self.spark, "registerProgressHandler", None)
            if register is not None:
                register(self._on_progress)
            self._listening = True
        return Ticker(
            self.progress_seconds,
            lambda elapsed: progress_line(node, elapsed, self._reported),
            what=f"a statement of {node}",
        )

    def _on_progress(
        self, stages: Any, inflight_tasks: int, operation_id: str | None, done: bool
    ) -> None:
        """pyspark's progress handler: the server's latest report of the running operation."""
        stages = list(stages or [])
        self._reported = SparkProgress(
            stages_done=sum(1 for stage in stages if stage.done),
            stages=len(stages),
            tasks_done=sum(stage.num_completed_tasks for stage in stages),
            tasks=sum(stage.num_tasks for stage in stages),
            bytes_read=sum(stage.num_bytes_read for stage in stages) or None,
        )


class ReleaseWarningRoute:
    """`warnings.showwarning` sending pyspark's release warnings to dbt's log file (debug
    level: the file, not the console) and every other warning where it went before."""

    def __init__(self, previous: Any) -> None:
        self.previous = previous

    def __call__(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if str(message).startswith(RELEASE_WARNING) and filename.endswith(RELEASE_WARNING_FILE):
            logger.debug(f"Spark Connect client (harmless): {message}")
        else:
            self.previous(message, category, filename, lineno, file, line)


def route_release_warnings() -> None:
    """Route pyspark's release warnings to the log file, once per process."""
    if not isinstance(warnings.showwarning, ReleaseWarningRoute):
        warnings.showwarning = ReleaseWarningRoute(warnings.showwarning)


def open_connect_session(settings: EngineSettings) -> ConnectSession:
    """A new server session, after checking (within the profile's retries) that the server
    answers: gRPC would otherwise retry for minutes before failing."""
    host, port = server_address(settings)
    wait_until_reachable(settings, SERVER)
    # pyspark checks its client's dependencies with `distutils.version`; setuptools' shim
    # of distutils imports all of setuptools and pkg_resources for it (0.3-0.7 s of every
    # run), the standard library's (Python < 3.12) does not.
    if sys.version_info < (3, 12):
        os.environ.setdefault("SETUPTOOLS_USE_DISTUTILS", "stdlib")
    # gRPC's C core logs each failed TLS handshake to the console; its errors reach the
    # user as the one message below.
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    route_release_warnings()
    from pyspark.sql.connect.session import SparkSession

    # Not `SparkSession.builder...create()`: it sends the builder's options to the server
    # before the retries can be bounded, and a server that never answers holds it there
    # for about ten minutes.
    session = SparkSession(connection=connect_url(host, port, settings.token))
    close_only_own_channel(session.client)
    bound_retries(session.client)
    try:
        _ = session.version  # the first call: it opens the channel
    except Exception as error:
        raise DbtRuntimeError(session_refused_message(host, port, settings.token, error)) from None
    return session


def close_only_own_channel(client: Any) -> None:
    """Make closing this client close its own channel only.

    pyspark's `close()`, called by `SparkSession.stop()` and by the session's `__del__`
    when it is collected, also shuts the process-wide pool that releases finished
    operations. That pool is shared by every dbt thread's session: the others then fail
    ("Pool not running"), or wait forever on a release that never runs.
    """

    def close() -> None:
        client._channel.close()
        client._closed = True

    client.close = close


def bound_retries(client: Any) -> None:
    """pyspark retries an unavailable server 15 times, backing off to a minute (about ten
    minutes in all); `RPC_RETRIES` ride out a blip in about 4 s, then the error says why."""
    if hasattr(client, "set_retry_policies"):  # pyspark 4
        from pyspark.sql.connect.client.retries import DefaultPolicy

        client.set_retry_policies([DefaultPolicy(max_retries=RPC_RETRIES)])
    else:
        client._retry_policy.update(max_retries=RPC_RETRIES)


def session_refused_message(host: str, port: int, token: str | None, error: Exception) -> str:
    """Why the server, which answers on its port, gave no session."""
    # pyspark passes on gRPC's error text: several lines, the reason on `details = "..."`.
    text = str(error).strip() or type(error).__name__
    details = re.search(r'details = "([^"]*)"', text)
    reason = details.group(1) if details else text.splitlines()[0]
    message = f"The {SERVER} at {host}:{port} accepted the connection but opened no session"
    if token:
        return (
            f"{message}: with a `token`, Spark Connect's client speaks TLS, and the server "
            f"did not ({reason}). Fix: remove `token` for a server without TLS (such as "
            "`dbt-s3tables-engine start connect`'s), or serve TLS in front of it"
        )
    return f"{message} ({reason}). Fix: check that the port is the Spark Connect server's"


def open_connect_engine(connection: Connection, setup: EngineSetup) -> ConnectEngine:
    """This connection's own session on the profile's Spark Connect server."""
    setup.refuse_declared_catalogs("connect", SERVER)
    # `setup.after_conflict` is not used: the server writes the files and may still be
    # writing a lost attempt's, so this process cannot remove them.
    session = open_connect_session(setup.settings)
    setup.apply_spark_conf(
        SERVER,
        session.conf.set,
        lambda key: session.conf.get(key, None),
        connect_error_text,
    )
    check_server_catalog(
        setup.catalog,
        server_address(setup.settings),
        SERVER,
        lambda key: session.conf.get(key, None),
    )
    return ConnectEngine(
        session,  # type: ignore[arg-type]  # Spark Connect's session, typed apart from pyspark's
        job_group=f"dbt:{connection.name}",
        retries=setup.conflict_retries,
        node=lambda: str(connection.name or ""),
        progress_seconds=setup.settings.progress_seconds,
    )


# `method: connect`: the profile's `token` is the server's bearer token (`connect_url`).
ENGINE_KIND = ServerEngineKind(open_connect_engine, default_port=15002, takes_token=True)
