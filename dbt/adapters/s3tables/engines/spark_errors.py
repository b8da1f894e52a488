"""Spark and Iceberg errors as one readable message for the person running dbt.

A failed statement becomes a `DbtDatabaseError` whose text is the root cause's error
class and message: no Java stack, no logical plan, only the lines of the SQL around the
position a parse error points at. The full trace goes to the debug log (`logs/dbt.log`).
The text functions are pure; `database_error` reads the JVM exception chain.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtDatabaseError, DbtRuntimeError

from dbt.adapters.s3tables.engines.jvm_log import jvm_post_mortem
from dbt.adapters.s3tables.engines.write_conflicts import is_write_conflict
from dbt.adapters.s3tables.errors import ProfileError, StatementRefused

logger = AdapterLogger("s3tables")

COMMIT_CONFLICT = (
    "Iceberg commit conflict: another writer (another job, or S3 Tables' automatic "
    "compaction) committed to the table first, and re-running the statement "
    "(`write_conflict_retries` in the profile) did not get past it. Nothing of this "
    "statement was committed: the table is unchanged. Fix: rerun when the other writer has "
    "finished, or raise `write_conflict_retries`."
)
CREATED_BY_ANOTHER_RUN = (
    "The table was created by another run after this one checked that it did not exist. "
    "Nothing of this statement was written; the other run's table is intact. Fix: rerun "
    "(an incremental model then runs incrementally)."
)
# Errors that prove another writer was at work on the table: its files, not committed yet
# when this statement failed, look like this statement's leftovers.
ANOTHER_WRITER = (COMMIT_CONFLICT, CREATED_BY_ANOTHER_RUN)
COMMIT_STATE_UNKNOWN = (
    "Iceberg could not tell whether the commit landed (the catalog did not answer in "
    "time). Check the table's latest snapshot before rerunning."
)


@dataclass(frozen=True)
class Explanation:
    """What a person must know about an error whose text matches `pattern`."""

    pattern: re.Pattern[str]
    text: str


# First match wins. Each says what happened to the data, and what to do.
EXPLANATIONS = (
    Explanation(re.compile(r"CommitStateUnknownException"), COMMIT_STATE_UNKNOWN),
    Explanation(
        re.compile(r"OutOfMemoryError|Java heap space|GC overhead limit exceeded"),
        "Spark ran out of memory. Nothing of this statement was committed. Fix: raise "
        "`spark.driver.memory` under `spark_conf` in the profile (Spark's default is 1g), "
        "or make the model handle less data at once.",
    ),
    Explanation(
        re.compile(r"No space left on device|Disk quota exceeded", re.IGNORECASE),
        "The disk is full. Nothing of this statement was committed. Fix: free space on the "
        "disk holding the warehouse (and Spark's scratch folder, `spark.local.dir`), then rerun.",
    ),
    Explanation(
        re.compile(r"SQLITE_BUSY|database is locked"),
        "The embedded catalog file stayed locked by another process longer than "
        "`catalog_lock_timeout`. Nothing of this statement was committed. Fix: let the other "
        "dbt or Spark process finish, or raise `catalog_lock_timeout` in the profile.",
    ),
    Explanation(
        re.compile(r"File name too long"),
        "A table, column or partition name is too long for the file system holding the "
        "warehouse (folder names are limited to 255 bytes). Nothing was committed. Fix: choose "
        "a shorter alias, schema or partition value.",
    ),
    Explanation(
        re.compile(r"Mkdirs failed|Permission denied|Read-only file system|AccessDenied"),
        "Spark cannot write into the warehouse (a read-only or protected folder, or storage "
        "that denies access). Nothing of this statement was committed. Fix: make the warehouse "
        "writable for this user (on S3: the role's permissions), or point `warehouse` at one "
        "that is.",
    ),
    Explanation(
        re.compile(r"AlreadyExistsException: Table already exists|TABLE_OR_VIEW_ALREADY_EXISTS"),
        CREATED_BY_ANOTHER_RUN,
    ),
    Explanation(
        re.compile(
            r"(FileNotFoundException|NotFoundException|does not exist)[^\n]*"
            r"\.(parquet|avro|orc)\b"
        ),
        "A data file the table references is missing from storage (deleted or moved outside "
        "Iceberg). Nothing of this statement was committed. Fix: restore the file from a "
        "backup, or roll the table back to a snapshot that does not reference it (`CALL "
        "<catalog>.system.rollback_to_snapshot('<schema>.<table>', <snapshot id>)`).",
    ),
)


def lost_to_another_writer(message: str) -> bool:
    """Whether a failed statement's (explained) error proves another writer was at work
    on its table."""
    return any(explanation in message for explanation in ANOTHER_WRITER)


# What Python sees when the JVM it drives has died (py4j's socket is gone).
_JVM_STOPPED = re.compile(
    r"Connection refused|SparkContext was shut down|stopped SparkContext|"
    r"Answer from Java side is empty|Error while sending or receiving|Py4JNetworkError"
)
# The JVM's exit codes after an OutOfMemoryError: HotSpot's -XX:+ExitOnOutOfMemoryError
# (set by the adapter), and Spark's own (SparkExitCode.OOM).
OOM_EXIT_CODES = (3, 52)


def jvm_stopped_message(exit_code: int | None, log_tail: str, log_file: str | None) -> str:
    """Why the Spark JVM is gone, from its exit code and the end of its log."""
    atomic = (
        "Iceberg commits are atomic: each table holds either the running statement's whole "
        "commit or none of it."
    )
    where = f" (see {log_file})" if log_file else ""
    if exit_code in OOM_EXIT_CODES or "OutOfMemoryError" in log_tail:
        return (
            f"The Spark JVM stopped: it ran out of memory{where}. {atomic} Fix: raise "
            "`spark.driver.memory` under `spark_conf` in the profile (Spark's default is 1g), "
            "or make the model handle less data at once; then rerun."
        )
    code = f" with exit code {exit_code}" if exit_code is not None else ""
    return (
        f"The Spark JVM stopped unexpectedly{code}{where}. {atomic} Rerun once the cause is fixed."
    )


def is_jvm_stopped(error: BaseException) -> bool:
    return bool(_JVM_STOPPED.search(f"{type(error).__name__}: {error}"))


# A statement reading `information_schema`, which Spark has not: what dbt_utils' default
# relation lookups run unless the project dispatches to this adapter's.
_INFORMATION_SCHEMA = re.compile(r"information_schema", re.IGNORECASE)
INFORMATION_SCHEMA_FIX = (
    "The statement reads `information_schema`, which Spark does not have (dbt_utils' "
    "get_relations_by_pattern and its kin run it by default). Fix: put `dbt` first in the "
    "project's dispatch for dbt_utils (`dispatch: [{macro_namespace: dbt_utils, "
    "search_order: ['dbt', 'dbt_utils']}]`; with spark_utils' shims, `['dbt', "
    "'spark_utils', 'dbt_utils']`), which answers them from the Iceberg catalog."
)


def explain(chain_text: str, message: str) -> str:
    """The message, after the explanation of the first matching kind of failure, and
    before the fix of a read of `information_schema`."""
    if _INFORMATION_SCHEMA.search(chain_text) or _INFORMATION_SCHEMA.search(message):
        message = f"{message}\n  {INFORMATION_SCHEMA_FIX}"
    if is_write_conflict(chain_text):
        return f"{COMMIT_CONFLICT}\n  {message}"
    for explanation in EXPLANATIONS:
        if explanation.pattern.search(chain_text):
            return f"{explanation.text}\n  {message}"
    return message


# Exceptions that only wrap the real one (a failed task, a failed job).
_WRAPPERS = ("org.apache.spark.SparkException", "py4j.protocol.Py4JJavaError")
_STACK_LINE = re.compile(r"^\s*(at [\w$.<>/]+\(.*\)|\.\.\. \d+ more|Driver stacktrace:)\s*$")
# AnalysisException's text is "<message>; line L pos P;\n<logical plan>".
_PLAN_AFTER_POSITION = re.compile(r"(; line \d+ pos \d+);\n.*", re.DOTALL)
_PLAN_AFTER_MESSAGE = re.compile(r";\n'.*", re.DOTALL)
_THRIFT_PREFIX = re.compile(
    r"^(org\.apache\.hive\.service\.cli\.HiveSQLException: )?(Error running query: )?"
)


@dataclass(frozen=True)
class JavaError:
    """One exception of a JVM cause chain: its class and message."""

    class_name: str
    message: str

    def describe(self) -> str:
        message = clean_message(self.message)
        if message.startswith("["):  # Spark's error class leads: [TABLE_OR_VIEW_NOT_FOUND] ...
            return message
        if self.class_name == "java.lang.RuntimeException" and message:
            return message  # raise_error(): the message is the whole story
        simple_name = self.class_name.rsplit(".", 1)[-1]
        return f"{simple_name}: {message}" if message else simple_name


def sql_context(message: str) -> str:
    """Of Spark's `== SQL ==` block, keep the line the caret points at and the caret."""
    head, marker, sql = message.partition("== SQL ==")
    if not marker:
        return message
    lines = sql.strip("\n").splitlines()
    caret = next((i for i, line in enumerate(lines) if re.fullmatch(r"-*\^+", line.strip())), None)
    if caret is None or caret == 0:
        return head.rstrip()
    return f"{head.rstrip()}\n  {lines[caret - 1].strip()}\n  {' ' * _indent(lines, caret)}^^^"


