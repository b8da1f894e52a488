"""Spark that cannot start, in one sentence naming the cause and the profile key (Spark's
memory check, Java refusing its options or not starting, a crash); the driver JVM's end at
dbt's exit (told to stop, waited for, killed after the wait), and the reaper process that
ends it when dbt is gone, both tried on stand-in processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from dbt.adapters.s3tables.engines import jvm_reaper
from dbt.adapters.s3tables.engines.jvm_process import (
    DriverJvm,
    java_option_refusal,
    java_refusal,
    split_java_options,
)
from dbt.adapters.s3tables.engines.spark_errors import (
    JavaError,
    context_start_error,
    jvm_crashed,
    jvm_exit_error,
)
from dbt.adapters.s3tables.errors import ProfileError

DRIVER_MEMORY = JavaError(
    "org.apache.spark.SparkIllegalArgumentException",
    "[INVALID_DRIVER_MEMORY] System memory 67108864 must be at least 471859200. Please "
    'increase heap size using the --driver-memory option or "spark.driver.memory" in Spark '
    "configuration.",
)


def test_too_little_driver_memory_names_the_key_and_the_minimum() -> None:
    error = context_start_error([DRIVER_MEMORY], {"spark.driver.memory": "64m"})
    assert isinstance(error, ProfileError)
    assert error.msg == (
        "s3tables profile key `spark_conf.spark.driver.memory`: Spark cannot start: it gets "
        "64 MB of memory (`64m`) and needs at least 450 MB (INVALID_DRIVER_MEMORY). Fix: set "
        "it to 512m or more (Spark's default is 1g)"
    )


def test_too_little_executor_memory_names_its_own_key() -> None:
    chain = [
        JavaError(
            "org.apache.spark.SparkIllegalArgumentException",
            "[INVALID_EXECUTOR_MEMORY] Executor memory 1048576 must be at least 471859200.",
        )
    ]
    message = context_start_error(chain, {}).msg
    assert "`spark_conf.spark.executor.memory`" in message and "gets 1 MB" in message
    assert "(`" not in message  # not set in the profile: no value to quote


def test_another_start_failure_gives_spark_s_reason_and_the_settings_to_check() -> None:
    chain = [
        JavaError("org.apache.spark.SparkException", "A master URL must be set"),
    ]
    message = context_start_error(chain, {"spark.master": "x", "spark.a": "secret"}).msg
    assert message.startswith("Spark cannot start: SparkException: A master URL must be set.")
    assert "(it has `spark.master`, `spark.a`)" in message and "secret" not in message


def test_a_jvm_that_refuses_to_start_names_the_profile_key_but_not_its_value() -> None:
    settings = {"spark.driver.extraJavaOptions": "-Dtoken=abc -Xss1k", "spark.x": "1"}
    message = jvm_exit_error("Too small stack", settings, "/p/logs/spark.log").msg
    assert message == (
        "s3tables profile key `spark_conf.spark.driver.extraJavaOptions`: Spark's driver JVM "
        "does not start with it: Too small stack (the JVM's output is in /p/logs/spark.log). "
        "Fix: correct or remove it"
    )
    both = {**settings, "spark.driver.memory": "1k"}
    assert "with `spark.driver.extraJavaOptions`, `spark.driver.memory`: " in str(
        jvm_exit_error("x", both, None)
    )


def test_a_jvm_that_exits_without_profile_settings_points_at_java() -> None:
    message = jvm_exit_error("", {}, None).msg
    assert message == (
        "Spark cannot start: its driver JVM exited before Spark could connect to it. "
        "Fix: check the Java runtime and JAVA_TOOL_OPTIONS."
    )


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        (
            "Unrecognized VM option 'NoSuchOption'\n"
            "Error: Could not create the Java Virtual Machine.\n"
            "Error: A fatal exception has occurred. Program will exit.\n",
            "Unrecognized VM option 'NoSuchOption'",
        ),
        (
            "Error occurred during initialization of VM\nToo small maximum heap\n",
            "Too small maximum heap",
        ),
        (
            "\nThe Java thread stack size specified is too small. Specify at least 136k\n",
            "The Java thread stack size specified is too small. Specify at least 136k",
        ),
        ("Error: Could not create the Java Virtual Machine.\n", ""),
        (
            "WARNING: Using incubator modules: jdk.incubator.vector\n"
            "2026-01-31 12:00:00 WARN Utils: Your hostname resolves to a loopback address\n"
            "26/01/31 12:00:00 WARN NativeCodeLoader: Unable to load native-hadoop library\n"
            "# A fatal error has been detected by the Java Runtime Environment:\n",
            "",
        ),
    ],
)
def test_java_s_reason_is_its_first_own_line(output: str, reason: str) -> None:
    assert java_refusal(output) == reason


def test_a_crash_report_is_recognised() -> None:
    report = "#\n# A fatal error has been detected by the Java Runtime Environment:\n#\n#  SIGBUS"
    assert jvm_crashed(report)
    assert not jvm_crashed("Too small maximum heap")


def test_options_split_as_spark_splits_them() -> None:
    assert split_java_options('-Da="x y" -Xss4m') == ["-Da=x y", "-Xss4m"]
    with pytest.raises(ValueError):
        split_java_options('-Da="x')


def fake_java(folder: Path, script: str) -> str:
    java = folder / "java"
    java.write_text(f"#!/bin/sh\n{script}\n")
    java.chmod(0o755)
    return str(java)


def test_java_options_are_tried_with_java_itself(tmp_path: Path) -> None:
    refusing = fake_java(
        tmp_path,
        'case "$1" in -XX:+NoSuchOption) echo "Unrecognized VM option \'NoSuchOption\'" >&2; '
        'echo "Error: Could not create the Java Virtual Machine." >&2; exit 1;; esac',
    )
    assert java_option_refusal(refusing, "-XX:+NoSuchOption") == (
        "Unrecognized VM option 'NoSuchOption'"
    )
    assert java_option_refusal(refusing, "-Xss4m") is None
    assert java_option_refusal(refusing, '-Dx="y') is not None


# --- the reaper ---------------------------------------------------------------------------


def start_reaper(
    stand_in: subprocess.Popen[bytes], grace: float, exit_grace: float = 30
) -> subprocess.Popen[bytes]:
    pidfd = os.pidfd_open(stand_in.pid) if hasattr(os, "pidfd_open") else -1
    arguments = [str(stand_in.pid), str(pidfd), str(grace), str(exit_grace)]
    try:
        return subprocess.Popen(
            [sys.executable, "-I", jvm_reaper.__file__, *arguments],
            stdin=subprocess.PIPE,
            pass_fds=(pidfd,) if pidfd >= 0 else (),
        )
    finally:
        if pidfd >= 0:
            os.close(pidfd)


# A stand-in JVM that ignores the end of its stdin and SIGTERM, as a JVM busy in its
# shutdown does.
STUBBORN = "import signal, time; signal.signal(15, signal.SIG_IGN); time.sleep(60)"


def test_the_reaper_kills_the_jvm_after_its_grace_once_dbt_is_gone() -> None:
    stand_in = subprocess.Popen([sys.executable, "-c", STUBBORN])
    reaper = start_reaper(stand_in, grace=0.5)
    time.sleep(0.3)
    assert stand_in.poll() is None  # dbt (this test) is still there
    gone = time.monotonic()
    reaper.stdin.close()  # type: ignore[union-attr]  # what dbt's end does to the pipe
    assert stand_in.wait(timeout=10) == -9
    assert 0.4 < time.monotonic() - gone < 5
    assert reaper.wait(timeout=5) == 0


def test_a_normal_exit_gives_the_jvm_its_exit_grace_without_dbt_waiting() -> None:
    stand_in = subprocess.Popen([sys.executable, "-c", STUBBORN], stdin=subprocess.PIPE)
    reaper = start_reaper(stand_in, grace=0.2, exit_grace=1.5)
    time.sleep(0.3)
    jvm = DriverJvm(SimpleNamespace(proc=stand_in), reaper=reaper, exit_wait=1.5)  # type: ignore[arg-type]
    started = time.monotonic()
    jvm.stop()  # what dbt's normal exit does
    assert time.monotonic() - started < 0.5  # dbt does not wait
    assert stand_in.wait(timeout=10) == -9
    assert 1.2 < time.monotonic() - started < 6  # the exit grace, not the 0.2 s one
    assert reaper.wait(timeout=5) == 0


def test_the_reaper_ends_with_a_jvm_that_ends_first() -> None:
    stand_in = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    reaper = start_reaper(stand_in, grace=30)
    stand_in.wait()
    assert reaper.wait(timeout=10) == 0
    reaper.stdin.close()  # type: ignore[union-attr]


# --- dbt's own end --------------------------------------------------------------------------


def stand_in_jvm(code: str) -> DriverJvm:
    """A DriverJvm around a stand-in process with a pipe on its stdin, as PySpark's."""
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)
    return DriverJvm(SimpleNamespace(proc=process), reaper=None, exit_wait=1.0)  # type: ignore[arg-type]


