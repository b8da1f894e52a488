"""`method: connect`'s routing of pyspark 3.5's client warnings: a failed ReleaseExecute
(dbt closed the channel first) goes to dbt's log file at debug level, not the console;
every other warning, from pyspark or elsewhere, goes where it went before."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator

import pytest

from dbt.adapters.s3tables.engines import connect
from dbt.adapters.s3tables.engines.connect import route_release_warnings

REATTACH = os.path.join("site-packages", "pyspark", "sql", "connect", "client", "reattach.py")
RELEASE = "ReleaseExecute failed with exception: Cannot invoke RPC on closed channel!."


class DebugLog:
    """dbt's adapter logger at debug level (the log file), and the console: the warnings
    the handler in place before the route (Python's prints them on stderr) was given."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.console: list[str] = []

    def debug(self, message: str) -> None:
        self.lines.append(message)

    def show(self, message: Warning | str, *where: object) -> None:
        self.console.append(str(message))


@pytest.fixture
def debug_log(monkeypatch: pytest.MonkeyPatch) -> Iterator[DebugLog]:
    log = DebugLog()
    monkeypatch.setattr(connect, "logger", log)
    with warnings.catch_warnings():  # restores `showwarning` and the filters afterwards
        warnings.simplefilter("always")
        warnings.showwarning = log.show
        route_release_warnings()
        yield log


def warn_from(filename: str, message: str) -> None:
    warnings.warn_explicit(message, UserWarning, filename, 215)


def test_a_failed_release_goes_to_the_log_file_not_the_console(debug_log: DebugLog) -> None:
    warn_from(REATTACH, RELEASE)
    assert debug_log.lines == [f"Spark Connect client (harmless): {RELEASE}"]
    assert debug_log.console == []


def test_other_warnings_are_shown_as_before(debug_log: DebugLog) -> None:
    warn_from(REATTACH, "something else")
    warn_from(os.path.join("elsewhere", "module.py"), RELEASE)
    assert debug_log.console == ["something else", RELEASE]
    assert debug_log.lines == []


def test_the_route_is_installed_once(debug_log: DebugLog) -> None:
    route = warnings.showwarning
    route_release_warnings()
    assert warnings.showwarning is route
    warn_from(REATTACH, RELEASE)
    assert len(debug_log.lines) == 1
