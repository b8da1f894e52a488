"""Spark and Iceberg errors reduced to what a person reads: root cause, error class,
message; no Java stack, no logical plan, only the SQL line a parse error points at."""

from __future__ import annotations

import pytest

from dbt.adapters.s3tables.engines.spark_errors import (
    INFORMATION_SCHEMA_FIX,
    JavaError,
    clean_message,
    is_jvm_stopped,
    jvm_stopped_message,
    lost_to_another_writer,
    summarize,
    thrift_error,
)

STAGE_FAILURE = (
    "Job aborted due to stage failure: Task 1 in stage 0.0 failed 1 times, most recent "
    "failure: Lost task 1.0 in stage 0.0 (TID 1) (192.0.2.2 executor driver): "
    "java.lang.RuntimeException: boom\n"
    "\tat org.apache.spark.sql.catalyst.expressions.Gen.processNext(Unknown Source)\n"
    "\tat java.base/java.lang.Thread.run(Thread.java:840)\n"
    "\nDriver stacktrace:\n"
    "\tat org.apache.spark.scheduler.DAGScheduler.failJob(DAGScheduler.scala:2898)"
)


def test_a_failed_job_reports_its_root_cause_without_stack() -> None:
    chain = [
        JavaError("org.apache.spark.SparkException", STAGE_FAILURE),
        JavaError("java.lang.RuntimeException", "boom"),
    ]
    assert summarize(chain) == "boom"


def test_error_class_messages_are_kept_as_spark_words_them() -> None:
    chain = [
        JavaError("org.apache.spark.SparkException", "[TASK_WRITE_FAILED] Task failed"),
        JavaError(
            "org.apache.spark.SparkArithmeticException",
            "[CAST_OVERFLOW] The value 1e10 of the type DOUBLE cannot be cast to INT",
        ),
    ]
    assert summarize(chain).startswith("[CAST_OVERFLOW] The value")


def test_a_lone_wrapper_still_says_something() -> None:
    chain = [JavaError("org.apache.spark.SparkException", STAGE_FAILURE)]
    message = summarize(chain)
    assert "boom" in message
    assert "\tat " not in message and "Driver stacktrace" not in message


def test_analysis_errors_lose_their_logical_plan() -> None:
    text = (
        "[TABLE_OR_VIEW_NOT_FOUND] The table or view `a`.`nope` cannot be found.; line 13 pos 14;\n"
        "'ReplaceTableAsSelect TableSpec(Map(),Some(iceberg)), true, false\n"
        "+- 'UnresolvedRelation [a, nope], [], false"
    )
    assert clean_message(text) == (
        "[TABLE_OR_VIEW_NOT_FOUND] The table or view `a`.`nope` cannot be found.; line 13 pos 14"
    )


def test_parse_errors_keep_only_the_line_the_caret_points_at() -> None:
    text = (
        "[PARSE_SYNTAX_ERROR] Syntax error at or near 'fromm'.(line 3, pos 15)\n\n"
        "== SQL ==\n"
        '/* {"app": "dbt"} */\n'
        "create or replace table `a`.`b` as\n"
        "select 1 as id fromm x\n"
        "---------------^^^\n"
    )
    assert clean_message(text) == (
        "[PARSE_SYNTAX_ERROR] Syntax error at or near 'fromm'.(line 3, pos 15)\n"
        "  select 1 as id fromm x\n"
        "                 ^^^"
    )


def test_thrift_errors_lose_the_server_prefix_and_stack() -> None:
    text = (
        "org.apache.hive.service.cli.HiveSQLException: Error running query: "
        "org.apache.iceberg.exceptions.CommitFailedException: ref changed\n"
        "\tat org.apache.spark.sql.hive.thriftserver.Operation.run(X.scala:1)\n"
        "\t... 16 more"
    )
    error = thrift_error(text)
    assert "Iceberg commit conflict" in str(error)
    assert "ref changed" in str(error)
    assert "\tat " not in str(error) and "more" not in str(error).split("ref changed")[1]


# --- explanations: what happened to the data, and what to do ---------------------------


