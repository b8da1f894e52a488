"""`dbt-s3tables-watch` as a user runs it, a process of its own on a project with its own
embedded warehouse: the first run, a save that changes the model's rows, a save with a
syntax error (one sentence, and the watch goes on), a good save again, all in one Spark;
then Ctrl-C: exit code 0, and the JVM already gone when the watch has exited. And SIGTERM
stops it as Ctrl-C does."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from dbt.adapters.s3tables.engines.jvm_process import ARCHIVE_EXIT_WAIT_SECONDS
from tests.functional.harness import (
    Project,
    assert_readable,
    driver_jvm_of,
    jvm_alive,
    start_logged,
    wait_for_line,
)

WATCH = str(Path(sys.executable).parent / "dbt-s3tables-watch")
TABLE = "{{ config(materialized='table') }}\n"
SCHEMA_YML = "version: 2\nmodels:\n  - name: numbers\n    description: the numbers\n"
# A run's line, once per save that ran well.
SAVED_OK = "models/numbers.sql saved: `dbt run -s numbers` OK in "
# What one run in a warm process may take on a busy 2-core machine, at most.
RUN_LIMIT = 60
# How long a stop may take: a JVM that writes the class archive as it exits is given
# ARCHIVE_EXIT_WAIT_SECONDS before it is killed (a fresh cache, or one whose archive of this
# configuration was evicted), then Python ends.
STOP_LIMIT = ARCHIVE_EXIT_WAIT_SECONDS + 30


def start_watch(project: Project, console: Path, *args: str) -> subprocess.Popen[bytes]:
    command = [WATCH, *args, "--project-dir", str(project.root), "--profiles-dir"]
    return start_logged([*command, str(project.root)], project.root, project.env(), console)


def last_line_with(output: str, text: str) -> str:
    return [line for line in output.splitlines() if text in line][-1]


def test_each_save_runs_an_error_is_one_line_and_ctrl_c_stops_it_all(tmp_path: Path) -> None:
    started = time.monotonic()
    project = Project(tmp_path / "project", tmp_path / "warehouse")
    project.model("numbers", TABLE + "select 1 as id")
    (project.root / "models" / "schema.yml").write_text(SCHEMA_YML)
    console = tmp_path / "console.txt"
    watch = start_watch(project, console, "-s", "numbers")
    try:
        jvm = driver_jvm_of(watch, console)
        output = wait_for_line(watch, console, "First run: `dbt run -s numbers` OK in ")
        # The model's file and the YAML that describes it.
        assert "Watching 2 files for `dbt run -s numbers`; Ctrl-C stops" in output
        assert project.ids("numbers") == [1]

        project.model("numbers", TABLE + "select id from range(3) as r(id)")
        wait_for_line(watch, console, SAVED_OK, count=1, limit=RUN_LIMIT)
        assert project.ids("numbers") == [0, 1, 2]

        project.model("numbers", TABLE + "selec 1 as id")
        output = wait_for_line(watch, console, "failed in", limit=RUN_LIMIT)
        assert re.fullmatch(
            r"\d\d:\d\d:\d\d  models/numbers.sql saved: `dbt run -s numbers` failed in "
            r"[\d.]+ s: Database Error in model numbers \(models/numbers.sql\): "
            r"\[PARSE_SYNTAX_ERROR\] Syntax error at or near 'selec'.\(line 2, pos 0\); "
            r"watching for the next save",
            last_line_with(output, "failed in"),
        ), output
        time.sleep(1)  # a few polls: it goes on watching, the table as it was
        assert watch.poll() is None
        assert project.ids("numbers") == [0, 1, 2]

        project.model("numbers", TABLE + "select id from range(5) as r(id)")
        output = wait_for_line(watch, console, SAVED_OK, count=2, limit=RUN_LIMIT)
        assert project.ids("numbers") == [0, 1, 2, 3, 4]
        # One Spark for every run: the session outlives each dbt invocation.
        assert output.count("Starting Spark") == 1, output
        assert driver_jvm_of(watch, console) == jvm

        watch.send_signal(signal.SIGINT)
        assert watch.wait(timeout=STOP_LIMIT) == 0
        # Stopped and waited for before the watch ended, not left to the reaper's grace.
        assert not jvm_alive(jvm)
        output = console.read_text()
        assert "Stopped watching (SIGINT); Spark stopped in " in output
        assert_readable(output)
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait()
    print(f"watch test: {time.monotonic() - started:.1f} s")


def test_sigterm_stops_it_as_ctrl_c_does(tmp_path: Path) -> None:
    # A model that does not compile: dbt stops at its parse, before Spark starts.
    project = Project(tmp_path / "project", tmp_path / "warehouse")
    project.model("numbers", TABLE + "select {{ 1 as id")
    console = tmp_path / "console.txt"
    watch = start_watch(project, console, "-s", "numbers")
    try:
        output = wait_for_line(watch, console, "First run: `dbt run -s numbers` failed in ")
        assert "Compilation Error in model numbers (models/numbers.sql): expected token" in (
            last_line_with(output, "First run")
        )
        # The project does not parse: every source file is watched until it does.
        assert "Watching the project's 2 files (dbt lists none for the selection yet)" in output
        watch.send_signal(signal.SIGTERM)
        assert watch.wait(timeout=STOP_LIMIT) == 0
        assert console.read_text().splitlines()[-1].endswith("Stopped watching (SIGTERM)")
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait()
