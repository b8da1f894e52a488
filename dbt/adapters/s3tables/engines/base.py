"""The engine interface: what the adapter and dbt need from the Spark that runs the SQL,
and what an engine is opened with.

An engine is the handle of one dbt connection (one per dbt thread). dbt drives it as a
DB-API connection that is its own cursor, as dbt-spark's connection wrappers are; the
adapter adds query analysis, scoped settings, seeds' temporary views and Python models'
session.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from dbt.adapters.s3tables.catalogs.config import is_secret
from dbt.adapters.s3tables.catalogs.jars import JarSources
from dbt.adapters.s3tables.engines.progress import DEFAULT_PROGRESS_SECONDS
from dbt.adapters.s3tables.errors import ProfileError

if TYPE_CHECKING:
    from dbt.adapters.contracts.connection import Connection
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

    from dbt.adapters.s3tables.catalogs.config import CatalogConfig
    from dbt.adapters.s3tables.catalogs.range_files import RangePlan
    from dbt.adapters.s3tables.engines.file_changes import RangeFiles
    from dbt.adapters.s3tables.engines.query_inputs import QueryInputs
    from dbt.adapters.s3tables.engines.write_conflicts import ConflictRetries
    from dbt.adapters.s3tables.seeds.csv import SeedText

# What Spark answers a session's SET of a key it reads only at launch (a static SQL config,
# or a Spark core config such as `spark.executor.memory`).
LAUNCH_ONLY_REFUSAL = "Cannot modify the value of"

# A keyed statement's rows are most often far fewer than its table's. Once every
# post-shuffle partition of a join's smaller side is under this size, Spark's adaptive
# execution builds a hash table of that side instead of sorting both (the table's rows
# too): a warm 1% MERGE into 1M rows took 0.1-0.25 s less. Sizes are measured as the
# statement runs, so a large side is still sorted. Spark takes the setting from its
# advisory partition size (64 MB) up, so it is that size. The keyed strategies run their
# statement under it (strategies.py); a Thrift server session opens with it (thrift.py).
HASH_JOIN_SETTINGS = {"spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold": "64MB"}
# A DB-API column description: name, type name, four unused fields, nullability.
ColumnDescription = tuple[str, Any, int | None, int | None, int | None, int | None, bool]


class Engine(Protocol):
    """One dbt connection's engine: where its SQL runs."""

    def cursor(self) -> Engine:
        """Ready for the next statement, dropping the last one's results; dbt runs the
        statement on what this returns (the engines here return themselves)."""
        ...

    def execute(self, sql: str, bindings: list[Any] | None = None) -> None:
        """Run `sql`: one statement, or a model's `sql_header` statements in front of it;
        a statement that lost a write conflict is re-run within the profile's retries."""
        ...

    def fetchall(self) -> list[Any] | None:
        """The rows of the last statement (None when there is none)."""
        ...

    def fetchone(self) -> Any:
        """The next row of the last statement, or None."""
        ...

    @property
    def description(self) -> Sequence[ColumnDescription]:
        """The columns of the last statement's result."""
        ...

    def cancel(self) -> None:
        """Stop what this connection is running (Ctrl-C), and nothing else."""
        ...

    def close(self) -> None:
        """Release this connection's resources."""
        ...

    def rollback(self) -> None:
        """Nothing to undo: Spark has no transactions and each statement is atomic."""
        ...

    def query_schema(self, sql: str) -> StructType:
        """Output schema of a query, analysed without running it."""
        ...

    def query_inputs(self, sql: str) -> QueryInputs:
        """What a query's rows depend on, as Spark analyses it (engines/query_inputs.py);
        an engine that cannot say answers why in `unfixed`."""
        ...

    def settings(self, values: dict[str, str]) -> AbstractContextManager[None]:
        """SQL settings of this connection for one block, restored (or unset) after it."""
        ...

    def has_iceberg_extensions(self) -> bool:
        """Whether Iceberg's SQL extensions (MERGE INTO and row-level writes) are on."""
        ...

    def create_appended_rows_view(
        self, view_name: str, table: str, start: int, end: int, planned: Callable[[], RangePlan]
    ) -> None:
        """A temporary view of the rows `table` (an Iceberg table's SQL name) appended by
        its commits after snapshot `start` up to snapshot `end`: Iceberg's incremental
        append scan, which reads only those commits' data files; or, for an engine that
        reads files through SQL only, the files `planned` (catalogs/range_files.py) says
        the range added, less the rows of those it removed (a compaction)."""
        ...

    def create_changed_rows_views(
        self,
        table: str,
        start: int,
        end: int,
        columns: Sequence[str],
        keys: Sequence[str],
        planned: Callable[[], RangePlan],
    ) -> RangeFiles:
        """The rows of `table` (an Iceberg table's SQL name) that its commits after snapshot
        `start` up to `end` changed, at each end, with every other row of their `keys`
        (engines/file_changes.py); or why this engine cannot read them file by file
        (`fallback`), so the two snapshots are compared whole. `planned`: the range's files
        planned on dbt's host (catalogs/range_files.py), for an engine that reads files
        through SQL only."""
        ...

    def tag_node_commits(self, tags: dict[str, str]) -> bool:
        """Put `tags` in the snapshot summary of the Iceberg commits of the node running
        now's data writes on this connection (beside the run's own tags, which every
        commit carries): each statement `tag_next_write` announces, never a hook's; False
        where this engine cannot tag a commit."""
        ...

    def tag_next_write(self) -> None:
        """The next statement this connection runs is the running node's data write: its
        commits carry the node's tags (`tag_node_commits`)."""
        ...

    def create_text_view(self, view_name: str, seed: SeedText) -> None:
        """A temporary view of a seed's cells: text columns `c0..c{width-1}` and the row's
        number (`seeds.ROW_COLUMN`), for the seed's load query to cast; `seed` has them
        in a local Parquet file (`parquet_path`) and as Arrow batches (`batches()`)."""
        ...

    def drop_temp_view(self, view_name: str) -> None:
        """Drop a temporary view of this connection, with its cache: now, or before the
        connection's next statement or with its server session (thrift)."""
        ...

    def session(self, model_name: str) -> SparkSession:
        """The SparkSession Python model `model_name` runs in, or a runtime error saying
        why this engine cannot run Python models."""
        ...

    def engine_description(self) -> str:
        """Spark's and Iceberg's versions and where Spark runs, for `dbt debug`."""
        ...