@pytest.mark.parametrize(
    ("chain", "expected"),
    [
        (
            [
                ("org.apache.spark.SparkException", "Job aborted"),
                ("java.io.IOException", "No space left on device"),
            ],
            "The disk is full",
        ),
        ([("java.lang.OutOfMemoryError", "Java heap space")], "spark.driver.memory"),
        (
            [("org.sqlite.SQLiteException", "[SQLITE_BUSY] The database file is locked")],
            "catalog_lock_timeout",
        ),
        (
            [("java.io.IOException", "Mkdirs failed to create file:/ro/wh/a/t/data")],
            "cannot write into the warehouse",
        ),
        (
            [
                (
                    "org.apache.iceberg.exceptions.AlreadyExistsException",
                    "Table already exists: analytics.orders",
                )
            ],
            "created by another run",
        ),
        (
            [
                (
                    "org.apache.iceberg.exceptions.NotFoundException",
                    "File does not exist: file:/wh/a/t/data/00000-1-x.parquet",
                )
            ],
            "rollback_to_snapshot",
        ),
    ],
)
def test_failures_are_explained(chain: list[tuple[str, str]], expected: str) -> None:
    message = summarize([JavaError(name, text) for name, text in chain])
    assert expected in message
    # The root cause stays, after the explanation.
    assert message.endswith(chain[-1][1])


@pytest.mark.parametrize(
    ("name", "text", "another_writer"),
    [
        ("org.apache.iceberg.exceptions.AlreadyExistsException", "Table already exists: a.t", True),
        ("org.apache.iceberg.exceptions.CommitFailedException", "Cannot commit: stale", True),
        ("java.lang.RuntimeException", "boom", False),
    ],
)
def test_a_table_another_run_created_proves_another_writer(
    name: str, text: str, another_writer: bool
) -> None:
    """Its files, not committed yet when this statement failed, must not be taken for
    this statement's leftovers (a concurrent first build lost the winner's metadata so)."""
    assert lost_to_another_writer(summarize([JavaError(name, text)])) is another_writer


def test_namespace_already_exists_is_not_called_a_concurrent_table() -> None:
    chain = [
        JavaError(
            "org.apache.iceberg.exceptions.AlreadyExistsException",
            "Namespace already exists: analytics",
        )
    ]
    assert "created by another run" not in summarize(chain)


@pytest.mark.parametrize(
    ("exit_code", "log", "expected"),
    [
        (3, "", "ran out of memory"),
        (52, "", "ran out of memory"),
        (None, "ERROR Executor: java.lang.OutOfMemoryError: Java heap space", "ran out of memory"),
        (137, "", "stopped unexpectedly with exit code 137"),
    ],
)
def test_a_stopped_jvm_says_why(exit_code: int | None, log: str, expected: str) -> None:
    message = jvm_stopped_message(exit_code, log, "/p/logs/spark.log")
    assert expected in message
    assert "/p/logs/spark.log" in message
    assert ("spark.driver.memory" in message) == ("memory" in expected)


@pytest.mark.parametrize(
    "text",
    [
        "[Errno 111] Connection refused",
        "Answer from Java side is empty",
        "Cannot call methods on a stopped SparkContext.",
    ],
)
def test_lost_jvm_connections_are_recognised(text: str) -> None:
    assert is_jvm_stopped(ConnectionError(text))


def test_ordinary_errors_are_not_a_stopped_jvm() -> None:
    assert not is_jvm_stopped(ValueError("[DIVIDE_BY_ZERO] Division by zero"))


def test_a_statement_spark_never_ran_is_told_apart() -> None:
    from dbt.adapters.s3tables.errors import StatementRefused

    assert isinstance(
        thrift_error("org.apache.spark.sql.catalyst.parser.ParseException: [PARSE_SYNTAX_ERROR]"),
        StatementRefused,
    )
    ran = thrift_error("org.apache.spark.SparkException: Job aborted: No space left on device")
    assert not isinstance(ran, StatementRefused)


PARSE_ERROR = "org.apache.spark.sql.catalyst.parser.ParseException"


def test_a_read_of_information_schema_names_the_dispatch_fix() -> None:
    sql = "select table_name from .information_schema.tables"
    text = (
        "[PARSE_SYNTAX_ERROR] Syntax error at or near '.'.(line 1, pos 22)\n\n== SQL ==\n"
        f"{sql}\n----------------------^^^\n"
    )
    message = summarize([JavaError(PARSE_ERROR, text)])
    assert message.startswith("[PARSE_SYNTAX_ERROR] Syntax error at or near '.'")
    last = message.splitlines()[-1].strip()
    assert last == INFORMATION_SCHEMA_FIX
    assert "search_order: ['dbt', 'dbt_utils']" in last


def test_other_syntax_errors_name_no_dispatch_fix() -> None:
    text = (
        "[PARSE_SYNTAX_ERROR] Syntax error at or near 'form'.\n\n== SQL ==\n"
        "select 1 form t\n---------^^^\n"
    )
    assert INFORMATION_SCHEMA_FIX not in summarize([JavaError(PARSE_ERROR, text)])
