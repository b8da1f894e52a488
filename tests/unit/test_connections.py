"""The gate between running statements and a failed write's cleanup: files are removed
only while nothing else runs, and nothing starts until the removal is done."""

from __future__ import annotations

import threading
import time

from dbt.adapters.s3tables.connections import RunningStatements


def test_a_thread_running_alone_sweeps_and_others_wait_for_it() -> None:
    gate = RunningStatements()
    started = threading.Event()
    order: list[str] = []

    def other_statement() -> None:
        started.set()
        with gate:
            order.append("other statement ran")

    with gate:  # the failed statement itself
        with gate.alone(own=1) as alone:
            assert alone
            other = threading.Thread(target=other_statement)
            other.start()
            started.wait(5)
            time.sleep(0.2)  # the other thread is blocked at the gate meanwhile
            # The sweeper's own catalog operations pass.
            with gate:
                order.append("sweeper's catalog read")
            order.append("files removed")
    other.join(5)
    assert order == ["sweeper's catalog read", "files removed", "other statement ran"]
    assert gate.running() == 0


def test_a_thread_is_not_alone_while_another_runs_a_statement() -> None:
    gate = RunningStatements()
    inside, leave = threading.Event(), threading.Event()

    def long_statement() -> None:
        with gate:
            inside.set()
            leave.wait(5)

    other = threading.Thread(target=long_statement)
    other.start()
    inside.wait(5)
    with gate, gate.alone(own=1) as alone:
        assert not alone  # its files could be the other statement's, uncommitted yet
    leave.set()
    other.join(5)
    with gate, gate.alone(own=1) as alone:
        assert alone


def test_one_sweeper_at_a_time() -> None:
    gate = RunningStatements()
    with gate.alone(own=0) as first:
        results: list[bool] = []

        def second() -> None:
            with gate.alone(own=0) as alone:
                results.append(alone)

        thread = threading.Thread(target=second)
        thread.start()
        thread.join(5)
        assert first and results == [False]
