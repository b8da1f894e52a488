"""The Spark Thrift Server path without a server: seed rows as SQL text, the reachability
check, and `ThriftEngine` over a fake PyHive connection whose cursors return canned
rows and record every statement."""

from __future__ import annotations

import itertools
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from dbt_common.exceptions import DbtDatabaseError, DbtRuntimeError
from pyspark.sql.types import (
    ArrayType,
    DecimalType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)
from TCLIService.ttypes import TOperationState

from dbt.adapters.s3tables.catalogs.config import ICEBERG_EXTENSIONS
from dbt.adapters.s3tables.engines.base import HASH_JOIN_SETTINGS, EngineSetup
from dbt.adapters.s3tables.engines.thrift import (
    SESSION_OPENING_SETTINGS,
    ThriftEngine,
    check_reachable,
    next_poll_pause,
    opening_with,
)
from dbt.adapters.s3tables.engines.write_conflicts import ConflictRetries
from dbt.adapters.s3tables.errors import StatementRefused
from dbt.adapters.s3tables.seeds.csv import read_seed_csv
from dbt.adapters.s3tables.seeds.values import text_rows_view_sql
from dbt.adapters.s3tables.sql.text import sql_string
from tests.unit.sleeps import recorded_sleeps

# --- sql_string ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        ("plain", "'plain'"),
        ("", "''"),
        ("it's", "'it\\'s'"),
        ("''", "'\\'\\''"),
        ("a\\b", "'a\\\\b'"),
        ("trailing\\", "'trailing\\\\'"),
        # A backslash before a quote: both escaped, the backslash first.
        ("\\'", "'\\\\\\''"),
        ('say "hi"', "'say \"hi\"'"),
        ("Zürich", "'Zürich'"),
        ("日本語 🎉", "'日本語 🎉'"),
        ("NULL", "'NULL'"),
        ("  spaced  ", "'  spaced  '"),
    ],
)
def test_sql_string(value: str, literal: str) -> None:
    assert sql_string(value) == literal


def test_sql_string_none_is_a_typed_null() -> None:
    assert sql_string(None) == "CAST(NULL AS STRING)"


def test_sql_string_escapes_are_reversible() -> None:
    """Undoing Spark's escapes on the literal's body gives the value back."""
    for value in ["a'b\\c", "\\\\''", "x\\'y", "ü'\\"]:
        literal = sql_string(value)
        assert literal.startswith("'") and literal.endswith("'")
        body = literal[1:-1]
        decoded, index = [], 0
        while index < len(body):
            char = body[index]
            if char == "\\":
                decoded.append(body[index + 1])
                index += 2
            else:
                assert char != "'", (value, literal)
                decoded.append(char)
                index += 1
        assert "".join(decoded) == value


# --- text_rows_view_sql --------------------------------------------------------------


def test_text_rows_view_sql_two_rows() -> None:
    sql = text_rows_view_sql("seed_view", [("1", "it's"), (None, "a\\b")], 2)
    assert sql == (
        "CREATE OR REPLACE TEMPORARY VIEW seed_view AS SELECT * FROM VALUES\n"
        "('1', 'it\\'s', 1),\n"
        "(CAST(NULL AS STRING), 'a\\\\b', 2)\n"
        "AS seed_rows(c0, c1, dbt_row)"
    )


def test_text_rows_view_sql_one_column_unicode() -> None:
    sql = text_rows_view_sql("v", [("Zürich",)], 1)
    assert sql == (
        "CREATE OR REPLACE TEMPORARY VIEW v AS SELECT * FROM VALUES\n('Zürich', 1)\n"
        "AS seed_rows(c0, dbt_row)"
    )


def test_text_rows_view_sql_empty_seed() -> None:
    sql = text_rows_view_sql("empty_view", [], 3)
    assert sql == (
        "CREATE OR REPLACE TEMPORARY VIEW empty_view AS SELECT "
        "CAST(NULL AS STRING) AS c0, CAST(NULL AS STRING) AS c1, CAST(NULL AS STRING) AS c2, "
        "CAST(NULL AS BIGINT) AS dbt_row WHERE false"
    )
    assert sql.count("AS c") == 3


