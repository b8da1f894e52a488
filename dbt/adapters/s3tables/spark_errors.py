"""Spark and Iceberg errors as one readable message for the person running dbt.

A failed statement becomes a `DbtDatabaseError` whose text is the root cause's error
class and message: no Java stack, no logical plan, only the lines of the SQL around the
position a parse error points at. The full trace goes to the debug log (`logs/dbt.log`).
The text functions are pure; `database_error` reads the JVM exception chain.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtDatabaseError

logger = AdapterLogger("s3tables")

COMMIT_CONFLICT = (
    "Iceberg commit conflict: another writer committed to the table first (on S3 Tables, "
    "possibly its automatic compaction) and the commit retries (table properties "
    "commit.retry.*) ran out. Nothing of this statement was committed: the table is "
    "unchanged. Rerun the model, or raise `commit.retry.num-retries` in its tblproperties."
)
COMMIT_STATE_UNKNOWN = (
    "Iceberg could not tell whether the commit landed (the catalog did not answer in "
    "time). Check the table's latest snapshot before rerunning."
)

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
    return explain_commit_failure(" ".join(e.class_name for e in chain), message)


def explain_commit_failure(class_names: str, message: str) -> str:
    if "CommitStateUnknownException" in class_names:
        return f"{COMMIT_STATE_UNKNOWN}\n  {message}"
    if "CommitFailedException" in class_names:
        return f"{COMMIT_CONFLICT}\n  {message}"
    return message


def _java_chain(java_error: object, limit: int = 8) -> list[JavaError]:
    chain: list[JavaError] = []
    while java_error is not None and len(chain) < limit:
        class_name = java_error.getClass().getName()  # type: ignore[attr-defined]
        if class_name == "org.apache.spark.sql.AnalysisException":
            message = java_error.getSimpleMessage()  # type: ignore[attr-defined]
        else:
            message = java_error.getMessage()  # type: ignore[attr-defined]
        chain.append(JavaError(class_name, str(message or "")))
        java_error = java_error.getCause()  # type: ignore[attr-defined]
    return chain


def database_error(error: BaseException) -> DbtDatabaseError:
    """The error a failed Spark call raises to dbt; the full trace is logged at debug."""
    java_error = getattr(error, "_origin", None) or getattr(error, "java_exception", None)
    if java_error is None:
        logger.debug(f"engine error: {error!r}")
        return DbtDatabaseError(clean_message(str(error)))
    trace = getattr(error, "stackTrace", None) or str(error)
    logger.debug(f"engine error, full trace:\n{trace}")
    try:
        return DbtDatabaseError(summarize(_java_chain(java_error)))
    except Exception:  # the JVM is gone: its chain cannot be read, its text can
        return DbtDatabaseError(clean_message(str(error)))


def thrift_error(message: str) -> DbtDatabaseError:
    """The error a failed statement on a Spark Thrift Server raises to dbt."""
    logger.debug(f"thrift server error, full text:\n{message}")
    names = " ".join(re.findall(r"[\w.]+(?:Exception|Error)\b", message))
    return DbtDatabaseError(explain_commit_failure(names, clean_message(message)))
