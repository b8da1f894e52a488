"""The local services' records: each launched process is recorded with its identity, is
running (and stopped) while the process with its pid still has it, and never once another
process has the pid."""

from __future__ import annotations

import json
import os
from pathlib import Path

from dbt.adapters.s3tables.engines.local_services import Service
from dbt.adapters.s3tables.engines.process_identity import ProcessCheck


def test_a_launched_process_is_recorded_with_its_identity_and_stopped(tmp_path: Path) -> None:
    service = Service("thrift", tmp_path)
    pid = service.launch("server", ["sleep", "1000"], {})
    service.record({"pids": [pid], "host": "127.0.0.1", "port": 1, "bind": "127.0.0.1"})
    recorded = json.loads(service.state_file.read_text())
    assert recorded["pids"] == [pid] and recorded["identities"][str(pid)].startswith("linux:")

    # Another invocation of the command reads the record: the process is the one started.
    again = Service("thrift", tmp_path)
    assert again.running() and again.checks() == {pid: ProcessCheck.RUNNING}
    report = again.stop()
    assert report.stopped == [pid] and report.not_signalled == {}
    assert os.waitpid(pid, 0)[0] == pid  # it ended on the signal
    assert not service.state_file.exists()


def test_a_record_naming_another_process_is_stale_and_never_running(tmp_path: Path) -> None:
    service = Service("connect", tmp_path)
    pid = service.launch("server", ["sleep", "1000"], {})
    try:
        record = {"pids": [pid], "identities": {str(pid): "linux:another-boot:1"}}
        service.state_file.write_text(json.dumps(record))
        assert not service.running() and service.stale() and service.alive() == []
        report = service.stop()
        assert report.stopped == [] and report.not_signalled == {pid: ProcessCheck.RECYCLED}
        assert os.waitpid(pid, os.WNOHANG) == (0, 0)  # still running
        assert not service.state_file.exists()
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)


def test_a_record_of_pids_only_is_never_trusted_nor_taken_for_stale(tmp_path: Path) -> None:
    service = Service("connect", tmp_path)
    pid = service.launch("server", ["sleep", "1000"], {})
    try:
        service.state_file.write_text(json.dumps({"pids": [pid]}))
        assert not service.running() and not service.stale()
        assert service.checks() == {pid: ProcessCheck.UNVERIFIABLE}
        assert service.stop().not_signalled == {pid: ProcessCheck.UNVERIFIABLE}
        assert os.waitpid(pid, os.WNOHANG) == (0, 0)
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    # Once its process is gone, the record is simply stale.
    service.state_file.write_text(json.dumps({"pids": [pid]}))
    assert service.stale() and service.checks() == {pid: ProcessCheck.EXITED}