@dataclass(frozen=True)
class EngineSettings:
    """The profile keys engines read, taken from the profile once: engines never see the
    profile class (it sits above them)."""

    method: str
    # session: Spark's master; the driver's jars and whether it maps a class archive.
    master: str
    spark_conf: Mapping[str, str]
    jar_sources: JarSources
    class_data_sharing: bool
    # A progress line this often while a statement runs (0: never); session: Spark's UI on.
    progress_seconds: float = DEFAULT_PROGRESS_SECONDS
    spark_ui: bool = False
    # thrift and connect: where the server listens, how long to wait for it, its token.
    host: str | None = None
    port: int | None = None
    # Never in a repr: a dataclass's repr can reach a log or an error message.
    token: str | None = field(default=None, repr=False)
    connect_retries: int = 0
    connect_timeout: int = 10


def server_address(settings: EngineSettings) -> tuple[str, int]:
    """A server method's host and port (the profile requires the host and fills the port)."""
    if not settings.host or settings.port is None:
        from dbt_common.exceptions import DbtRuntimeError

        raise DbtRuntimeError(
            f"s3tables profile key `host`: `method: {settings.method}` needs the server's host "
            "and port. Fix: set `host` (and `port`, if not the default) in the profile"
        )
    return str(settings.host), int(settings.port)


@dataclass(frozen=True)
class EngineSetup:
    """What the connection manager opens every engine with."""

    settings: EngineSettings
    catalog: CatalogConfig
    conflict_retries: ConflictRetries
    # Removes (or lists) what an attempt that lost a write conflict left, given the
    # attempt's start time, before it is re-run.
    after_conflict: Callable[[float], object]
    # The catalogs catalogs.yml declares, beside `catalog` (Spark's default).
    other_catalogs: tuple[CatalogConfig, ...] = ()

    def refuse_declared_catalogs(self, method: str, server: str) -> None:
        """A server's catalogs and jars are fixed where it starts (and secrets must not
        travel in SET statements): catalogs.yml cannot add any."""
        if self.other_catalogs:
            from dbt_common.exceptions import DbtRuntimeError

            names = ", ".join(f"`{c.name}`" for c in self.other_catalogs)
            raise DbtRuntimeError(
                f"catalogs.yml declares {names}, but `method: {method}` uses the catalogs the "
                f"{server} was started with. Fix: use `method: session` for this project, or "
                "remove catalogs.yml"
            )

    def apply_spark_conf(
        self,
        server: str,
        set_one: Callable[[str, str], None],
        current: Callable[[str], str | None],
        error_text: Callable[[Exception], str],
    ) -> None:
        """Give a server session the profile's `spark_conf` (the profile refuses secret keys
        for server methods), `set_one` key at a time. Spark refuses keys it reads only
        when it starts; one the server already has at the asked value is in effect, the
        others fail the connection in one sentence naming them."""
        refused = []
        for key, value in self.settings.spark_conf.items():
            try:
                set_one(key, value)
            except Exception as error:
                if LAUNCH_ONLY_REFUSAL not in error_text(error):
                    raise
                if current(key) != value:
                    refused.append(key)
        if refused:
            from dbt_common.exceptions import DbtRuntimeError

            names = ", ".join(f"`{key}`" for key in refused)
            them = "it" if len(refused) == 1 else "them"
            raise DbtRuntimeError(
                f"The {server} refused `spark_conf` {names}: Spark reads {them} only when it "
                f"starts, and a session cannot change that. Fix: set {them} where the server "
                f"starts (its `--conf` options or spark-defaults.conf) and remove {them} from "
                "`spark_conf`"
            )


