"""The delays a unit under test sleeps, recorded instead of slept.

`time.sleep` is the time module's own, shared by every thread: in a test process that ran
Spark or dbt before, other threads (py4j's, the JVM reaper's, a finished test's) call it
too. A recorder that took their calls as well returned at once to threads that sleep in a
loop, which then spun, and a test saw 18,000 sleeps it never made. Those threads keep
sleeping for real.
"""

from __future__ import annotations

import threading
import time
from types import ModuleType

import pytest


def recorded_sleeps(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> list[float]:
    """The delays this thread sleeps through `module.time.sleep` from now on (the test's
    `monkeypatch` undoes it); other threads sleep as before."""
    calls: list[float] = []
    test_thread, real_sleep = threading.get_ident(), time.sleep

    def sleep(delay: float) -> None:
        if threading.get_ident() == test_thread:
            calls.append(delay)
        else:
            real_sleep(delay)

    monkeypatch.setattr(module.time, "sleep", sleep)
    return calls
