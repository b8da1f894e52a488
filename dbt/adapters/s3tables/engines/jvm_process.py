"""The Spark driver JVM as a process: its launch, where its output goes, and its end.

PySpark starts the JVM (`spark-submit`, which `exec`s into it) with a pipe on its stdin;
the JVM's gateway calls `System.exit` when the pipe reaches end-of-file, that is when the
Python process is gone. The exit then runs Spark's shutdown hooks and, on a first start,
writes the class archive (`class_archive.py`), which took 30-36 s on a busy 2-core machine:
all that time the JVM lived on, its parent gone, holding its heap. What this module adds:

- A reaper process (`jvm_reaper.py`) watches dbt and the JVM. At dbt's exit (normal, or
  by an exception) the JVM's stdin is closed and the reaper told so: dbt returns at once,
  and the reaper gives the JVM `EXIT_WAIT_SECONDS` (`ARCHIVE_EXIT_WAIT_SECONDS` while it
  writes the class archive) to run Spark's shutdown hooks, then kills it. When dbt ends
  without running Python at all (SIGTERM, SIGKILL, a crash), the reaper gives the JVM
  `REAPER_GRACE_SECONDS`. Without a reaper (it could not start), dbt itself waits for the
  JVM as long, then kills it. (Between the launch and the reaper's start, about a second,
  only the JVM's own end-of-file watch stops it.)
- The JVM's stdout and stderr go to the JVM log (`spark.log`), never to the console; a
  JVM that cannot start leaves its reason there.
- A long-lived command that runs many dbt invocations in one process (the watch loop)
  ends by stopping the JVM and waiting for it (`current_jvm`, `stop_and_wait`): there the
  JVM must not outlive the process even for the seconds the reaper allows.
- Java options from the profile are tried with `java -version` first: Spark starts the JVM
  with `-XX:+IgnoreUnrecognizedVMOptions`, which silently drops a mistyped option.
"""

from __future__ import annotations

import atexit
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.s3tables.engines import jvm_reaper

if TYPE_CHECKING:
    from py4j.java_gateway import JavaGateway

logger = AdapterLogger("s3tables")

EXIT_WAIT_SECONDS = 10.0
ARCHIVE_EXIT_WAIT_SECONDS = 60.0
REAPER_GRACE_SECONDS = 3.0
# `java -version` with the profile's options normally answers in well under a second; an
# option that makes Java wait (a debugger agent with `suspend=y`) is not judged.
OPTION_CHECK_SECONDS = 15.0
# Java's lines around the reason it gives for not starting.
_JAVA_FRAME_LINES = (
    "Error: Could not create the Java Virtual Machine.",
    "Error: A fatal exception has occurred. Program will exit.",
    "Error occurred during initialization of VM",
)
# A line of the JVM's log (log4j's `2026-01-31 12:00:00 WARN ...`, or Spark's default
# `26/01/31 12:00:00 WARN ...`).
_LOG_LINE = re.compile(r"\d{2,4}[-/]\d\d[-/]\d\d \d\d:\d\d:\d\d ")


class JvmExited(Exception):
    """The driver JVM ended (or never ran) before Spark could connect to it; what it
    printed is in the JVM log."""