def _indent(lines: list[str], caret: int) -> int:
    """Column of the caret relative to the stripped line above it."""
    above = lines[caret - 1]
    offset = len(above) - len(above.lstrip())
    return max(0, lines[caret].index("^") - offset)


def clean_message(message: str) -> str:
    """A JVM message without stack lines, logical plan or SQL listing."""
    message = _THRIFT_PREFIX.sub("", message.strip())
    message = message.split("\n\nDriver stacktrace:")[0]
    message = _PLAN_AFTER_POSITION.sub(r"\1", message)
    message = _PLAN_AFTER_MESSAGE.sub("", message)
    lines = [line for line in message.splitlines() if not _STACK_LINE.match(line)]
    return sql_context("\n".join(lines).strip())


def summarize(chain: list[JavaError]) -> str:
    """The readable message of an exception chain (outermost first): its root cause,
    unless the root only repeats a wrapper; an Iceberg commit failure is explained."""
    meaningful = [e for e in chain if e.class_name not in _WRAPPERS] or chain[-1:]
    message = meaningful[-1].describe() if meaningful else "unknown error"
    return explain(chain_text(chain), message)


def chain_text(chain: list[JavaError]) -> str:
    """Class names and messages of a chain, for matching kinds of failure."""
    return "\n".join(f"{e.class_name}: {e.message}" for e in chain)


