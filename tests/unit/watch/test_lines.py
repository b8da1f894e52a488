"""What the watch prints: dbt's errors in one sentence, one line per run with its wall
time, the line when it starts watching, and the one when it stops."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dbt.adapters.s3tables.watch.lines import (
    failure_text,
    one_sentence,
    run_line,
    stopped_line,
    watching_line,
)

DATABASE_ERROR = (
    "Database Error in model one (models/one.sql)\n"
    "  [PARSE_SYNTAX_ERROR] Syntax error at or near 'selec'.(line 2, pos 0)\n"
    "    selec 1 as id\n"
    "    ^^^"
)
COMPILATION_ERROR = (
    "Compilation Error in model one (models/one.sql)\n"
    "  expected token 'end of print statement', got 'as'\n"
    "    line 2\n"
    "      select {{ 1 as id"
)


@pytest.mark.parametrize(
    ("message", "sentence"),
    [
        (
            DATABASE_ERROR,
            "Database Error in model one (models/one.sql): [PARSE_SYNTAX_ERROR] Syntax error "
            "at or near 'selec'.(line 2, pos 0)",
        ),
        (
            COMPILATION_ERROR,
            "Compilation Error in model one (models/one.sql): expected token 'end of print "
            "statement', got 'as' (line 2)",
        ),
        (
            "Runtime Error\n  Could not find profile named 'shop'",
            "Runtime Error: Could not find profile named 'shop'",
        ),
        ("A sentence of its own.\nmore detail", "A sentence of its own."),
        ("", "no message"),
    ],
)
def test_dbt_s_error_is_one_sentence(message: str, sentence: str) -> None:
    assert one_sentence(message) == sentence


def result(**fields: Any) -> Any:
    return SimpleNamespace(**{"success": False, "exception": None, "result": None, **fields})


def node_result(status: str, message: str | None, name: str) -> SimpleNamespace:
    return SimpleNamespace(status=status, message=message, node=SimpleNamespace(name=name))


def test_a_failed_invocation_says_its_exception_or_its_first_failed_node() -> None:
    assert failure_text(result(exception=Exception(COMPILATION_ERROR))).startswith(
        "Compilation Error in model one (models/one.sql): expected token"
    )
    outcomes = [
        node_result("success", "OK", "fine"),
        node_result("error", DATABASE_ERROR, "one"),
        node_result("fail", "Got 2 results, configured to fail if != 0", "unique_one_id"),
        node_result("skipped", None, "downstream"),
    ]
    assert failure_text(result(result=SimpleNamespace(results=outcomes))) == (
        "Database Error in model one (models/one.sql): [PARSE_SYNTAX_ERROR] Syntax error at "
        "or near 'selec'.(line 2, pos 0) (and 1 more failed)"
    )
    # A test's failure does not name its node: the line does.
    failed_test = [node_result("fail", "Got 2 results, configured to fail if != 0", "unique_id")]
    assert failure_text(result(result=SimpleNamespace(results=failed_test))) == (
        "unique_id: Got 2 results, configured to fail if != 0"
    )
    assert "see its output above" in failure_text(result())


def test_each_run_is_one_line_with_its_trigger_and_wall_time() -> None:
    project = Path("/p")
    assert run_line([], project, "dbt run -s one", 14.987, None) == (
        "First run: `dbt run -s one` OK in 14.99 s"
    )
    saved = [project / "models/one.sql", project / "models/schema.yml"]
    assert run_line(saved, project, "dbt run -s one", 0.5, "Database Error in x.") == (
        "models/one.sql and 1 more saved: `dbt run -s one` failed in 0.50 s: Database Error "
        "in x; watching for the next save"
    )
    # The watch stops after it (Spark's JVM ended): it does not say it goes on.
    assert run_line(saved[:1], project, "dbt run -s one", 0.5, "Runtime Error: x", False) == (
        "models/one.sql saved: `dbt run -s one` failed in 0.50 s: Runtime Error: x"
    )


def test_the_watching_and_stopped_lines() -> None:
    assert watching_line(2, "dbt run -s one", True, None) == (
        "Watching 2 files for `dbt run -s one`; Ctrl-C stops"
    )
    assert watching_line(1, "dbt run -s one", True, 2) == (
        "Now watching 1 file for `dbt run -s one`; Ctrl-C stops"
    )
    assert watching_line(5, "dbt run -s one", False, 2) == (
        "Now watching the project's 5 files (dbt lists none for the selection yet) for "
        "`dbt run -s one`; Ctrl-C stops"
    )
    assert stopped_line("SIGTERM", 0.44) == "Stopped watching (SIGTERM); Spark stopped in 0.4 s"
    assert stopped_line("SIGINT", None) == "Stopped watching (SIGINT)"
