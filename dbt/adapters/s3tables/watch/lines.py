"""What the watch prints besides dbt's own output: one line when it starts watching, one
per run (what triggered it, its wall time, and a failure in one sentence), and one when it
stops. dbt's multi-line errors are cut to their first sentence here; dbt prints them whole
just before."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dbt.cli.main import dbtRunnerResult

# dbt's heading line of an error, whose reason is on the next line: "Database Error in
# model one (models/one.sql)", "Compilation Error", "Runtime Error in ...".
_HEADING = re.compile(r"^[A-Z][A-Za-z ]*(Error|Failure)( in .*)?$")
# Where in the file a compilation error is: "line 2".
_LINE_NUMBER = re.compile(r"^line \d+$")
# A node result that failed the run: a model's or a seed's error, a test's failure.
FAILED_STATUSES = frozenset({"error", "fail"})


def one_sentence(message: str) -> str:
    """dbt's error message as one line: its heading and reason (`Database Error in model
    one (models/one.sql): [PARSE_SYNTAX_ERROR] Syntax error at or near 'selec'`), with the
    line number a compilation error names; the SQL it quotes is left out."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if not lines:
        return "no message"
    text = lines[0]
    if len(lines) > 1 and _HEADING.match(text):
        text = f"{text}: {lines[1]}"
        if len(lines) > 2 and _LINE_NUMBER.match(lines[2]):
            text += f" ({lines[2]})"
    return text


def failure_text(result: dbtRunnerResult) -> str:
    """Why a dbt invocation failed, in one sentence: its exception (a project that does
    not parse, a profile error), else its first failed node (and how many more failed)."""
    if result.exception is not None:
        return one_sentence(str(result.exception) or type(result.exception).__name__)
    outcomes = getattr(result.result, "results", None) or []
    failed = [r for r in outcomes if str(r.status) in FAILED_STATUSES]
    if not failed:
        return "dbt reported a failure (see its output above)"
    first = failed[0]
    text = one_sentence(str(first.message or first.status))
    name = str(getattr(first.node, "name", ""))
    if name and not re.search(rf"\b{re.escape(name)}\b", text):
        text = f"{name}: {text}"
    if len(failed) > 1:
        text += f" (and {len(failed) - 1} more failed)"
    return text


def saved_text(paths: Sequence[Path], project_dir: Path) -> str:
    """`models/one.sql saved`, `models/one.sql and 1 more saved`."""
    if not paths:
        return "First run"
    first = paths[0]
    shown = first.relative_to(project_dir) if first.is_relative_to(project_dir) else first
    more = f" and {len(paths) - 1} more" if len(paths) > 1 else ""
    return f"{shown}{more} saved"


def run_line(
    trigger: Sequence[Path],
    project_dir: Path,
    command: str,
    seconds: float,
    failure: str | None,
    goes_on: bool = True,
) -> str:
    """The line after each run: what triggered it, the command, OK or why it failed (and,
    unless the watch stops there, that it goes on)."""
    head = f"{saved_text(trigger, project_dir)}: `{command}`"
    if failure is None:
        return f"{head} OK in {seconds:.2f} s"
    text = f"{head} failed in {seconds:.2f} s: {failure.rstrip('.')}"
    return f"{text}; watching for the next save" if goes_on else text


def watching_line(count: int, command: str, listed: bool, earlier: int | None) -> str:
    """The line when the watch starts (`earlier` None), or when its set of files changes.
    `listed`: dbt listed the selection (else the watch looks at every source file of the
    project until it can)."""
    files = f"{count} file{'' if count == 1 else 's'}"
    if not listed:
        what = f"the project's {files} (dbt lists none for the selection yet)"
    else:
        what = files
    verb = "Watching" if earlier is None else "Now watching"
    return f"{verb} {what} for `{command}`; Ctrl-C stops"


def stopped_line(signal_name: str, spark_seconds: float | None) -> str:
    spark = "" if spark_seconds is None else f"; Spark stopped in {spark_seconds:.1f} s"
    return f"Stopped watching ({signal_name}){spark}"