@dataclass
class DriverJvm:
    """The running JVM of this process: its gateway and the reaper that watches it."""

    gateway: JavaGateway
    reaper: subprocess.Popen[bytes] | None
    exit_wait: float

    @property
    def process(self) -> subprocess.Popen[bytes]:
        proc: subprocess.Popen[bytes] = self.gateway.proc
        return proc

    def stop(self) -> None:
        """dbt's exit: the Python side lets go of the JVM, the JVM's stdin is closed (its
        gateway then exits the JVM), and the reaper bounds how long it takes; without a
        reaper, dbt waits at most `exit_wait` seconds and kills it. Idempotent."""
        process = self.process
        self._let_go()
        if process.stdin is not None:
            process.stdin.close()
        if self.reaper is not None and self.reaper.poll() is None:
            if not self.reaper.stdin.closed:  # type: ignore[union-attr]  # started with stdin=PIPE
                self.reaper.stdin.write(jvm_reaper.NORMAL_EXIT)  # type: ignore[union-attr]  # started with stdin=PIPE
                self.reaper.stdin.close()  # type: ignore[union-attr]  # started with stdin=PIPE
            return
        try:
            process.wait(self.exit_wait)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):  # Ctrl-C: stop waiting
            logger.debug(f"The Spark JVM did not stop within {self.exit_wait:.0f} s: killed")
            process.kill()
            process.wait()

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop_and_wait(self) -> float:
        """The end of a long-lived command, which must not leave the JVM behind: `stop`,
        then wait until the JVM has ended (Spark's shutdown hooks; at most `exit_wait`
        seconds, then it is killed; a Ctrl-C while waiting kills it at once). The seconds
        it took."""
        started = time.monotonic()
        try:
            self.stop()
            self.process.wait(self.exit_wait)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):
            logger.debug(f"The Spark JVM did not stop within {self.exit_wait:.0f} s: killed")
            self.process.kill()
            self.process.wait()
        return time.monotonic() - started

    def _let_go(self) -> None:
        """Nothing more goes to the JVM: the Python side's finalizers, run as the
        interpreter ends, would each print py4j's traceback of a closed connection; and the
        JVM closing its accumulator connection as it stops is no error to print."""
        from pyspark import SparkContext

        context = SparkContext._active_spark_context
        server = getattr(context, "_accumulatorServer", None) if context is not None else None
        if server is not None:
            server.handle_error = lambda request, client_address: None
        client = getattr(self.gateway, "_gateway_client", None)
        if client is not None:
            client.is_connected = False

    def kill(self) -> None:
        """End the JVM at once: one that failed to start has nothing to finish (and its
        class archive, of a start that failed, is not worth writing)."""
        global _current
        atexit.unregister(self.stop)
        if _current is self:
            _current = None
        self.process.kill()
        self.process.wait()
        self._release_reaper()

    def _release_reaper(self) -> None:
        if self.reaper is not None:
            self.reaper.stdin.close()  # type: ignore[union-attr]  # started with stdin=PIPE
            try:
                self.reaper.wait(REAPER_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                pass  # it sees the JVM gone and ends by itself


# This process's driver JVM, once launched (None again after a start that failed).
_current: DriverJvm | None = None


def current_jvm() -> DriverJvm | None:
    """This process's driver JVM: None before Spark starts in it (or with a remote engine)."""
    return _current


def launch_gateway_logged(
    launch_settings: dict[str, str],
    log_file: str | None,
    pass_fds: tuple[int, ...] = (),
    writes_archive: bool = False,
) -> DriverJvm:
    """Start the driver JVM with these Spark settings and return its gateway, ready for a
    SparkContext; it is stopped when this process exits (see the module docstring).
    `pass_fds` stay open in the JVM (the class archive writer's lock). Raises `JvmExited`
    when the JVM ends before Spark connects to it."""
    global _current
    from pyspark.conf import SparkConf
    from pyspark.java_gateway import launch_gateway

    conf = SparkConf(loadDefaults=False)
    conf.setAll(list(launch_settings.items()))
    output: BinaryIO | None = None
    popen_kwargs: dict[str, object] = {"pass_fds": pass_fds}
    if log_file:
        os.makedirs(os.path.dirname(log_file), exist_ok=True)
        output = open(log_file, "ab")  # the JVM gets its own copy; this one is closed below
        popen_kwargs.update(stdout=output, stderr=output)
    try:
        gateway = launch_gateway(conf, popen_kwargs=popen_kwargs)  # type: ignore[no-untyped-call]  # pyspark's is untyped
    except Exception as error:
        raise JvmExited(str(error)) from error
    finally:
        if output is not None:
            output.close()
    exit_wait = ARCHIVE_EXIT_WAIT_SECONDS if writes_archive else EXIT_WAIT_SECONDS
    reaper = start_reaper(gateway.proc.pid, exit_wait)
    jvm = DriverJvm(gateway, reaper, exit_wait)
    atexit.register(jvm.stop)
    _current = jvm
    return jvm


def start_reaper(jvm_pid: int, exit_wait: float) -> subprocess.Popen[bytes] | None:
    """The process that ends the JVM once this one ends (see the module docstring)."""
    pidfd = -1
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(jvm_pid)
        except OSError:
            pidfd = -1
    arguments = [str(jvm_pid), str(pidfd), str(REAPER_GRACE_SECONDS), str(exit_wait)]
    try:
        return subprocess.Popen(
            [sys.executable, "-I", jvm_reaper.__file__, *arguments],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(pidfd,) if pidfd >= 0 else (),
            start_new_session=True,
        )
    except OSError as error:
        # The JVM's own end-of-file watch still stops it, if later.
        logger.warning(f"Could not start the Spark JVM's reaper process: {error}")
        return None
    finally:
        if pidfd >= 0:
            os.close(pidfd)


def java_refusal(output: str) -> str:
    """The reason Java gives for not starting, from its output ("" if none is found):
    `Unrecognized VM option 'X'`, `Too small maximum heap`, ... Java's frame lines, its
    warnings, a crash report's `#` lines and log lines (which start with a date) are not
    reasons."""
    for line in output.splitlines():
        line = line.strip()
        if not line or line in _JAVA_FRAME_LINES or line.startswith(("#", "WARNING:")):
            continue
        if not _LOG_LINE.match(line):
            return line
    return ""


def split_java_options(options: str) -> list[str]:
    """Java options as Spark splits `spark.driver.extraJavaOptions`: at blanks outside
    quotes (raises ValueError on an unclosed quote, as Spark refuses it)."""
    return shlex.split(options)


def java_option_refusal(java: str, options: str) -> str | None:
    """Java's reason for refusing these options, or None when it accepts them (or does not
    answer in time)."""
    try:
        arguments = split_java_options(options)
    except ValueError as error:
        return f"it cannot be split into options ({error})"
    try:
        result = subprocess.run(
            [java, *arguments, "-version"],
            capture_output=True,
            text=True,
            timeout=OPTION_CHECK_SECONDS,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return None
    if result.returncode == 0:
        return None
    return java_refusal(result.stderr + result.stdout) or f"java exits with {result.returncode}"
