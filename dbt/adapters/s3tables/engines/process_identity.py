"""What identifies a process beyond its pid: the local services' records (local_services.py)
keep it beside each pid they started, and nothing is signalled, reported running or taken
for a running service unless the process with that pid now still has it.

A pid alone is not enough: a record outlives its processes (a crash, a reboot), and the
system hands the pid to another process later, which `stop` would then kill. The identity
is when the process started, which no later process with the same pid shares: on Linux its
start time in clock ticks since boot (`/proc/<pid>/stat`) with the boot's id
(`/proc/sys/kernel/random/boot_id`, new at every boot, when the ticks start again from 0);
elsewhere the start time `ps` prints (to the second, wall clock). It is taken when the
process is launched: the launcher script then `exec`s the JVM under the same pid, which
keeps its start time but not its command line.
"""

from __future__ import annotations

import enum
import os
import subprocess
from pathlib import Path

PROC = Path("/proc")
BOOT_ID = PROC / "sys" / "kernel" / "random" / "boot_id"
# Fields of /proc/<pid>/stat after the command name (which is in parentheses and may hold
# spaces and parentheses itself): the state is the first, the start time the 20th.
STATE_FIELD = 0
START_TIME_FIELD = 19


class ProcessCheck(enum.Enum):
    """What a recorded pid is now."""

    # The process the record names, still running.
    RUNNING = "running"
    # No process has the pid (or only a zombie: exited, not yet reaped).
    EXITED = "exited"
    # Another process has the pid now: it started at another time, or in another boot.
    RECYCLED = "recycled"
    # A process has the pid, and nothing tells whether it is the one recorded: the record
    # keeps no identity (written before identities were recorded), or this system shows
    # none.
    UNVERIFIABLE = "unverifiable"


def stat_fields(stat: str) -> list[str]:
    """The fields of a `/proc/<pid>/stat` line after the command name."""
    return stat[stat.rindex(")") + 1 :].split()


def is_zombie(stat: str) -> bool:
    return stat_fields(stat)[STATE_FIELD] == "Z"


def start_ticks(stat: str) -> int:
    """When the process started, in clock ticks since boot."""
    return int(stat_fields(stat)[START_TIME_FIELD])


def linux_identity(boot_id: str, stat: str) -> str:
    return f"linux:{boot_id.strip()}:{start_ticks(stat)}"


def ps_identity(started: str) -> str:
    return f"ps:{' '.join(started.split())}"


def check_process(recorded: str | None, alive: bool, current: str | None) -> ProcessCheck:
    """What the recorded pid is now, from the identity recorded at its start (None: the
    record has none), whether a live process has the pid, and that process's identity
    (None: it cannot be read)."""
    if not alive:
        return ProcessCheck.EXITED
    if recorded is None or current is None:
        return ProcessCheck.UNVERIFIABLE
    return ProcessCheck.RUNNING if recorded == current else ProcessCheck.RECYCLED


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:  # the process is gone (or the file was never there)
        return None


def process_identity(pid: int) -> str | None:
    """The identity of the process with this pid now; None when no process has it, or
    this system shows no start time."""
    if PROC.joinpath("self", "stat").exists():
        stat, boot_id = _read(PROC / str(pid) / "stat"), _read(BOOT_ID)
        return linux_identity(boot_id, stat) if stat and boot_id else None
    try:  # macOS and the BSDs: no /proc, a `ps` that prints the start time
        started = subprocess.run(
            ["ps", "-o", "lstart=", "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = started.stdout.strip()
    return ps_identity(text) if started.returncode == 0 and text else None


def pid_alive(pid: int) -> bool:
    """Whether a process of this user has the pid and has not exited (a zombie has)."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    stat = _read(PROC / str(pid) / "stat")
    return not (stat and is_zombie(stat))


def check_recorded(pid: int, recorded: str | None) -> ProcessCheck:
    """What the pid a record names is now, given the identity recorded with it."""
    alive = pid_alive(pid)
    return check_process(recorded, alive, process_identity(pid) if alive else None)