def test_at_exit_the_jvm_is_told_to_stop_and_waited_for() -> None:
    # PySpark's gateway exits when its stdin reaches end-of-file.
    jvm = stand_in_jvm("import sys, time; sys.stdin.read(); time.sleep(0.3)")
    jvm.stop()
    assert jvm.process.returncode == 0


def test_a_jvm_that_does_not_stop_in_time_is_killed() -> None:
    jvm = stand_in_jvm("import sys, time; sys.stdin.read(); time.sleep(60)")
    started = time.monotonic()
    jvm.stop()
    assert jvm.process.returncode == -9 and time.monotonic() - started < 10


# --- a long-lived command's end (the watch loop) ----------------------------------------------


def test_a_long_lived_command_waits_until_the_jvm_has_ended() -> None:
    # Ends a moment after its stdin's end, as Spark's shutdown hooks take a moment.
    code = "import sys, time; sys.stdin.read(); time.sleep(0.5)"
    stand_in = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)
    reaper = start_reaper(stand_in, grace=0.2, exit_grace=30)
    jvm = DriverJvm(SimpleNamespace(proc=stand_in), reaper=reaper, exit_wait=30)  # type: ignore[arg-type]
    assert jvm.alive()
    seconds = jvm.stop_and_wait()
    # Ended by itself, before the call returned; not by the reaper's kill.
    assert stand_in.returncode == 0 and not jvm.alive()
    assert 0.4 < seconds < 10
    assert reaper.wait(timeout=5) == 0
    jvm.stop()  # what the process's exit then does: nothing more


def test_a_jvm_that_does_not_end_is_killed_before_the_command_ends() -> None:
    stand_in = subprocess.Popen([sys.executable, "-c", STUBBORN], stdin=subprocess.PIPE)
    reaper = start_reaper(stand_in, grace=0.2, exit_grace=30)
    jvm = DriverJvm(SimpleNamespace(proc=stand_in), reaper=reaper, exit_wait=1.0)  # type: ignore[arg-type]
    seconds = jvm.stop_and_wait()
    assert stand_in.returncode == -9 and 0.9 < seconds < 10
    assert reaper.wait(timeout=5) == 0