class EngineOpener(Protocol):
    """Opens the engine of one dbt connection."""

    def __call__(self, connection: Connection, setup: EngineSetup) -> Engine: ...


class EngineKeys(Protocol):
    """The profile keys an engine checks, as the profile class has them (it sits above the
    engines, so they are typed against this)."""

    @property
    def method(self) -> str: ...

    @property
    def host(self) -> str | None: ...

    # Filled by a server engine: its default port; `dbt` as the user.
    port: int | None
    user: str | None

    @property
    def token(self) -> str | None: ...

    @property
    def connect_timeout(self) -> int: ...

    @property
    def spark_ui(self) -> bool: ...


@dataclass(frozen=True)
class EngineKind:
    """The engine of one profile `method`: how it opens, and which profile keys it takes.
    Each engine module declares its own (`ENGINE_KIND`); the registry finds it by
    `method`."""

    open: EngineOpener
    # Whether its Spark writes the warehouse's files from this process: only then does
    # the process hold an embedded warehouse (no other process removes files it may be
    # writing) and sweep what earlier failed writes left there.
    writes_from_this_process: bool

    def check_profile(self, keys: EngineKeys) -> None:
        """Raise ProfileError, naming the key and the fix, for a key this engine cannot
        use; fill the keys it derives from the others. Spark in this process takes every
        key."""
        return None

    def check_spark_conf(self, method: str, spark_conf: Mapping[str, str]) -> None:
        """Raise ProfileError for a `spark_conf` key (already checked to be a Spark setting)
        this engine cannot be given."""
        return None


@dataclass(frozen=True, kw_only=True)
class ServerEngineKind(EngineKind):
    """An engine that connects to a Spark server: the profile says where it listens and who
    connects, and Spark runs none of this process's settings itself."""

    writes_from_this_process: bool = False
    # The profile's `port` when it sets none, and where `dbt-s3tables-engine start` runs it.
    default_port: int
    # The profile's `token` is the server's bearer token (an empty one is a mistake).
    takes_token: bool = False

    def check_profile(self, keys: EngineKeys) -> None:
        if not keys.host:
            raise ProfileError(
                "host",
                f"is required for method {keys.method}",
                "set it to the server's host name, e.g. `127.0.0.1`",
            )
        if keys.port is None:
            keys.port = self.default_port
        if not isinstance(keys.port, int) or keys.port <= 0:
            raise ProfileError(
                "port", f"`{keys.port}` is not a port number", f"omit it for {self.default_port}"
            )
        if self.takes_token and keys.token is not None and not str(keys.token).strip():
            raise ProfileError("token", "is empty", "remove it, or give the server's token")
        keys.user = keys.user or "dbt"
        if keys.connect_timeout <= 0:
            raise ProfileError(
                "connect_timeout", "must be a positive number of seconds", "omit it for 10"
            )
        if keys.spark_ui:
            raise ProfileError(
                "spark_ui",
                f"turns on the UI of Spark in this process, and `method: {keys.method}` runs "
                "none here: the server's UI is set where the server starts",
                "remove `spark_ui`",
            )

    def check_spark_conf(self, method: str, spark_conf: Mapping[str, str]) -> None:
        """The engine gives `spark_conf` to its server session as `SET` statements, which the
        server logs: a secret must be configured on the server instead."""
        secrets = [key for key in spark_conf if is_secret(key)]
        if secrets:
            others = f" (and {', '.join(f'`{k}`' for k in secrets[1:])})" if secrets[1:] else ""
            raise ProfileError(
                f"spark_conf.{secrets[0]}",
                f"names a secret{others}, which `method: {method}` could only send to the "
                "server in a SET statement its logs record",
                "configure it where the server starts (its spark-defaults.conf or `--conf`) "
                "and remove it from `spark_conf`",
            )
