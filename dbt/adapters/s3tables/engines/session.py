"""`method: session`: SQL runs in this process's own SparkSession (a local JVM).

Every dbt connection gets its own session over the process's one SparkContext
(`spark_session.py` starts it), so settings and temporary views stay with the connection;
a session a closed connection gives back is lent to a later one (`session_pool.py`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import SparkConnectionWrapper
from dbt_common.exceptions import DbtRuntimeError
from dbt_common.invocation import get_invocation_id
from py4j.protocol import Py4JJavaError

from dbt.adapters.s3tables.catalogs.config import ICEBERG_EXTENSIONS
from dbt.adapters.s3tables.catalogs.snapshots import INVOCATION_KEY, NODE_KEY
from dbt.adapters.s3tables.engines.base import EngineKind
from dbt.adapters.s3tables.engines.commit_tags import run_tagged
from dbt.adapters.s3tables.engines.file_changes import (
    RangeFiles,
    changed_rows_views,
    release,
)
from dbt.adapters.s3tables.engines.jvm_log import jvm_post_mortem
from dbt.adapters.s3tables.engines.progress import (
    DEFAULT_PROGRESS_SECONDS,
    JobReading,
    SparkProgress,
    StageReading,
    Ticker,
    node_label,
    progress_line,
    summarise,
)
from dbt.adapters.s3tables.engines.query_inputs import QueryInputs, read_query_inputs
from dbt.adapters.s3tables.engines.session_pool import SESSIONS, Lent
from dbt.adapters.s3tables.engines.spark_errors import (
    database_error,
    is_jvm_stopped,
    java_error_text,
    jvm_stopped_message,
    silence_pyspark_error_logs,
)
from dbt.adapters.s3tables.engines.spark_session import get_or_create_session
from dbt.adapters.s3tables.engines.write_conflicts import ConflictRetries, run_with_conflict_retries
from dbt.adapters.s3tables.errors import cleaned_up_after
from dbt.adapters.s3tables.sql.text import split_statements
from dbt.adapters.s3tables.sql.types import session_wall_time, time_zone

if TYPE_CHECKING:
    from dbt.adapters.contracts.connection import Connection
    from pyspark.sql import DataFrame, Row, SparkSession
    from pyspark.sql.types import StructType

    from dbt.adapters.s3tables.catalogs.range_files import RangePlan
    from dbt.adapters.s3tables.engines.base import EngineSetup
    from dbt.adapters.s3tables.seeds.csv import SeedText

logger = AdapterLogger("s3tables")


class SessionEngine(SparkConnectionWrapper):
    """The engine of one dbt connection: `SparkSession.sql` behind a DB-API-like cursor.

    Each statement of a dbt connection tags its Spark jobs with a job group of its own
    (the connection's name and the statement's number), so that a cancel (Ctrl-C) stops
    exactly that connection's work and the progress lines read only that statement's jobs
    (one group per connection would make every statement list every job the connection
    ever ran, one py4j round trip each, growing for as long as the process lives).
    """

    def __init__(
        self,
        spark: SparkSession,
        job_group: str,
        lent: Lent | None = None,
        retries: ConflictRetries | None = None,
        after_conflict: Callable[[float], object] | None = None,
        node: Callable[[], str] = lambda: "",
        progress_seconds: float = DEFAULT_PROGRESS_SECONDS,
    ) -> None:
        self.spark = spark
        self.job_group = job_group
        # The pool's loan of `spark`, given back when the connection closes.
        self._lent = lent
        self._statement_numbers = itertools.count(1)
        # The job group of the statement running (or last run) on this connection.
        self._statement_group = job_group
        # A progress line this often while a statement runs (0: never).
        self.progress_seconds = progress_seconds
        # The dbt node this connection runs now (dbt renames a connection per node).
        self.node = node
        self.retries = retries or ConflictRetries()
        # An attempt that lost to a concurrent commit may leave files (a replace's
        # data and manifests): removed, or listed for later, before the next attempt.
        self.after_conflict = after_conflict
        self._df: DataFrame | None = None
        self._rows: list[Row] | None = None
        # The node whose data writes carry more tags, and those tags (`tag_node_commits`);
        # whether the next statement is its data write (`tag_next_write`).
        self._node_tags: tuple[str, dict[str, str]] = ("", {})
        self._next_is_data_write = False
        # File-level reads (their staged scan tasks, cached rows), released with the
        # connection.
        self._file_reads: list[tuple[str, RangeFiles]] = []
        silence_pyspark_error_logs()

    def cursor(self) -> SessionEngine:
        self._df = None
        self._rows = None
        return self

    def cancel(self) -> None:
        self.spark.sparkContext.cancelJobGroup(self._statement_group)

    def close(self) -> None:
        self._df = None
        self._rows = None
        reads, self._file_reads = self._file_reads, []
        for table, read in reads:
            release(self.spark, table, read)
        lent, self._lent = self._lent, None
        if lent is not None:
            SESSIONS.give_back(lent)

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

        def restore() -> None:
            for key, earlier in previous.items():
                if earlier is None:
                    self.spark.conf.unset(key)
                else:
                    self.spark.conf.set(key, earlier)

        with cleaned_up_after(restore, f"Setting {', '.join(previous)} back"):
            yield

    def query_schema(self, sql: str) -> StructType:
        """Output schema of a query; Spark analyses it without running it."""
        try:
            return self.spark.sql(sql).schema
        except Exception as error:
            raise database_error(error) from None

    def query_inputs(self, sql: str) -> QueryInputs:
        try:
            return read_query_inputs(self.spark, sql)
        except Exception as error:
            raise database_error(error) from None

    def create_text_view(self, view_name: str, seed: SeedText) -> None:
        """A temporary view over the seed's Parquet file of text cells: Spark reads it in
        its own JVM, no row passes through Python."""
        try:
            self.spark.read.parquet(seed.parquet_path).createOrReplaceTempView(view_name)
        except Exception as error:
            raise database_error(error) from None

    def drop_temp_view(self, view_name: str) -> None:
        self.spark.catalog.dropTempView(view_name)

    def create_appended_rows_view(
        self, view_name: str, table: str, start: int, end: int, planned: Callable[[], RangePlan]
    ) -> None:
        # Spark SQL has no syntax for the incremental scan's options: the reader has (so
        # the range needs no plan of its files here).
        try:
            # `table()`, not `format("iceberg").load()`: the source would look the catalog
            # up in the thread's active session, which need not be this one.
            reader = self.spark.read.option("start-snapshot-id", str(start))
            reader = reader.option("end-snapshot-id", str(end))
            reader.table(table).createOrReplaceTempView(view_name)
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
        # Spark in this process plans and stages Iceberg's scan tasks itself.
        try:
            read = changed_rows_views(self.spark, table, start, end, columns, keys)
        except Exception as error:
            raise database_error(error) from None
        self._file_reads.append((table, read))
        return read

    def tag_node_commits(self, tags: dict[str, str]) -> bool:
        node, earlier = self._node_tags
        kept = earlier if node == self.node() else {}
        self._node_tags = (self.node(), {**kept, **tags})
        return True

    def tag_next_write(self) -> None:
        self._next_is_data_write = True

    def data_write_tags(self) -> dict[str, str]:
        """The node's own tags when this statement is its data write (announced by
        `tag_next_write`, and taken by this statement alone), else none: a hook's commit
        on the same table must not record what the node's write has not written yet."""
        data_write, self._next_is_data_write = self._next_is_data_write, False
        tagged_node, node_tags = self._node_tags
        return dict(node_tags) if data_write and tagged_node == self.node() else {}

    def session(self, model_name: str) -> SparkSession:
        """The SparkSession Python models run in."""
        return self.spark

    def engine_description(self) -> str:
        jvm: Any = self.spark._jvm  # py4j's view of the JVM
        iceberg = jvm.org.apache.iceberg.IcebergBuild.version()
        master = self.spark.sparkContext.master
        return f"Spark {self.spark.version} (in process, master {master}), Iceberg {iceberg}"

    def execute(self, sql: str, bindings: list[Any] | None = None) -> None:
        if bindings:
            raise DbtRuntimeError("s3tables runs plain SQL: query bindings are not supported")
        self._df = None
        self._rows = None
        # A model's sql_header (`SET ...;`) arrives in front of its statement.
        # Every commit carries the run and node (see commit_tags), and the node's own tags.
        tags = {
            **self.data_write_tags(),
            INVOCATION_KEY: get_invocation_id(),
            NODE_KEY: self.node(),
        }
        for statement in split_statements(sql):
            self._statement_group = f"{self.job_group}#{next(self._statement_numbers)}"
            self.spark.sparkContext.setJobGroup(
                self._statement_group, statement[:120], interruptOnCancel=True
            )
            try:
                with self.watched():
                    self._df = run_with_conflict_retries(
                        partial(run_tagged, self.spark, tags, partial(self.spark.sql, statement)),
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
                with self.watched():  # a query's jobs run here
                    rows = self._df.collect()
            except Exception as error:
                raise database_error(error) from None
            self._rows = self._in_session_time(rows)
        return self._rows

    def watched(self) -> Ticker:
        """Progress lines while the statement runs (or its rows are collected): what Spark
        reports of the jobs of its job group."""
        if not self.progress_seconds:
            return Ticker(0, str)
        node = node_label(self.node())

        def line(elapsed: float) -> str:
            try:
                progress = self.progress()
            except Exception as error:
                # The JVM failing the statement: its own error follows; the line keeps
                # the elapsed time.
                logger.debug(f"progress of {node} not read: {error}")
                progress = None
            return progress_line(node, elapsed, progress)

        return Ticker(self.progress_seconds, line, what=f"a statement of {node}")

    def progress(self) -> SparkProgress | None:
        """The jobs of the running statement's job group (Spark's status tracker) and
        their stages as the JVM's status store has them (the tracker's Python view
        has neither a stage's status nor what it read); None before the first job starts."""
        tracker = self.spark.sparkContext.statusTracker()
        store: Any = self.spark.sparkContext._jsc.sc().statusStore()
        readings = []
        for job_id in tracker.getJobIdsForGroup(self._statement_group):
            job = tracker.getJobInfo(job_id)
            if job is None:
                continue
            stages = []
            for stage_id in job.stageIds:
                try:
                    data = store.lastStageAttempt(stage_id)
                except Py4JJavaError:  # not submitted yet: not in the store
                    stages.append(StageReading("PENDING", 0, 0, 0, 0))
                    continue
                stages.append(
                    StageReading(
                        str(data.status().toString()),
                        int(data.numTasks()),
                        int(data.numCompleteTasks()),
                        int(data.inputRecords()),
                        int(data.inputBytes()),
                    )
                )
            readings.append(JobReading(str(job.status), tuple(stages)))
        return summarise(readings)

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
            cells = list(values)
            for index in timestamps:
                cells[index] = session_wall_time(cells[index], zone)
            converted.append(row(*cells))
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


def open_session_engine(connection: Connection, setup: EngineSetup) -> SessionEngine:
    """This connection's own session over the process's SparkSession, which starts with
    the profile's catalog if it is not running yet."""
    settings = setup.settings
    try:
        # `spark_ui`: Spark's UI on (the adapter turns it off; a user's setting wins).
        ui = {"spark.ui.enabled": "true"} if settings.spark_ui else {}
        spark = get_or_create_session(
            setup.catalog,
            settings.master,
            {**ui, **settings.spark_conf},
            settings.jar_sources,
            setup.other_catalogs,
            class_data_sharing=settings.class_data_sharing,
        )
        # Each connection (one per dbt thread) gets its own session over the shared
        # SparkContext: SQL settings and temporary views never leak between models
        # that run at the same time.
        lent = SESSIONS.lend(spark)
    except Exception as error:
        if is_jvm_stopped(error):  # it died during an earlier statement
            raise DbtRuntimeError(jvm_stopped_message(*jvm_post_mortem())) from None
        raise
    return SessionEngine(
        lent.session,
        job_group=f"dbt:{connection.name}",
        lent=lent,
        retries=setup.conflict_retries,
        after_conflict=setup.after_conflict,
        node=lambda: str(connection.name or ""),
        progress_seconds=setup.settings.progress_seconds,
    )


# `method: session`: Spark in this process takes every profile key.
ENGINE_KIND = EngineKind(open_session_engine, writes_from_this_process=True)
