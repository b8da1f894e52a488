"""The driver JVM's log (`spark.log` beside dbt's log): where it is, what this process's
JVM wrote to it, and why a JVM that stopped did (its exit code and the log's end)."""

from __future__ import annotations

import os
import subprocess
from typing import Any

# How much of the end of the JVM's log is read to tell why it stopped.
LOG_TAIL_BYTES = 256 * 1024

# Size of the JVM log when this process started its JVM.
_log_offset = 0


def jvm_log_file() -> str | None:
    """`spark.log` beside dbt's own log, where the JVM writes its log."""
    from dbt.flags import get_flags

    flags: Any = get_flags()  # type: ignore[no-untyped-call]  # dbt.flags is untyped
    log_path = getattr(flags, "LOG_PATH", None)
    return os.path.join(os.path.abspath(log_path), "spark.log") if log_path else None


def mark_log_start(log_file: str | None) -> None:
    """Remember where this process's JVM starts writing the (appended-to) log."""
    global _log_offset
    _log_offset = os.path.getsize(log_file) if log_file and os.path.exists(log_file) else 0


def jvm_log_tail(log_file: str | None) -> str:
    """The end of what this process's JVM wrote to its log (its output included)."""
    if not log_file or not os.path.exists(log_file):
        return ""
    with open(log_file, "rb") as log:
        # Only what this process's JVM wrote: the log is appended to across runs.
        log.seek(max(_log_offset, os.path.getsize(log_file) - LOG_TAIL_BYTES))
        return log.read().decode("utf-8", errors="replace")


def jvm_post_mortem(wait_seconds: float = 5.0) -> tuple[int | None, str, str | None]:
    """The stopped JVM's exit code (None if still running), the end of its log, and the
    log's path: why a statement found Spark gone."""
    from pyspark import SparkContext

    process = getattr(SparkContext._gateway, "proc", None)
    exit_code = None
    if process is not None:
        try:
            exit_code = process.wait(timeout=wait_seconds)
        except subprocess.TimeoutExpired:
            exit_code = None
    log_file = jvm_log_file()
    return exit_code, jvm_log_tail(log_file), log_file
