"""`dbt-s3tables-watch`, the process: run the selection once, then poll the selected files'
stamps and run again after each save, every dbt command through one `dbtRunner` in this
process (arguments.py says which commands, files.py which files).

What stays warm between runs is what dbt and the adapter keep per process: dbt's imports
and partial parse, the catalog libraries, and with `method: session` the SparkSession
(`engines/spark_session.py` starts one per process and every invocation reuses it; the
JVM ends only when the process does). A `thrift` or `connect` profile works the same way:
only dbt runs here, and each run opens its server sessions as `dbt run` does.

Ctrl-C (SIGINT) and SIGTERM stop the watch, a run in progress too (dbt cancels its
statements as at a Ctrl-C): then the JVM is stopped and waited for, so it never outlives
this process, and the exit code is 0. The watch opens no port of its own.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from dbt.adapters.s3tables.engines.jvm_process import EXIT_WAIT_SECONDS, current_jvm
from dbt.adapters.s3tables.watch.arguments import (
    COMMAND,
    UsageError,
    WatchArguments,
    parse,
    parser,
    read_project,
)
from dbt.adapters.s3tables.watch.files import (
    Stamps,
    carried_over,
    changed,
    project_files,
    selected_files,
    stamps,
)
from dbt.adapters.s3tables.watch.lines import (
    failure_text,
    run_line,
    stopped_line,
    watching_line,
)

if TYPE_CHECKING:
    from dbt.cli.main import dbtRunnerResult

Invoke = Callable[[list[str]], "dbtRunnerResult"]
Say = Callable[[str], None]
# After a change is seen, the files are read again this much later until they are still
# (an editor's save may take more than one write).
SETTLE_FRACTION = 0.25
SETTLE_LIMIT_SECONDS = 2.0


class Stopped(Exception):
    """Spark's JVM ended while the watch ran: every later run would fail."""


class Watch:
    """The loop of one watch: `invoke` runs a dbt command in this process (dbtRunner's
    `invoke`), `say` prints a line of the watch's, `sleep` and `clock` are time's (a test
    gives its own), `spark_gone` tells whether this process's Spark JVM has ended."""

    def __init__(
        self,
        arguments: WatchArguments,
        invoke: Invoke,
        say: Say,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        spark_gone: Callable[[], bool] = lambda: False,
    ) -> None:
        self.arguments = arguments
        self.invoke = invoke
        self.say = say
        self.sleep = sleep
        self.clock = clock
        self.spark_gone = spark_gone
        self.project = read_project(arguments.project_dir)
        self.command = f"dbt {arguments.verb} {arguments.selection_text()}"
        # The files watched, and whether dbt listed them (else: every source file).
        self.files: frozenset[Path] = frozenset()
        self.listed = True

    def loop(self) -> None:
        """List the selection's files, run once, then run after each save, until a
        KeyboardInterrupt (Ctrl-C, or SIGTERM: `stop_signals`) or `Stopped`. The files are
        known before the first run, so a save while Spark starts runs again."""
        self.files, self.listed = self.listing()
        self.say(watching_line(len(self.files), self.command, self.listed, None))
        before = self.run_and_list([], self.reading())
        while True:
            self.sleep(self.arguments.interval)
            now = self.reading()
            saved = self.differences(before, now)
            if saved:
                before = self.run_and_list(saved, self.settled(now))
            else:
                before = now

    def reading(self) -> Stamps:
        """The watched files' stamps now; without a listing, every source file's (a new
        file counts)."""
        if self.listed:
            return stamps(self.files)
        return stamps(project_files(self.project.sources))

    def differences(self, before: Stamps, now: Stamps) -> list[Path]:
        found = changed(before, now)
        if not self.listed:  # a source file made or removed may mend the project
            found = sorted({*found, *(before.keys() ^ now.keys())})
        return found

    def settled(self, now: Stamps) -> Stamps:
        """The stamps once two readings a moment apart agree (bounded)."""
        pause = self.arguments.interval * SETTLE_FRACTION
        waited = 0.0
        while waited < SETTLE_LIMIT_SECONDS:
            self.sleep(pause)
            waited += pause
            again = self.reading()
            if again == now:
                break
            now = again
        return now

    def run_and_list(self, saved: list[Path], now: Stamps) -> Stamps:
        """One run (`now`: the files' stamps it starts from), its line, then the files to
        watch; the stamps to compare the next reading with (those the run started from: a
        save during it runs again)."""
        started = self.clock()
        result = self.checked(self.arguments.run_command())
        seconds = self.clock() - started
        failure = None if result.success else failure_text(result)
        gone = self.spark_gone()
        project_dir = self.arguments.project_dir
        self.say(run_line(saved, project_dir, self.command, seconds, failure, not gone))
        if gone:
            raise Stopped
        earlier, was_listed = len(self.files), self.listed
        self.files, self.listed = self.listing()
        if len(self.files) != earlier or self.listed != was_listed:
            self.say(watching_line(len(self.files), self.command, self.listed, earlier))
        return carried_over(now, self.files)

    def listing(self) -> tuple[frozenset[Path], bool]:
        """The selected nodes' files, as `dbt ls` names them (and True); when it cannot
        (the project does not parse) or names none, every source file (and False)."""
        result = self.checked(self.arguments.list_command())
        if result.success and isinstance(result.result, list):
            files = selected_files(
                (str(line) for line in result.result),
                self.arguments.project_dir,
                self.project.name,
            )
            if files:
                return files, True
        return project_files(self.project.sources), False

    def checked(self, arguments: list[str]) -> dbtRunnerResult:
        """dbt's result; a Ctrl-C during the invocation (dbt has cancelled what ran and
        returns it as the result's exception) stops the watch."""
        result = self.invoke(arguments)
        if isinstance(result.exception, KeyboardInterrupt):
            raise KeyboardInterrupt
        return result