# --- check_reachable -----------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_check_reachable_fails_fast_naming_host_and_port() -> None:
    port = free_port()
    start = time.monotonic()
    with pytest.raises(DbtRuntimeError) as raised:
        check_reachable("127.0.0.1", port, 5.0)
    elapsed = time.monotonic() - start
    # Refused at once, not after the 5 s timeout.
    assert elapsed < 2.0
    message = str(raised.value)
    assert f"127.0.0.1:{port}" in message
    assert "within 5 s" in message
    assert "Spark Thrift Server" in message
    assert "`host` / `port`" in message
    # `from None`: the OSError is in the message, not chained.
    assert raised.value.__cause__ is None
    assert raised.value.__suppress_context__ is True


def test_check_reachable_passes_for_a_listener() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        assert check_reachable("127.0.0.1", port, 2.0) is None
        # The check really connected (and closed its socket).
        server.settimeout(2.0)
        accepted, _ = server.accept()
        with accepted:
            accepted.settimeout(2.0)
            assert accepted.recv(1) == b""


# --- ThriftEngine over a fake PyHive connection ---------------------------------------

FINISHED = SimpleNamespace(operationState=TOperationState.FINISHED_STATE, errorMessage=None)


class FakeCursor:
    def __init__(self, connection: FakeConnection) -> None:
        self.connection = connection
        self.sql: str | None = None
        self.closed = False

    def execute(self, sql: str, bindings: Any = None, async_: bool = False) -> None:
        assert async_ is True
        assert bindings is None
        self.sql = sql
        self.connection.statements.append(sql)

    def poll(self) -> SimpleNamespace:
        assert self.sql is not None, "poll before execute"
        if self.connection.running_polls:
            held = self.connection.running_polls.pop(0)
            threading.Event().wait(held)  # the server holding the request (long polling)
            return SimpleNamespace(operationState=TOperationState.RUNNING_STATE, errorMessage=None)
        error = self.connection.errors.get(self.sql)
        if error:
            return SimpleNamespace(operationState=TOperationState.ERROR_STATE, errorMessage=error)
        return FINISHED

    def fetchall(self) -> list[tuple]:
        assert self.sql is not None, "fetchall before execute"
        self.connection.fetched.append(self.sql)
        return [tuple(row) for row in self.connection.answer(self.sql)]

    def cancel(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


class FakeConnection:
    """A PyHive connection: every `cursor()` is a new cursor; `answer` gives the rows of
    a statement."""

    def __init__(self, answer: Callable[[str], list[tuple]] | None = None) -> None:
        self.answer = answer or (lambda sql: [])
        self.statements: list[str] = []
        self.fetched: list[str] = []
        self.errors: dict[str, str] = {}
        self.cursors = 0
        # How long the server holds each status request that answers "running", in turn.
        self.running_polls: list[float] = []

    def cursor(self) -> FakeCursor:
        self.cursors += 1
        return FakeCursor(self)

    def close(self) -> None:
        pass


SERVERS = itertools.count()


def thrift_handle(
    connection: FakeConnection,
    opened_with: dict[str, str] | None = None,
    address: tuple[str, int] | None = None,
) -> ThriftEngine:
    """An engine of a server of its own (what a server answered is kept per process),
    unless `address` names another's, whose session opened with `opened_with`."""
    return ThriftEngine(
        connection,
        poll_interval=0,
        query_timeout=None,
        query_retries=0,
        retries=ConflictRetries(retries=0),
        address=address or ("server", next(SERVERS)),
        opened_with=opened_with or {},
    )


def settings_answer(current: dict[str, str]) -> Callable[[str], list[tuple]]:
    """Answers `SET k` as a Spark Thrift Server does: (key, value or `<undefined>`)."""

    def answer(sql: str) -> list[tuple]:
        if sql.startswith("SET ") and "=" not in sql:
            key = sql[len("SET ") :]
            return [(key, current.get(key, "<undefined>"))]
        raise AssertionError(f"unexpected fetch for {sql!r}")

    return answer


def test_the_next_status_request_follows_one_the_server_held_at_once() -> None:
    # Spark's Thrift Server holds a request up to 5 s (long polling): dbt-spark then
    # waited its poll_interval (5 s) more, so a statement of 6 s took 10.
    assert next_poll_pause(0.4, held=5.0, ceiling=5) == 0.0
    # A server answering at once is asked again after a pause doubling up to the ceiling.
    pauses = [0.0]
    for _ in range(9):
        pauses.append(next_poll_pause(pauses[-1], held=0.001, ceiling=5))
    assert pauses[1:] == [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5, 5]
    assert next_poll_pause(0.0, held=0.001, ceiling=0) == 0  # the profile asked for none


def test_a_running_statement_is_polled_without_dbt_spark_s_fixed_pause(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dbt.adapters.s3tables.engines import thrift

    monkeypatch.setattr(thrift, "POLL_HELD_SECONDS", 0.02)
    connection = FakeConnection()
    # Held twice (a statement longer than the hold), then answered at once twice.
    connection.running_polls = [0.05, 0.05, 0.0, 0.0]
    engine = thrift_handle(connection)
    engine.poll_interval = 5
    sleeps = recorded_sleeps(monkeypatch, thrift)
    engine.cursor().execute("select 1")
    assert sleeps == [0.05, 0.1]  # dbt-spark's: [5, 5, 5, 5]
    assert connection.statements == ["select 1"]


def test_a_statement_over_its_query_timeout_fails_while_it_runs() -> None:
    connection = FakeConnection()
    connection.running_polls = [0.02, 0.02]
    engine = thrift_handle(connection)
    engine.query_timeout = 0
    with pytest.raises(DbtRuntimeError, match="exceeded timeout of 0 seconds"):
        engine.cursor().execute("select 1")


def test_query_schema_from_describe_query() -> None:
    rows = [
        ("id", "int", None),
        ("total", "bigint", None),
        ("amount", "decimal(10,2)", None),
        ("name", "string", "a comment"),
        ("tags", "array<string>", None),
        ("attrs", "map<string,int>", None),
        ("loaded_at", "timestamp", None),
    ]
    connection = FakeConnection(lambda sql: rows)
    schema = thrift_handle(connection).query_schema("select * from t where x = 'a'")
    assert connection.statements == ["DESCRIBE QUERY select * from t where x = 'a'"]
    assert connection.fetched == connection.statements
    assert schema == StructType(
        [
            StructField("id", IntegerType()),
            StructField("total", LongType()),
            StructField("amount", DecimalType(10, 2)),
            StructField("name", StringType()),
            StructField("tags", ArrayType(StringType())),
            StructField("attrs", MapType(StringType(), IntegerType())),
            StructField("loaded_at", TimestampType()),
        ]
    )


def test_query_schema_of_no_columns() -> None:
    connection = FakeConnection(lambda sql: [])
    assert thrift_handle(connection).query_schema("select 1 where false") == StructType([])


def test_query_schema_unknown_type_names_the_column() -> None:
    connection = FakeConnection(lambda sql: [("id", "int", None), ("weird", "nope", None)])
    with pytest.raises(DbtRuntimeError) as raised:
        thrift_handle(connection).query_schema("select 1")
    assert "column `weird`" in str(raised.value)
    assert "nope" in str(raised.value)


def test_query_schema_server_error_is_raised() -> None:
    connection = FakeConnection()
    connection.errors["DESCRIBE QUERY select bad"] = "AnalysisException: no column bad"
    with pytest.raises(DbtDatabaseError) as raised:
        thrift_handle(connection).query_schema("select bad")
    assert "no column bad" in str(raised.value)
    assert connection.fetched == []


# What a Spark Thrift Server sends for a statement Spark refused: its message, the
# logical plan and the Java stack.
SERVER_ERROR = (
    "org.apache.hive.service.cli.HiveSQLException: Error running query: "
    "[TABLE_OR_VIEW_NOT_FOUND] org.apache.spark.sql.AnalysisException: "
    "[TABLE_OR_VIEW_NOT_FOUND] The table or view `s`.`gone` cannot be found.; line 1 pos 14;\n"
    "'Project [*]\n+- 'UnresolvedRelation [s, gone], [], false\n\n"
    "\tat org.apache.spark.sql.hive.thriftserver.HiveThriftServerErrors$.runningQueryError("
    "HiveThriftServerErrors.scala:46)\n"
    "\tat org.apache.spark.sql.SparkSession.sql(SparkSession.scala:713)\n\t... 16 more"
)


def test_a_failed_statement_shows_the_servers_message_without_plan_or_stack() -> None:
    connection = FakeConnection()
    connection.errors["select * from s.gone"] = SERVER_ERROR
    with pytest.raises(StatementRefused) as raised:  # Spark refused it: it never ran
        thrift_handle(connection).cursor().execute("select * from s.gone")
    message = str(raised.value.msg)
    assert message == (
        "[TABLE_OR_VIEW_NOT_FOUND] org.apache.spark.sql.AnalysisException: "
        "[TABLE_OR_VIEW_NOT_FOUND] The table or view `s`.`gone` cannot be found.; line 1 pos 14"
    )


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([("spark.sql.extensions", ICEBERG_EXTENSIONS)], True),
        ([("spark.sql.extensions", f"com.example.Other,{ICEBERG_EXTENSIONS}")], True),
        ([("spark.sql.extensions", "com.example.Other")], False),
        ([("spark.sql.extensions", "<undefined>")], False),
        ([], False),
    ],
)
def test_has_iceberg_extensions(rows: list[tuple], expected: bool) -> None:
    connection = FakeConnection(lambda sql: rows)
    assert thrift_handle(connection).has_iceberg_extensions() is expected
    assert connection.statements == ["SET spark.sql.extensions"]