def java_chain(java_error: Any, limit: int = 8) -> list[JavaError]:
    """The exception chain of a JVM exception (a py4j object), outermost first."""
    chain: list[JavaError] = []
    while java_error is not None and len(chain) < limit:
        class_name = java_error.getClass().getName()
        if class_name == "org.apache.spark.sql.AnalysisException":
            message = java_error.getSimpleMessage()
        else:
            message = java_error.getMessage()
        chain.append(JavaError(class_name, str(message or "")))
        java_error = java_error.getCause()
    return chain


def java_error_text(error: BaseException) -> str:
    """Class names and messages of a PySpark error's JVM exception chain ("" without one)."""
    java_error = getattr(error, "_origin", None) or getattr(error, "java_exception", None)
    if java_error is None:
        return ""
    try:
        return chain_text(java_chain(java_error))
    except Exception:  # the JVM is gone: the chain cannot be read
        return ""


def thrift_error_text(error: BaseException) -> str:
    """The server's error text of a failed PyHive call."""
    response = error.args[0] if error.args else None
    status = getattr(response, "status", None)
    return str(getattr(status, "errorMessage", "") or error)


# Spark's exceptions for a statement it never ran.
_NOT_RUN = (
    "org.apache.spark.sql.catalyst.parser.ParseException",
    "org.apache.spark.sql.AnalysisException",
)


# A Spark Connect server that is gone (gRPC status UNAVAILABLE).
_CONNECT_SERVER_GONE = re.compile(r"StatusCode\.UNAVAILABLE|failed to connect to all addresses")


def connect_error(error: BaseException) -> DbtDatabaseError:
    """The error a failed Spark Connect call raises to dbt: the server's message (its JVM's
    exception chain stays on the server)."""
    logger.debug(f"Spark Connect error: {error!r}")
    text = str(error)
    if _CONNECT_SERVER_GONE.search(text):
        return DbtDatabaseError(
            "The Spark Connect server does not answer (gRPC UNAVAILABLE); Iceberg commits are "
            "atomic, so each table holds either the running statement's whole commit or none "
            "of it. Fix: start the server (`dbt-s3tables-engine start connect`), or, with a "
            "profile `token`, serve it over TLS (the client sends tokens over TLS only); then "
            "rerun."
        )
    refused = type(error).__name__ in ("AnalysisException", "ParseException")
    message = explain(f"{type(error).__name__}: {text}", clean_message(text))
    return (StatementRefused if refused else DbtDatabaseError)(message)


# `spark_conf` settings that shape the driver JVM's command line.
JVM_LAUNCH_KEYS = (
    "spark.driver.extraJavaOptions",
    "spark.driver.memory",
    "spark.driver.extraClassPath",
    "spark.driver.extraLibraryPath",
)
# Spark's check of the memory it runs in (INVALID_DRIVER_MEMORY, INVALID_EXECUTOR_MEMORY).
_MEMORY_BELOW_MINIMUM = re.compile(r"(System|Executor) memory (\d+) must be at least (\d+)")
MEMORY_KEYS = {"System": "spark.driver.memory", "Executor": "spark.executor.memory"}
MEMORY_ERROR_CLASSES = {"System": "INVALID_DRIVER_MEMORY", "Executor": "INVALID_EXECUTOR_MEMORY"}
# The first line of the summary a crashing HotSpot JVM prints.
_JVM_CRASH = "A fatal error has been detected by the Java Runtime Environment"


