"""Lines that show slow work while it runs: `Ticker` says a line every few seconds while a
block runs (Spark starting, a server being waited for, a node's statement), and
`progress_line` words what Spark reports of a statement's jobs, stages, tasks and rows
read (`SparkProgress`; `summarise` adds up what the in-process engine reads)."""

from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from dbt.adapters.events.logging import AdapterLogger

logger = AdapterLogger("s3tables")

# The profile's `progress_interval_seconds` default; 0 turns the lines off.
DEFAULT_PROGRESS_SECONDS = 10
# Spark starting and server waits: a line this often while they last.
START_TICK_SECONDS = 10


@dataclass(frozen=True)
class SparkProgress:
    """What Spark reports of the jobs one statement started so far."""

    stages_done: int
    stages: int
    tasks_done: int
    tasks: int
    # None where the engine does not report jobs (Spark Connect reports stages).
    jobs_done: int | None = None
    jobs: int | None = None
    # Summed over the statement's stages, where Spark reports them (None: not reported).
    # Rows written are not among them: Spark counts an Iceberg write's rows in its SQL
    # metrics only, not its task metrics.
    rows_read: int | None = None
    bytes_read: int | None = None


@dataclass(frozen=True)
class StageReading:
    """One stage as Spark's status store has it: status (ACTIVE, COMPLETE, SKIPPED, ...),
    tasks, finished tasks, and the rows and bytes the finished tasks read."""

    status: str
    tasks: int
    tasks_done: int
    rows_read: int
    bytes_read: int


@dataclass(frozen=True)
class JobReading:
    """One job: its status (RUNNING, SUCCEEDED, FAILED, UNKNOWN) and its stages."""

    status: str
    stages: tuple[StageReading, ...]


def summarise(jobs: list[JobReading]) -> SparkProgress | None:
    """The progress of a statement's jobs (None: no job started yet). A skipped stage
    (its output reused) is left out."""
    if not jobs:
        return None
    stages = [stage for job in jobs for stage in job.stages if stage.status != "SKIPPED"]
    rows = sum(stage.rows_read for stage in stages)
    size = sum(stage.bytes_read for stage in stages)
    return SparkProgress(
        stages_done=sum(1 for stage in stages if stage.status == "COMPLETE"),
        stages=len(stages),
        tasks_done=sum(stage.tasks_done for stage in stages),
        tasks=sum(stage.tasks for stage in stages),
        jobs_done=sum(1 for job in jobs if job.status == "SUCCEEDED"),
        jobs=len(jobs),
        rows_read=rows or None,
        bytes_read=size or None,
    )


def size_text(count: int) -> str:
    """Bytes as a short figure: 980 B, 12.3 MB."""
    size = float(count)
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    raise AssertionError("unreachable")


def progress_line(node: str, elapsed: float, progress: SparkProgress | None) -> str:
    """`orders: running for 40 s; Spark jobs 1/2, stages 3/5, tasks 37/200, 1,200 rows
    read, 88.0 kB read`: what the engine reports, the elapsed time at least."""
    text = f"{node}: running for {elapsed:.0f} s"
    if progress is None:
        return text
    parts = []
    if progress.jobs is not None:
        parts.append(f"Spark jobs {progress.jobs_done}/{progress.jobs}")
    parts.append(f"stages {progress.stages_done}/{progress.stages}")
    parts.append(f"tasks {progress.tasks_done}/{progress.tasks}")
    if progress.rows_read:
        parts.append(f"{progress.rows_read:,} rows read")
    if progress.bytes_read:
        parts.append(f"{size_text(progress.bytes_read)} read")
    return f"{text}; {', '.join(parts)}"


def node_label(connection_name: str) -> str:
    """A node's name from its connection's (dbt names a connection after the node's unique
    id, `model.<project>.<name>`)."""
    parts = connection_name.split(".", 2)
    return parts[2] if len(parts) == 3 else connection_name


class Ticker:
    """While its block runs, `say(line(seconds elapsed))` every `interval` seconds (the
    first after `interval`); nothing when `interval` is 0 or the block ends sooner.

    One daemon thread says every ticker's lines (`_TickSchedule`): entering and leaving a
    block takes a lock, where a thread of its own per block was started and joined, each
    a wait for the GIL while other threads run Python (every statement runs in one)."""

    def __init__(
        self,
        interval: float,
        line: Callable[[float], str],
        say: Callable[[str], None] = logger.info,
        what: str = "a statement",
    ) -> None:
        self.interval = interval
        self.line = line
        self.say = say
        # What the lines are about (a node's name): the line saying they stopped names it.
        self.what = what
        self.running = False
        self.started = 0.0

    def __enter__(self) -> Ticker:
        if self.interval > 0:
            self.started = time.monotonic()
            _SCHEDULE.add(self, self.started + self.interval)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.interval > 0:
            _SCHEDULE.end(self)


class _TickSchedule:
    """The running tickers, by when each says its next line, and the one thread that says
    them (started with the first). An ended ticker leaves the queue when its turn comes."""

    def __init__(self) -> None:
        self._start_afresh()

    def _start_afresh(self) -> None:
        self._due: list[tuple[float, int, Ticker]] = []
        self._order = itertools.count()
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def add(self, ticker: Ticker, due: float) -> None:
        with self._changed:
            ticker.running = True
            heapq.heappush(self._due, (due, next(self._order), ticker))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._say_lines, name="s3tables-progress", daemon=True
                )
                self._thread.start()
            elif self._due[0][2] is ticker:
                self._changed.notify()

    def end(self, ticker: Ticker) -> None:
        with self._changed:
            ticker.running = False

    def _say_lines(self) -> None:
        while True:
            with self._changed:
                ticker = self._next_due()
                while ticker is None:
                    wait = self._due[0][0] - time.monotonic() if self._due else None
                    self._changed.wait(wait)
                    ticker = self._next_due()
            try:
                ticker.say(ticker.line(time.monotonic() - ticker.started))
            except Exception as error:  # the block's own statement reports what failed
                self.end(ticker)
                logger.info(f"No more progress lines for {ticker.what}: {error}")

    def _next_due(self) -> Ticker | None:
        """The running ticker whose line is due, queued again for its next one (the lock
        held); None while none is due."""
        now = time.monotonic()
        while self._due and self._due[0][0] <= now:
            when, _, ticker = heapq.heappop(self._due)
            if ticker.running:
                heapq.heappush(self._due, (when + ticker.interval, next(self._order), ticker))
                return ticker
        return None


_SCHEDULE = _TickSchedule()
# A forked child has the queue but not the thread.
os.register_at_fork(after_in_child=_SCHEDULE._start_afresh)