def test_settings_set_then_reset_to_the_servers_default() -> None:
    """A session starts from the server's defaults (each dbt node opens its own): a key
    no statement of it set goes back with `RESET`, without reading it first."""
    key = "spark.sql.sources.partitionOverwriteMode"
    connection = FakeConnection(settings_answer({key: "STATIC"}))
    handle = thrift_handle(connection)
    with handle.settings({key: "dynamic"}):
        assert connection.statements == [f"SET {key}=dynamic"]
        handle._run("INSERT OVERWRITE t SELECT 1")
    assert connection.statements == [
        f"SET {key}=dynamic",
        "INSERT OVERWRITE t SELECT 1",
        f"RESET {key}",
    ]
    assert connection.fetched == []


def test_settings_restore_what_the_session_set_itself() -> None:
    """A key the session set (a model's sql_header, the profile's spark_conf) is read
    before the block and set back after it."""
    connection = FakeConnection(settings_answer({"a.one": "1", "c.three": "3"}))
    handle = thrift_handle(connection)
    handle.cursor().execute("SET a.one = 1; SELECT 1")
    handle.set_setting("c.three", "3")
    connection.statements.clear()
    with handle.settings({"a.one": "10", "b.two": "20", "c.three": "30"}):
        pass
    assert connection.statements == [
        "SET a.one",
        "SET c.three",
        "SET a.one=10",
        "SET b.two=20",
        "SET c.three=30",
        "SET a.one=1",
        "RESET b.two",
        "SET c.three=3",
    ]