def jvm_crashed(jvm_output: str) -> bool:
    """Whether the JVM's output holds a crash report (a signal, such as SIGBUS)."""
    return _JVM_CRASH in jvm_output


def _mib(size: str) -> int:
    return int(size) // (1024 * 1024)


def jvm_exit_error(
    refusal: str, user_settings: dict[str, str], log_file: str | None
) -> DbtRuntimeError:
    """Why Spark cannot start when its driver JVM exits before Spark connects to it:
    Java's own reason, and the profile settings that shape the JVM's command line."""
    where = f" (the JVM's output is in {log_file})" if log_file else ""
    reason = f": {refusal}" if refusal else ""
    keys = [k for k in JVM_LAUNCH_KEYS if k in user_settings]
    if not keys:
        return DbtRuntimeError(
            f"Spark cannot start: its driver JVM exited before Spark could connect to "
            f"it{reason}{where}. Fix: check the Java runtime and JAVA_TOOL_OPTIONS."
        )
    # Keys only: Java options may carry values that must not reach the console.
    if len(keys) == 1:
        return ProfileError(
            f"spark_conf.{keys[0]}",
            f"Spark's driver JVM does not start with it{reason}{where}",
            "correct or remove it",
        )
    settings = ", ".join(f"`{k}`" for k in keys)
    return ProfileError(
        "spark_conf",
        f"Spark's driver JVM does not start with {settings}{reason}{where}",
        "correct or remove them",
    )


def context_start_error(chain: list[JavaError], user_settings: dict[str, str]) -> DbtRuntimeError:
    """Why Spark cannot start when its JVM runs but the SparkContext fails to start."""
    text = chain_text(chain)
    memory = _MEMORY_BELOW_MINIMUM.search(text)
    if memory:
        kind, have, need = memory.groups()
        key = MEMORY_KEYS[kind]
        given = f" (`{user_settings[key]}`)" if key in user_settings else ""
        return ProfileError(
            f"spark_conf.{key}",
            f"Spark cannot start: it gets {_mib(have)} MB of memory{given} and needs at "
            f"least {_mib(need)} MB ({MEMORY_ERROR_CLASSES[kind]})",
            "set it to 512m or more (Spark's default is 1g)",
        )
    keys = ", ".join(f"`{k}`" for k in user_settings)
    settings = f" (it has {keys})" if keys else ""
    return DbtRuntimeError(
        f"Spark cannot start: {summarize(chain)}. Fix: check `spark_conf` in the "
        f"profile{settings}; the full trace is in logs/dbt.log."
    )


# pyspark 4's own loggers of a failed statement: each prints the error with its whole Java
# stack, as one JSON line, on the console (pyspark 3.5 has none). dbt shows the error once,
# as this module words it, and the debug log gets the trace (`database_error`).
PYSPARK_ERROR_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")


def silence_pyspark_error_logs() -> None:
    """Turn pyspark 4's loggers of failed statements off (nothing to do on pyspark 3.5)."""
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:  # pyspark 3.5
        return
    for name in PYSPARK_ERROR_LOGGERS:
        PySparkLogger.getLogger(name).disabled = True


def database_error(error: BaseException) -> DbtDatabaseError:
    """The error a failed Spark call raises to dbt; the full trace is logged at debug."""
    if type(error).__module__.startswith("pyspark.errors.exceptions.connect"):
        return connect_error(error)
    java_error = getattr(error, "_origin", None) or getattr(error, "java_exception", None)
    if java_error is None:
        logger.debug(f"engine error: {error!r}")
        if is_jvm_stopped(error):
            return DbtDatabaseError(jvm_stopped_message(*jvm_post_mortem()))
        return DbtDatabaseError(clean_message(str(error)))
    trace = getattr(error, "stackTrace", None) or str(error)
    logger.debug(f"engine error, full trace:\n{trace}")
    try:
        chain = java_chain(java_error)
    except Exception:  # the JVM is gone: its chain cannot be read, its text can
        return DbtDatabaseError(clean_message(str(error)))
    refused = bool(chain) and chain[0].class_name in _NOT_RUN
    return (StatementRefused if refused else DbtDatabaseError)(summarize(chain))


def thrift_error(message: str) -> DbtDatabaseError:
    """The error a failed statement on a Spark Thrift Server raises to dbt."""
    logger.debug(f"thrift server error, full text:\n{message}")
    refused = any(name in message for name in _NOT_RUN)
    return (StatementRefused if refused else DbtDatabaseError)(
        explain(message, clean_message(message))
    )
