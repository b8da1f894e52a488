"""The watch's loop, on a stand-in for dbtRunner's `invoke` (no dbt run, no Spark): one run
at start, one after each save of a selected file (a save during a run runs again), a failed
run in one line and the watch going on, every source file watched while dbt cannot list the
selection, and its ends: Ctrl-C during a run, SIGTERM as Ctrl-C, a Spark that ended."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dbt.adapters.s3tables.watch.arguments import WatchArguments
from dbt.adapters.s3tables.watch.command import (
    Stopped,
    Watch,
    main,
    stop_signals,
    stopping_invoke,
    stopping_sleep,
)

DATABASE_ERROR = (
    "Database Error in model one (models/one.sql)\n  [PARSE_SYNTAX_ERROR] Syntax error at or "
    "near 'selec'.(line 2, pos 0)"
)


class Project:
    """A project folder with one model and its YAML; `save` gives each save its own
    modification time, whatever the file system clock's resolution."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.saves = 0
        self.save("dbt_project.yml", "name: shop\n")
        self.save("models/one.sql", "select 1 as id")
        self.save("models/schema.yml", "version: 2\n")
        self.save("models/other.sql", "select 2 as id")

    def save(self, name: str, text: str) -> None:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        self.saves += 1
        os.utime(path, ns=(self.saves * 10**9, self.saves * 10**9))