def test_a_setting_the_session_opened_with_is_not_sent_again() -> None:
    """The keyed strategies' hash-join threshold travels in the session's opening request:
    a block asking for it at that value sends nothing; a block asking for another value
    sets it back to the opening value, not to the server's default."""
    key, other = "spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold", "b.two"
    connection = FakeConnection(settings_answer({key: "64MB"}))
    handle = thrift_handle(connection, opened_with={key: "64MB"})
    with handle.settings({key: "64MB", other: "2"}):
        handle._run("MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE")
    with handle.settings({key: "1MB"}):
        pass
    assert connection.statements == [
        f"SET {key}",  # the server applied it: asked once per dbt process and server
        f"SET {other}=2",
        "MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE",
        f"RESET {other}",
        f"SET {key}=1MB",
        f"SET {key}=64MB",
    ]


def test_a_server_that_ignores_the_opening_settings_gets_each_blocks_set_and_reset() -> None:
    key = "spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold"
    connection = FakeConnection(settings_answer({}))
    first = thrift_handle(connection, opened_with={key: "64MB"})
    # The next node's session on the same server: the answer is kept per dbt process.
    second = thrift_handle(connection, opened_with={key: "64MB"}, address=first.address)
    for handle in (first, second):
        with handle.settings({key: "64MB"}):
            pass
    assert connection.statements == [
        f"SET {key}",
        *[f"SET {key}=64MB", f"RESET {key}"] * 2,
    ]