def say(text: str) -> None:
    """A line of the watch's, timed as dbt's console lines are."""
    print(f"{datetime.now():%H:%M:%S}  {text}", flush=True)


@contextmanager
def stop_signals(received: list[str]) -> Iterator[Callable[[], None]]:
    """SIGTERM stops the watch as Ctrl-C does (a KeyboardInterrupt where the process is,
    which dbt handles by cancelling its statements); `received` gets the signal's name.
    Gives `reclaim`, which takes SIGINT back after each dbt invocation: pyspark's
    SparkContext installs a handler of its own as Spark starts, which calls the JVM from
    inside the signal handler (to cancel every job), and a Ctrl-C arriving while the
    process itself waits on the JVM then left the watch stuck, seen once in a test run
    (more than 90 s, nothing printed)."""

    def interrupted(number: int, frame: FrameType | None) -> None:
        received.append(signal.Signals(number).name)
        raise KeyboardInterrupt

    def reclaim() -> None:
        if signal.getsignal(signal.SIGINT) is not interrupted:
            signal.signal(signal.SIGINT, interrupted)

    previous = {
        number: signal.signal(number, interrupted) for number in (signal.SIGINT, signal.SIGTERM)
    }
    previous_hook = sys.unraisablehook

    def unraisable(raised: sys.UnraisableHookArgs) -> None:
        # A stop signal that lands in a finalizer (py4j releases Java objects in them)
        # cannot propagate: Python would print it with a traceback and go on. It is in
        # `received`; `stopping_sleep` and `stopping_invoke` stop the watch at their next
        # step instead.
        if not isinstance(raised.exc_value, KeyboardInterrupt):
            previous_hook(raised)

    sys.unraisablehook = unraisable
    try:
        yield reclaim
    finally:
        sys.unraisablehook = previous_hook
        for number, handler in previous.items():
            signal.signal(number, handler)


def stopping_sleep(received: list[str]) -> Callable[[float], None]:
    """The poll's sleep, which stops the watch once a stop signal came (`received`) even
    where its KeyboardInterrupt could not propagate (`stop_signals`)."""

    def sleep(seconds: float) -> None:
        time.sleep(seconds)
        if received:
            raise KeyboardInterrupt

    return sleep


def stopping_invoke(invoke: Invoke, received: list[str], reclaim: Callable[[], None]) -> Invoke:
    """`invoke` (dbtRunner's), then `reclaim` (SIGINT taken back from pyspark), and a stop
    when a stop signal came during the invocation (`received`, by `stop_signals`' handler),
    however dbt reported it. Seen once in a test run: after a Ctrl-C the watch went on
    polling, its last line a `dbt ls` that had named nothing (the likely path: the signal
    landed in that `dbt ls`, whose result did not carry the KeyboardInterrupt)."""

    def invoked(arguments: list[str]) -> dbtRunnerResult:
        try:
            result = invoke(arguments)
        finally:
            reclaim()
        if received:
            raise KeyboardInterrupt
        return result

    return invoked


def spark_gone() -> bool:
    jvm = current_jvm()
    return jvm is not None and not jvm.alive()


def stop_spark() -> float | None:
    """Stop this process's Spark JVM and wait for it to end (None: Spark never started
    here). Its first start writes the class archive as it exits: that wait is said."""
    jvm = current_jvm()
    if jvm is None or not jvm.alive():
        return None
    if jvm.exit_wait > EXIT_WAIT_SECONDS:
        say(
            "Stopping Spark: its JVM writes its class archive first, which makes the next "
            f"start faster (at most {jvm.exit_wait:.0f} s; Ctrl-C again skips it)"
        )
    return jvm.stop_and_wait()


def main(argv: list[str] | None = None) -> int:
    try:
        arguments = parse(argv)
    except UsageError as error:
        parser().error(str(error))
    # Line by line even into a pipe or a file: dbt's lines and the watch's, as they happen.
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)
    received: list[str] = []
    code = 0
    with stop_signals(received) as reclaim:
        try:
            # dbt's command-line module, imported once (a Ctrl-C during it stops quietly):
            # the first of what this process keeps warm.
            from dbt.cli.main import dbtRunner

            invoke = stopping_invoke(dbtRunner().invoke, received, reclaim)
            Watch(
                arguments, invoke, say, sleep=stopping_sleep(received), spark_gone=spark_gone
            ).loop()
        except KeyboardInterrupt:
            pass  # the signal's name is in `received`
        except Stopped:
            say(f"Spark's JVM ended (the run's error above says why): start {COMMAND} again")
            code = 1
        finally:
            try:
                spark_seconds = stop_spark()
            except KeyboardInterrupt:
                spark_seconds = None
    if not code:
        # Nothing recorded: pyspark's handler took the Ctrl-C (in the first run, before
        # `reclaim`; `stop_signals`).
        say(stopped_line(received[0] if received else "SIGINT", spark_seconds))
    return code


if __name__ == "__main__":
    sys.exit(main())
