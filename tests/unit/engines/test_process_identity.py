"""What identifies a process beyond its pid: its start time read from `/proc/<pid>/stat`
(a command name with spaces and parentheses included), and what a recorded pid is now."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from dbt.adapters.s3tables.engines import process_identity
from dbt.adapters.s3tables.engines.process_identity import (
    ProcessCheck,
    check_process,
    check_recorded,
    is_zombie,
    linux_identity,
    pid_alive,
    ps_identity,
    start_ticks,
)

# A /proc/<pid>/stat line whose command name holds a space and a parenthesis; the start
# time (field 22) is 98765.
STAT = "4242 (java (x) y) S 1 4242 4242 0 -1 4194560 9 0 0 0 1 2 0 0 20 0 42 0 98765 1 2 3\n"


def test_the_start_time_is_read_after_the_command_name() -> None:
    assert start_ticks(STAT) == 98765
    assert not is_zombie(STAT)
    assert is_zombie(STAT.replace(") S ", ") Z "))
    assert linux_identity("6e2b-boot\n", STAT) == "linux:6e2b-boot:98765"
    assert ps_identity("Sat Nov 28  14:03:02 2026\n") == "ps:Sat Nov 28 14:03:02 2026"


@pytest.mark.parametrize(
    ("recorded", "alive", "current", "check"),
    [
        ("linux:b:1", True, "linux:b:1", ProcessCheck.RUNNING),
        ("linux:b:1", False, None, ProcessCheck.EXITED),
        (None, False, None, ProcessCheck.EXITED),
        # The same pid, started later, or in another boot (ticks count from 0 again).
        ("linux:b:1", True, "linux:b:2", ProcessCheck.RECYCLED),
        ("linux:a:1", True, "linux:b:1", ProcessCheck.RECYCLED),
        # A record of pids only (an older version's), or no start time shown: a live pid
        # that nothing vouches for.
        (None, True, "linux:b:1", ProcessCheck.UNVERIFIABLE),
        ("linux:b:1", True, None, ProcessCheck.UNVERIFIABLE),
    ],
)
def test_what_a_recorded_pid_is_now(
    recorded: str | None, alive: bool, current: str | None, check: ProcessCheck
) -> None:
    assert check_process(recorded, alive, current) is check


def test_a_live_process_keeps_its_identity_and_an_exited_one_has_none() -> None:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        identity = process_identity.process_identity(process.pid)
        assert identity is not None and identity == process_identity.process_identity(process.pid)
        assert check_recorded(process.pid, identity) is ProcessCheck.RUNNING
        assert check_recorded(process.pid, identity + "0") is ProcessCheck.RECYCLED
        assert check_recorded(process.pid, None) is ProcessCheck.UNVERIFIABLE
    finally:
        process.kill()
    # Killed, not yet reaped: a zombie is not alive (once the signal has landed).
    deadline = time.monotonic() + 10
    while pid_alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(process.pid)
    assert check_recorded(process.pid, identity) is ProcessCheck.EXITED
    process.wait()
    assert process_identity.process_identity(process.pid) is None


def test_without_proc_the_start_time_comes_from_ps(monkeypatch: pytest.MonkeyPatch) -> None:
    """macOS and the BSDs have no /proc: `ps -o lstart=` (which Linux's ps has too)."""
    monkeypatch.setattr(process_identity, "PROC", process_identity.Path("/nonexistent"))
    identity = process_identity.process_identity(os.getpid())
    assert identity is not None and identity.startswith("ps:")
    assert identity == process_identity.process_identity(os.getpid())