def test_a_setting_the_session_opened_with_then_a_statement_changed_is_set_again() -> None:
    key = "spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold"
    connection = FakeConnection(settings_answer({key: "1MB"}))
    handle = thrift_handle(connection, opened_with={key: "64MB"})
    handle.cursor().execute(f"SET {key}=1MB")  # a model's sql_header
    connection.statements.clear()
    with handle.settings({key: "64MB"}):
        pass
    assert connection.statements == [f"SET {key}", f"SET {key}=64MB", f"SET {key}=1MB"]


def test_the_session_opens_with_its_settings_and_nothing_else_changes() -> None:
    """dbt-spark sends `server_side_parameters` in the OpenSession request: the opening
    copy carries the settings as `set:hiveconf:` keys; the connection dbt holds and its
    credentials stay as they were."""
    from dataclasses import dataclass, field

    @dataclass
    class Credentials:
        server_side_parameters: dict[str, str] = field(default_factory=dict)

    @dataclass
    class Connection:
        credentials: Credentials

    connection = Connection(Credentials())
    opening = opening_with(connection, {"a.key": "1"})  # type: ignore[arg-type]  # a stand-in
    assert opening.credentials.server_side_parameters == {"set:hiveconf:a.key": "1"}
    assert connection.credentials.server_side_parameters == {}
    assert dict(SESSION_OPENING_SETTINGS) == HASH_JOIN_SETTINGS


def test_settings_restored_when_the_block_fails() -> None:
    key = "spark.sql.sources.partitionOverwriteMode"
    connection = FakeConnection(settings_answer({key: "STATIC"}))
    handle = thrift_handle(connection)
    with pytest.raises(DbtDatabaseError, match="write failed"):
        with handle.settings({key: "dynamic"}):
            connection.errors["INSERT OVERWRITE t SELECT 1"] = "write failed"
            handle._run("INSERT OVERWRITE t SELECT 1")
    assert connection.statements == [
        f"SET {key}=dynamic",
        "INSERT OVERWRITE t SELECT 1",
        f"RESET {key}",
    ]


def test_settings_restored_when_the_block_raises_python_error() -> None:
    connection = FakeConnection(settings_answer({}))
    handle = thrift_handle(connection)
    with pytest.raises(ValueError, match="inside"):
        with handle.settings({"k.x": "v"}):
            raise ValueError("inside")
    assert connection.statements == ["SET k.x=v", "RESET k.x"]


def test_every_statement_gets_a_fresh_cursor() -> None:
    connection = FakeConnection(settings_answer({}))
    handle = thrift_handle(connection)
    with handle.settings({"k.x": "v"}):
        pass
    assert connection.cursors == len(connection.statements) == 2


