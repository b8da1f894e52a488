"""Progress lines: their wording from what an engine reports, and the ticker that says
them while a block runs."""

from __future__ import annotations

import threading
import time

import pytest

from dbt.adapters.s3tables.engines import progress
from dbt.adapters.s3tables.engines.progress import (
    SparkProgress,
    Ticker,
    node_label,
    progress_line,
    size_text,
)


def test_a_line_says_what_the_engine_reports_and_the_elapsed_time_at_least() -> None:
    assert progress_line("orders", 41.6, None) == "orders: running for 42 s"
    in_process = SparkProgress(
        stages_done=3,
        stages=5,
        tasks_done=37,
        tasks=200,
        jobs_done=1,
        jobs=2,
        rows_read=1200,
        bytes_read=88_000,
    )
    assert progress_line("orders", 40, in_process) == (
        "orders: running for 40 s; Spark jobs 1/2, stages 3/5, tasks 37/200, "
        "1,200 rows read, 88.0 kB read"
    )
    # Spark Connect reports stages and bytes read, not jobs.
    connect = SparkProgress(stages_done=0, stages=1, tasks_done=2, tasks=4, bytes_read=5_300_000)
    assert progress_line("events", 12, connect) == (
        "events: running for 12 s; stages 0/1, tasks 2/4, 5.3 MB read"
    )


def test_sizes_and_node_names() -> None:
    assert [size_text(n) for n in (980, 12_345, 3_400_000_000)] == ["980 B", "12.3 kB", "3.4 GB"]
    assert node_label("model.jaffle_shop.orders") == "orders"
    assert node_label("master") == "master"


def test_a_ticker_says_lines_while_its_block_runs_and_stops_with_it() -> None:
    lines: list[str] = []
    with Ticker(0.05, lambda elapsed: f"{elapsed:.2f}", lines.append):
        time.sleep(0.28)
    said = len(lines)
    assert said >= 3, lines
    assert [float(x) for x in lines] == sorted(float(x) for x in lines)
    time.sleep(0.12)
    assert len(lines) == said  # nothing after the block


def test_every_ticker_is_said_by_one_thread_and_a_block_starts_none() -> None:
    # A thread per block was started and joined, each waiting for the GIL while other
    # threads ran Python: every statement paid it.
    fast: list[str] = []
    slow: list[str] = []
    with Ticker(0.05, lambda elapsed: "fast", fast.append):
        with Ticker(0.2, lambda elapsed: "slow", slow.append):
            for _ in range(200):
                with Ticker(10, str):
                    pass
            time.sleep(0.33)
    # Each at its own interval (a loaded machine may stretch the sleep, not the order).
    assert len(fast) > len(slow) >= 1, (fast, slow)
    assert len([t for t in threading.enumerate() if t.name == "s3tables-progress"]) == 1


def test_a_line_that_fails_ends_its_ticker_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(elapsed: float) -> str:
        raise RuntimeError("the JVM is gone")

    said: list[str] = []
    monkeypatch.setattr(progress.logger, "info", said.append)
    lines: list[str] = []
    with (
        Ticker(0.05, broken, lines.append, what="a statement of orders"),
        Ticker(0.05, str, lines.append),
    ):
        time.sleep(0.2)
    assert len(lines) >= 2  # the healthy ticker went on
    # Said once, naming whose lines stopped.
    assert said == ["No more progress lines for a statement of orders: the JVM is gone"]


def test_a_block_shorter_than_the_interval_or_an_interval_of_0_says_nothing() -> None:
    lines: list[str] = []
    with Ticker(5, str, lines.append):
        pass
    with Ticker(0, str, lines.append):
        time.sleep(0.05)
    assert lines == []


def test_a_statements_jobs_and_stages_add_up_skipped_stages_left_out() -> None:
    from dbt.adapters.s3tables.engines.progress import JobReading, StageReading, summarise

    assert summarise([]) is None
    done = JobReading(
        "SUCCEEDED",
        (StageReading("COMPLETE", 4, 4, 0, 0), StageReading("SKIPPED", 4, 0, 0, 0)),
    )
    running = JobReading(
        "RUNNING",
        (StageReading("ACTIVE", 20, 7, 700, 9_000), StageReading("PENDING", 0, 0, 0, 0)),
    )
    assert summarise([done, running]) == SparkProgress(
        stages_done=1,
        stages=3,
        tasks_done=11,
        tasks=24,
        jobs_done=1,
        jobs=2,
        rows_read=700,
        bytes_read=9_000,
    )