class Dbt:
    """`invoke` as the watch calls it: each `run` records the model's text and gives the
    next of `outcomes` (success when none is left), or runs `during_run` first; `ls`
    lists `one` and its YAML, or fails while `listable` is False."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.runs: list[str] = []
        self.outcomes: list[Any] = []
        self.listable = True
        self.during_run: Callable[[], None] | None = None

    def __call__(self, arguments: list[str]) -> Any:
        if arguments[0] == "ls":
            if not self.listable:
                return SimpleNamespace(success=False, exception=Exception("Parsing Error"))
            line = {
                "unique_id": "model.shop.one",
                "package_name": "shop",
                "original_file_path": "models/one.sql",
                "patch_path": "shop://models/schema.yml",
            }
            return SimpleNamespace(success=True, exception=None, result=[json.dumps(line)])
        assert arguments[:3] == ["run", "--select", "one"]
        self.runs.append((self.project.root / "models/one.sql").read_text())
        if self.during_run is not None:
            during, self.during_run = self.during_run, None
            during()
        if self.outcomes:
            return self.outcomes.pop(0)
        return SimpleNamespace(success=True, exception=None, result=None)


class Scene:
    """A watch on a new project, with the stand-in dbt, and the lines it printed."""

    def __init__(self, root: Path, spark_gone: Callable[[], bool] = lambda: False) -> None:
        self.project = Project(root)
        self.dbt = Dbt(self.project)
        self.lines: list[str] = []
        self.arguments = WatchArguments(select=("one",), project_dir=root, interval=0.2)
        self.spark_gone = spark_gone

    def save(self, name: str, text: str) -> Callable[[], None]:
        return lambda: self.project.save(name, text)

    def loop(self, polls: list[Callable[[], None]]) -> None:
        """The loop, its polls doing `polls` in turn (a save, or nothing), then a Ctrl-C."""
        steps = iter(polls)
        ticks = iter(range(10**6))

        def sleep(seconds: float) -> None:
            if seconds == self.arguments.interval:  # a poll; settling reads do nothing
                next(steps, ctrl_c)()

        Watch(
            self.arguments,
            self.dbt,
            self.lines.append,
            sleep=sleep,
            clock=lambda: float(next(ticks)),
            spark_gone=self.spark_gone,
        ).loop()


def ctrl_c() -> None:
    raise KeyboardInterrupt


def nothing() -> None:
    pass


OK = SimpleNamespace(success=True, exception=None, result=None)


def test_it_runs_once_then_after_each_save_of_a_selected_file(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        scene.loop(
            [
                nothing,
                scene.save("models/one.sql", "select 2 as id"),
                nothing,
                scene.save("models/schema.yml", "version: 2\nmodels: []\n"),
                scene.save("models/other.sql", "select 3 as id"),  # not selected
                nothing,
            ]
        )
    assert scene.dbt.runs == ["select 1 as id", "select 2 as id", "select 2 as id"]
    assert scene.lines == [
        "Watching 2 files for `dbt run -s one`; Ctrl-C stops",
        "First run: `dbt run -s one` OK in 1.00 s",
        "models/one.sql saved: `dbt run -s one` OK in 1.00 s",
        "models/schema.yml saved: `dbt run -s one` OK in 1.00 s",
    ]


def test_a_failed_run_is_one_line_and_the_next_save_runs(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    failed = SimpleNamespace(
        success=False,
        exception=None,
        result=SimpleNamespace(
            results=[SimpleNamespace(status="error", message=DATABASE_ERROR, node=None)]
        ),
    )
    scene.dbt.outcomes = [OK, failed]
    with pytest.raises(KeyboardInterrupt):
        scene.loop(
            [
                scene.save("models/one.sql", "selec 1 as id"),
                scene.save("models/one.sql", "select 4 as id"),
            ]
        )
    assert scene.dbt.runs == ["select 1 as id", "selec 1 as id", "select 4 as id"]
    assert scene.lines[2:] == [
        "models/one.sql saved: `dbt run -s one` failed in 1.00 s: Database Error in model one "
        "(models/one.sql): [PARSE_SYNTAX_ERROR] Syntax error at or near 'selec'.(line 2, pos "
        "0); watching for the next save",
        "models/one.sql saved: `dbt run -s one` OK in 1.00 s",
    ]


def test_a_save_during_a_run_runs_again(tmp_path: Path) -> None:
    # The first run (Spark starting) too: the files are listed before it.
    scene = Scene(tmp_path)
    scene.dbt.during_run = scene.save("models/one.sql", "select 5 as id")
    with pytest.raises(KeyboardInterrupt):
        scene.loop([nothing, nothing])
    assert scene.dbt.runs == ["select 1 as id", "select 5 as id"]


def test_while_dbt_cannot_list_every_source_file_is_watched(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    scene.dbt.listable = False
    with pytest.raises(KeyboardInterrupt):
        scene.loop(
            [
                nothing,
                # A new file mends the project (a macro the model calls, say).
                scene.save("macros/mended.sql", "{% macro m() %}1{% endmacro %}"),
                nothing,
            ]
        )
    assert len(scene.dbt.runs) == 2
    assert scene.lines == [
        "Watching the project's 4 files (dbt lists none for the selection yet) for "
        "`dbt run -s one`; Ctrl-C stops",
        "First run: `dbt run -s one` OK in 1.00 s",
        "macros/mended.sql saved: `dbt run -s one` OK in 1.00 s",
        "Now watching the project's 5 files (dbt lists none for the selection yet) for "
        "`dbt run -s one`; Ctrl-C stops",
    ]


def test_once_dbt_lists_again_only_the_selected_files_are_watched(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    scene.dbt.listable = False

    def mend() -> None:
        scene.dbt.listable = True
        scene.project.save("models/schema.yml", "version: 2\nmodels: []\n")

    with pytest.raises(KeyboardInterrupt):
        scene.loop([mend, scene.save("models/other.sql", "select 6 as id"), nothing])
    assert len(scene.dbt.runs) == 2
    assert scene.lines[-1] == "Now watching 2 files for `dbt run -s one`; Ctrl-C stops"


def test_ctrl_c_during_a_run_stops_the_watch(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    scene.dbt.outcomes = [SimpleNamespace(success=False, exception=KeyboardInterrupt())]
    with pytest.raises(KeyboardInterrupt):
        scene.loop([])
    assert scene.lines == ["Watching 2 files for `dbt run -s one`; Ctrl-C stops"]


def test_a_spark_that_ended_stops_the_watch(tmp_path: Path) -> None:
    scene = Scene(tmp_path, spark_gone=lambda: True)
    scene.dbt.outcomes = [SimpleNamespace(success=False, exception=Exception("Runtime Error"))]
    with pytest.raises(Stopped):
        scene.loop([nothing])
    assert scene.lines[-1] == "First run: `dbt run -s one` failed in 1.00 s: Runtime Error"


def test_sigterm_stops_it_as_ctrl_c_does() -> None:
    received: list[str] = []
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt), stop_signals(received):
        os.kill(os.getpid(), signal.SIGTERM)
        signal.sigtimedwait([], 1)  # the handler runs at the next bytecode; wait for nothing
    assert received == ["SIGTERM"]
    assert signal.getsignal(signal.SIGTERM) == before


def test_ctrl_c_is_taken_back_from_a_handler_spark_installed() -> None:
    received: list[str] = []
    before = signal.getsignal(signal.SIGINT)
    calls: list[int] = []
    with pytest.raises(KeyboardInterrupt), stop_signals(received) as reclaim:
        # As pyspark's SparkContext does as it starts: a handler that calls the JVM.
        signal.signal(signal.SIGINT, lambda number, frame: calls.append(number))
        reclaim()
        os.kill(os.getpid(), signal.SIGINT)
        signal.sigtimedwait([], 1)  # the handler runs at the next bytecode; wait for nothing
    assert (received, calls) == (["SIGINT"], [])
    assert signal.getsignal(signal.SIGINT) == before


def test_a_ctrl_c_during_an_invocation_stops_the_watch_however_dbt_reports_it() -> None:
    received: list[str] = []
    reclaimed: list[bool] = []

    def dbt_that_swallows_it(arguments: list[str]) -> Any:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            signal.sigtimedwait([], 1)  # the handler runs at the next bytecode
        except KeyboardInterrupt:
            pass
        return SimpleNamespace(success=False, exception=RuntimeError("Aborted!"))

    with stop_signals(received) as reclaim:
        invoke = stopping_invoke(dbt_that_swallows_it, received, lambda: reclaimed.append(True))
        with pytest.raises(KeyboardInterrupt):
            invoke(["ls"])
        reclaim()
    assert (received, reclaimed) == (["SIGINT"], [True])


def test_an_invocation_without_a_stop_signal_gives_dbts_result() -> None:
    result = SimpleNamespace(success=True, exception=None)
    reclaimed: list[bool] = []
    invoke = stopping_invoke(lambda arguments: result, [], lambda: reclaimed.append(True))
    assert invoke(["ls"]) is result
    assert reclaimed == [True]


def test_arguments_that_cannot_work_are_one_sentence_and_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit:
        main(["-s", "one", "--project-dir", str(tmp_path)])
    assert exit.value.code == 2
    assert f"No dbt_project.yml in {tmp_path} (--project-dir)" in capsys.readouterr().err


class RaisesInItsFinalizer:
    """An object whose finalizer raises: where a stop signal's KeyboardInterrupt can land
    (py4j releases Java objects in finalizers), and where Python cannot raise it."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __del__(self) -> None:
        raise self.error


def test_a_stop_signal_landing_in_a_finalizer_prints_no_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Python hands such an error to `sys.unraisablehook`, whose default prints it with its
    traceback and goes on. The watch drops a KeyboardInterrupt there (the signal is in
    `received`: its next sleep stops it, below) and hands every other error on."""
    printed: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda raised: printed.append(raised.exc_value))
    with stop_signals([]):
        RaisesInItsFinalizer(KeyboardInterrupt())
        RaisesInItsFinalizer(ValueError("a finalizer's own error"))
    assert [type(error) for error in printed] == [ValueError]
    RaisesInItsFinalizer(KeyboardInterrupt())  # the watch's hook is gone with the watch
    assert [type(error) for error in printed] == [ValueError, KeyboardInterrupt]


def test_the_watch_stops_at_its_next_sleep_once_a_stop_signal_came() -> None:
    received: list[str] = []
    sleep = stopping_sleep(received)
    sleep(0)  # nothing received: it goes on watching
    received.append("SIGINT")
    with pytest.raises(KeyboardInterrupt):
        sleep(0)
