"""The Spark driver JVM's start and end, through real `dbt` processes.

A Spark that cannot start (too little driver memory, a Java option Java refuses, a
JAVA_HOME without Java) is one sentence naming the cause and the key, the traces in
`logs/`. However dbt ends (normally, by an exception, SIGTERM, SIGKILL) its JVM is gone
within seconds: before, a JVM writing its class archive lived on 30 s and more with no
parent. The killed JVMs' unfinished class archive files are removed by the next start.

Each test uses a class archive cache of its own (`XDG_CACHE_HOME`), never the shared one.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.functional.harness import (
    Project,
    assert_readable,
    driver_jvm_of,
    jvm_alive,
    seconds_until_gone,
    start_logged,
    wait_for_line,
)

# The reaper's grace (3 s, jvm_process.REAPER_GRACE_SECONDS) plus a loaded machine's slack.
JVM_GONE_WITHIN = 12.0
# A statement that runs for minutes (Thread.sleep per row), interrupted by the signals.
SLOW_MODEL = (
    "{{ config(materialized='table') }}\n"
    "select id from range(100000) as r(id) where coalesce(reflect('java.lang.Thread', "
    "'sleep', cast(100 as bigint)), 'slept') is not null"
)


class LifetimeProject(Project):
    """A project whose dbt processes use their own class archive cache and environment."""

    def __init__(self, root: Path, cache: Path, **profile: object) -> None:
        super().__init__(root, root.parent / "warehouse", **profile)
        self.cache = cache
        self.extra_env: dict[str, str] = {}

    def env(self) -> dict[str, str]:  # type: ignore[override]
        return {**Project.env(), "XDG_CACHE_HOME": str(self.cache), **self.extra_env}

    def set_spark_conf(self, **spark_conf: str) -> None:
        """Write the profile again with these `spark_conf` settings."""
        Project.__init__(self, self.root, self.warehouse, spark_conf=spark_conf)

    def launch(self, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
        """dbt started in the background, its console going to a file."""
        console = self.root / f"console-{time.monotonic_ns()}.txt"
        return start_logged(self.command(*args), self.root, self.env(), console), console


@pytest.fixture
def cache(tmp_path: Path):
    folder = tmp_path / "cache"
    yield folder
    shutil.rmtree(folder, ignore_errors=True)  # class archives are 100-175 MB each


def failed_start(project: LifetimeProject) -> str:
    result = project.run("run")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert_readable(output)
    assert len(output.splitlines()) <= 15, output
    return output


def test_spark_that_cannot_start_says_why_in_one_sentence(tmp_path: Path, cache: Path) -> None:
    project = LifetimeProject(tmp_path / "project", cache)
    project.model("numbers", "select 1 as id")

    # Spark 3.5 and 4.1 start Java with -XX:+IgnoreUnrecognizedVMOptions: the option
    # would be dropped without a word. Java is asked first.
    project.set_spark_conf(**{"spark.driver.extraJavaOptions": "-XX:+NoSuchOption"})
    output = failed_start(project)
    assert "profile key `spark_conf.spark.driver.extraJavaOptions`" in output, output
    assert "Unrecognized VM option 'NoSuchOption'" in output

    # The JVM exits at once: Java's own reason, and the key that made its command line.
    project.set_spark_conf(**{"spark.driver.memory": "1k"})
    output = failed_start(project)
    assert "profile key `spark_conf.spark.driver.memory`" in output, output
    assert "Too small maximum heap" in output and "spark.log" in output
    assert "Too small maximum heap" in (project.root / "logs" / "spark.log").read_text()

    # Spark's launch script runs $JAVA_HOME/bin/java, whatever `java` PATH has.
    project.set_spark_conf()
    project.extra_env = {"JAVA_HOME": str(tmp_path / "no-java-here")}
    output = failed_start(project)
    assert f"JAVA_HOME is {tmp_path / 'no-java-here'}, which has no bin/java" in output, output


def test_the_jvm_never_outlives_dbt(tmp_path: Path, cache: Path) -> None:
    project = LifetimeProject(tmp_path / "project", cache)
    project.model("slow", SLOW_MODEL)
    archives = cache / "dbt-s3tables" / "jvm"

    # SIGKILL, then SIGTERM, while the statement runs: this first start writes the class
    # archive as it exits, which took 30 s and more without the reaper.
    killed_writer: set[str] = set()
    for ending in (signal.SIGKILL, signal.SIGTERM):
        dbt, console = project.launch("run")
        jvm = driver_jvm_of(dbt, console)
        wait_for_line(dbt, console, "START sql table model")
        writers = {p.name.split(".")[1] for p in archives.glob("*.writer")}
        # The next start removed the unfinished file of the JVM killed before.
        assert not writers & killed_writer, sorted(archives.iterdir())
        assert not any(p.name.split(".")[1] in killed_writer for p in archives.iterdir())
        killed_writer = writers
        dbt.send_signal(ending)
        dbt.wait()
        assert seconds_until_gone(jvm, 60) < JVM_GONE_WITHIN, ending

    # An exception ends dbt while its JVM runs (Spark refuses the driver's memory).
    project.set_spark_conf(**{"spark.driver.memory": "64m"})
    dbt, console = project.launch("run")
    jvm = driver_jvm_of(dbt, console)
    assert dbt.wait() != 0
    assert not jvm_alive(jvm)  # dbt stopped it before it ended
    output = console.read_text()
    assert_readable(output)
    assert len(output.splitlines()) <= 15, output
    assert "profile key `spark_conf.spark.driver.memory`" in output, output
    assert "needs at least 450 MB (INVALID_DRIVER_MEMORY)" in output
    dbt_log = (project.root / "logs" / "dbt.log").read_text()
    assert "INVALID_DRIVER_MEMORY" in dbt_log and "\tat org.apache.spark" in dbt_log

    # A normal exit: dbt does not wait for Spark's shutdown; the reaper bounds it.
    project.set_spark_conf()
    project.model("slow", "select 1 as id")
    dbt, console = project.launch("run")
    jvm = driver_jvm_of(dbt, console)
    assert dbt.wait() == 0, console.read_text()
    assert seconds_until_gone(jvm, 60) < JVM_GONE_WITHIN
    # Three writers were killed (MAX_ATTEMPTS): this start removed the last one's files
    # and wrote none.
    assert sorted(p.suffix for p in archives.iterdir()) == [".attempts"]
