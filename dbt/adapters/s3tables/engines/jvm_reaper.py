"""Kills the Spark driver JVM once the dbt process that started it is gone.

Run as a script (`python -I jvm_reaper.py <jvm pid> <jvm pidfd or -1> <grace seconds>
<exit grace seconds>`, standard library only, so it starts in milliseconds), in its own
session so that signals for dbt's process group do not reach it. Its stdin is a pipe whose
other end only the dbt process holds: the pipe reaches end-of-file when dbt ends, however
it ends. A dbt process that ends normally writes `exit` into the pipe first: the JVM (which
sees the same end-of-file on its own stdin and runs Spark's shutdown hooks, and on a first
start writes the class archive) then gets `exit grace` seconds, so dbt need not wait for it.
Any other end (SIGTERM, SIGKILL, a crash) gets `grace` seconds. The JVM is killed after
that. When the JVM ends first, the reaper ends with it.

The JVM is held by a pidfd where the system has them (Linux 5.3+), so a recycled process
id is never signalled; elsewhere by its process id.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

# How often the JVM is looked at where there is no pidfd to wait on.
POLL_SECONDS = 0.2


def jvm_alive(pid: int, pidfd: int) -> bool:
    if pidfd >= 0:
        return not select.select([pidfd], [], [], 0)[0]
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# What a dbt process that ends normally writes into the pipe before closing it.
NORMAL_EXIT = b"exit"


def wait_for_dbt_to_end(pid: int, pidfd: int) -> tuple[bool, bool]:
    """Block until stdin reaches end-of-file or the JVM ends first; (dbt ended, dbt said
    it ended normally)."""
    watched = [0] + ([pidfd] if pidfd >= 0 else [])
    received = b""
    while True:
        ready = select.select(watched, [], [], None if pidfd >= 0 else POLL_SECONDS)[0]
        if pidfd in ready:
            return False, False
        if 0 in ready:
            data = os.read(0, 4096)
            if not data:
                return True, NORMAL_EXIT in received
            received += data
        if pidfd < 0 and not jvm_alive(pid, pidfd):
            return False, False


def kill_after_grace(pid: int, pidfd: int, grace: float) -> None:
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if pidfd >= 0:
            if select.select([pidfd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                return
        elif not jvm_alive(pid, pidfd):
            return
        else:
            time.sleep(POLL_SECONDS)
    try:
        if pidfd >= 0:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def main(argv: list[str]) -> int:
    pid, pidfd, grace, exit_grace = int(argv[1]), int(argv[2]), float(argv[3]), float(argv[4])
    ended, normally = wait_for_dbt_to_end(pid, pidfd)
    if ended:
        kill_after_grace(pid, pidfd, exit_grace if normally else grace)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