def test_create_text_view_and_drop(tmp_path: Path) -> None:
    connection = FakeConnection()
    handle = thrift_handle(connection)
    path = tmp_path / "seed.csv"
    path.write_text("a,b\n1,\nit's,TRUE\n", encoding="utf-8")
    seed = read_seed_csv(str(path), ",", ["a"])
    handle.create_text_view("dbt_seed_rows_x", seed)
    seed.remove()
    handle.drop_temp_view("dbt_seed_rows_x")
    handle.execute("SELECT 1")
    assert connection.statements == [
        "CREATE OR REPLACE TEMPORARY VIEW dbt_seed_rows_x AS SELECT * FROM VALUES\n"
        "('1', CAST(NULL AS STRING), 1),\n"
        "('it\\'s', 'true', 2)\n"
        "AS seed_rows(c0, c1, dbt_row)",
        "DROP VIEW IF EXISTS dbt_seed_rows_x",
        "SELECT 1",
    ]
    assert connection.fetched == []


def test_a_dropped_view_goes_with_the_session_when_no_statement_follows() -> None:
    # Closing a server session drops its temporary views and their cache (Spark's Thrift
    # Server 3.5 and 4.1): a DROP VIEW at the end of a node would be a round trip for nothing.
    connection = FakeConnection()
    handle = thrift_handle(connection)
    handle.cursor().execute("CACHE LAZY TABLE `dbt_source_1` AS SELECT 1")
    handle.drop_temp_view("dbt_source_1")
    handle.close()
    assert connection.statements == ["CACHE LAZY TABLE `dbt_source_1` AS SELECT 1"]


def test_a_dropped_view_goes_before_the_cached_parts_it_may_be_made_from() -> None:
    # Uncaching a part makes Spark plan again a cached view made from it.
    connection = FakeConnection()
    handle = thrift_handle(connection)
    part = handle._range_reads.cached("SELECT 1")
    handle.drop_temp_view("dbt_source_1")
    handle.close()
    assert connection.statements == [
        f"CACHE TABLE {part} AS SELECT 1",
        "DROP VIEW IF EXISTS dbt_source_1",
        f"UNCACHE TABLE IF EXISTS {part}",
    ]


def test_engine_description_and_python_models_need_session() -> None:
    connection = FakeConnection(lambda sql: [("3.5.1 abc123",)])
    handle = thrift_handle(connection)
    assert handle.engine_description() == "Spark 3.5.1 abc123 (Spark Thrift Server)"
    assert connection.statements == ["SELECT version()"]
    with pytest.raises(DbtRuntimeError) as raised:
        handle.session("my_py_model")
    assert "my_py_model" in str(raised.value)
    assert "method: session" in str(raised.value)


def test_thrift_open_retries_reachability_then_names_host_and_port(monkeypatch) -> None:
    from types import SimpleNamespace

    from dbt_common.exceptions import DbtRuntimeError

    from dbt.adapters.s3tables.engines import thrift as module

    attempts: list[tuple[str, int, float]] = []

    def unreachable(host: str, port: int, timeout: float, server: str) -> None:
        attempts.append((host, port, timeout))
        raise DbtRuntimeError(f"Cannot reach the Spark Thrift Server at {host}:{port}")

    monkeypatch.setattr(module, "check_reachable", unreachable)
    sleeps = recorded_sleeps(monkeypatch, module)
    credentials = SimpleNamespace(host="10.0.0.9", port=10001, connect_timeout=4, connect_retries=2)
    with pytest.raises(DbtRuntimeError, match="10.0.0.9:10001"):
        module.open_thrift_engine(
            SimpleNamespace(),
            EngineSetup(credentials, None, ConflictRetries(), lambda _: None),  # type: ignore[arg-type]
        )
    assert attempts == [("10.0.0.9", 10001, 4)] * 3
    assert sleeps == [4, 4]


def test_iceberg_extensions_are_asked_once_per_server() -> None:
    """Static settings of a server: one question per dbt process, whichever session (each
    node opens its own) asks."""
    connection = FakeConnection(lambda sql: [("spark.sql.extensions", ICEBERG_EXTENSIONS)])
    handle = thrift_handle(connection)
    again = ThriftEngine(
        connection,
        poll_interval=0,
        query_timeout=None,
        query_retries=0,
        retries=ConflictRetries(retries=0),
        address=handle.address,
    )
    assert handle.has_iceberg_extensions() and again.has_iceberg_extensions()
    assert connection.statements == ["SET spark.sql.extensions"]
