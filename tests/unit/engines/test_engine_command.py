"""`dbt-s3tables-engine`'s pure parts: its arguments and their checks, the run folder (the
user's cache folder, `XDG_CACHE_HOME` honoured), the address a service listens on and the
warning when other machines can reach it, the profiles.yml output, and the lines of
`start`, `status` and `stop`; then the command itself where it starts no JVM (a taken
port, nothing to stop or report)."""

from __future__ import annotations

import json
import socket
import subprocess
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from dbt.adapters.s3tables.credentials import S3TablesCredentials
from dbt.adapters.s3tables.engines import engine_command
from dbt.adapters.s3tables.engines.engine_command import (
    UsageError,
    check_start,
    exposure_warning,
    listen_address,
    main,
    parser,
    profile_block,
    run_folder,
    started_text,
    stopped_text,
)
from dbt.adapters.s3tables.engines.local_services import StopReport
from dbt.adapters.s3tables.engines.process_identity import ProcessCheck

CONNECT_STATE = {
    "host": "127.0.0.1",
    "port": 15002,
    "bind": "0.0.0.0",
    "spark": "3.5.9",
    "warehouse": "/data/warehouse",
    "pids": [4242],
}
CLUSTER_STATE = {
    "host": "127.0.0.1",
    "port": 40001,
    "bind": "127.0.0.1",
    "spark": "3.5.9",
    "master": "spark://127.0.0.1:40001",
    "web_port": 40002,
    "pids": [1, 2, 3],
}


def test_the_commands_parse_in_their_documented_order() -> None:
    start = parser().parse_args(
        "start connect --warehouse wh --port 15010 --bind 0.0.0.0 --master local[1] --json".split()
    )
    assert (start.action, start.service, start.warehouse, start.port) == (
        "start",
        "connect",
        "wh",
        15010,
    )
    assert (start.bind, start.master, start.json, start.run_dir) == (
        "0.0.0.0",
        "local[1]",
        True,
        None,
    )
    stop = parser().parse_args(["stop", "thrift", "--run-dir", "run"])
    assert (stop.action, stop.service, stop.run_dir) == ("stop", "thrift", "run")
    assert parser().parse_args(["status"]).service is None
    with pytest.raises(SystemExit):
        parser().parse_args(["start", "postgres"])


def test_the_run_folder_is_the_users_cache_unless_run_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert run_folder(None) == tmp_path / "xdg" / "dbt-s3tables" / "engines"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert run_folder(None) == tmp_path / "home" / ".cache" / "dbt-s3tables" / "engines"
    monkeypatch.chdir(tmp_path)
    assert run_folder("run") == tmp_path / "run"


def test_a_service_listens_on_loopback_unless_bind_says_otherwise() -> None:
    for service in ("connect", "thrift", "cluster"):
        assert listen_address(service, None, connect_binds=True) == "127.0.0.1"
    assert listen_address("thrift", "0.0.0.0", connect_binds=True) == "0.0.0.0"
    assert listen_address("connect", "192.0.2.2", connect_binds=True) == "192.0.2.2"
    with pytest.raises(UsageError, match=r"`--bind localhost` is not an IP address"):
        listen_address("thrift", "localhost", connect_binds=True)
    with pytest.raises(UsageError, match="cannot be every interface"):
        listen_address("cluster", "0.0.0.0", connect_binds=True)


def test_spark_35s_connect_server_listens_on_every_interface_only_when_asked() -> None:
    assert listen_address("connect", "0.0.0.0", connect_binds=False) == "0.0.0.0"
    for bind in (None, "127.0.0.1"):
        with pytest.raises(UsageError) as refused:
            listen_address("connect", bind, connect_binds=False)
        assert "Spark 3.5's Connect server cannot listen on one address" in str(refused.value)
        assert "`--bind 0.0.0.0`" in str(refused.value)


def test_a_service_other_machines_can_reach_gets_a_one_line_warning() -> None:
    assert exposure_warning("connect", "127.0.0.1", 15002, connect_binds=True) is None
    warning = exposure_warning("thrift", "0.0.0.0", 10000, connect_binds=True)
    assert warning == (
        "warning: the Spark Thrift Server listens on every interface, with no authentication: "
        "anyone who can reach port 10000 of this machine can run SQL and code on it"
    )
    spark35 = exposure_warning("connect", "0.0.0.0", 15002, connect_binds=False)
    assert spark35 is not None and "\n" not in spark35
    assert "Spark 3.5's has no binding address setting" in spark35
    assert "port 15002" in (exposure_warning("connect", "192.0.2.2", 15002, True) or "")


def test_the_default_ports_are_the_profiles() -> None:
    for method, port in (("connect", 15002), ("thrift", 10000)):
        profile = S3TablesCredentials.from_dict(
            {"schema": "analytics", "method": method, "host": "127.0.0.1"}
        )
        assert profile.port == port
        assert f"{method} {port}" in parser().format_help()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["start", "connect"], "`start connect` needs `--warehouse`"),
        (["start", "cluster", "--warehouse", "wh"], "`--warehouse` is for thrift and connect"),
        (["start", "cluster", "--master", "local[1]"], "`--master` is for thrift and connect"),
        (["start", "thrift", "--warehouse", "wh", "--port", "70000"], "`--port 70000` is not"),
    ],
)
def test_start_refuses_options_that_do_not_fit_in_one_sentence(
    arguments: list[str], message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        check_start(parser().parse_args(arguments))


def yaml_of(block: str) -> dict:
    return yaml.safe_load(textwrap.dedent(block))


def test_the_profile_block_of_a_server_is_a_target_to_paste() -> None:
    assert yaml_of(profile_block("connect", CONNECT_STATE)) == {
        "warm": {
            "type": "s3tables",
            "method": "connect",
            "host": "127.0.0.1",
            "port": 15002,
            "warehouse": "/data/warehouse",
            "schema": "my_schema",
        }
    }
    thrift = yaml_of(profile_block("thrift", {**CONNECT_STATE, "port": 10000}))["thrift"]
    assert (thrift["method"], thrift["port"]) == ("thrift", 10000)
    cluster = yaml_of(profile_block("cluster", CLUSTER_STATE))["cluster"]
    assert cluster["master"] == "spark://127.0.0.1:40001" and "method" not in cluster


def test_start_says_where_the_server_answers_and_its_logs(tmp_path: Path) -> None:
    text = started_text("connect", CONNECT_STATE, tmp_path, already=False)
    assert text.splitlines()[:4] == [
        "The Spark Connect server answers at 127.0.0.1:15002 (Spark 3.5.9; pid 4242).",
        "It listens on every interface; its catalog: the embedded catalog in /data/warehouse.",
        f"Logs: {tmp_path}/connect-*.log",
        f"Stop it: dbt-s3tables-engine stop connect --run-dir {tmp_path}",
    ]
    assert profile_block("connect", CONNECT_STATE) in text
    cluster = started_text("cluster", CLUSTER_STATE, tmp_path, already=True)
    assert cluster.startswith(
        "The Spark standalone cluster was already running at spark://127.0.0.1:40001 "
        "(Spark 3.5.9; pid 1, 2, 3).\nIt listens on 127.0.0.1; the master's web UI: "
        "http://127.0.0.1:40002."
    )


def test_stop_says_what_it_stopped() -> None:
    assert stopped_text("connect", CONNECT_STATE, StopReport([4242])) == (
        "Stopped the Spark Connect server at 127.0.0.1:15002 (pid 4242)."
    )
    assert stopped_text("thrift", None, StopReport()) == "No Spark Thrift Server was running."
    # A cluster whose worker's pid went to another program: the others stopped, one line
    # for the one left alone.
    mixed = StopReport([1, 2], {3: ProcessCheck.RECYCLED})
    assert stopped_text("cluster", CLUSTER_STATE, mixed).splitlines() == [
        "Stopped the Spark standalone cluster at spark://127.0.0.1:40001 (pid 1, 2).",
        "Not signalled: pid 3 is now another process than the Spark standalone cluster "
        "started (its record outlived it, a reboot perhaps); the stale record is removed.",
    ]


def test_a_taken_port_fails_the_start_naming_it_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_command, "installed_spark_line", lambda: "4.1")
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        arguments = ["start", "connect", "--warehouse", str(tmp_path / "wh"), "--port", str(port)]
        assert main([*arguments, "--run-dir", str(tmp_path / "run")]) == 1
    error = capsys.readouterr().err
    assert error == (
        f"Port {port} on 127.0.0.1 is taken (by another Spark Connect server, or another "
        "program): stop that, or choose another port with `--port N` (and set the profile's "
        "`port` to it)\n"
    )


def test_status_and_stop_with_nothing_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = str(tmp_path / "run")
    assert main(["status", "--run-dir", run_dir]) == 1
    assert capsys.readouterr().out == (
        "connect: not running\nthrift: not running\ncluster: not running\n"
    )
    assert main(["stop", "connect", "--run-dir", run_dir]) == 0
    assert capsys.readouterr().out == "No Spark Connect server was running.\n"
    assert main(["status", "thrift", "--run-dir", run_dir, "--json"]) == 1
    assert capsys.readouterr().out == '{"running": false}\n'


def test_without_java_the_start_fails_in_the_sentence_that_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    assert main(["start", "cluster", "--run-dir", str(tmp_path / "run")]) == 1
    error = capsys.readouterr().err
    assert error.startswith(f"Cannot start Spark: JAVA_HOME is {tmp_path / 'no-java'}")
    assert "Runtime Error" not in error and not (tmp_path / "run" / "cluster.json").exists()


# --- records that outlived their processes: pids the system gave to other programs ---


@pytest.fixture
def other_program() -> Iterator[subprocess.Popen[bytes]]:
    """A program of this user that leads its own process group, as `setsid sleep 1000`
    does: what a pid in a stale record may name after a reboot."""
    process = subprocess.Popen(["sleep", "1000"], start_new_session=True)
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def stale_records(pid: int) -> dict[str, dict]:
    """Records naming `pid`: one that says it was started at another time (a start before a
    reboot), and one of a version that recorded pids only."""
    return {
        "another start": {**CONNECT_STATE, "pids": [pid], "identities": {str(pid): "linux:x:1"}},
        "pids only": {**CONNECT_STATE, "pids": [pid]},
    }


def write_record(tmp_path: Path, record: dict) -> Path:
    """`record` as the Connect server's state in a run folder; the run folder."""
    run_dir = tmp_path / "run"
    run_dir.mkdir(exist_ok=True)
    (run_dir / "connect.json").write_text(json.dumps(record))
    return run_dir


RECORDS = ["another start", "pids only"]


@pytest.mark.parametrize("record", RECORDS)
def test_stop_never_signals_a_pid_its_record_cannot_vouch_for(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    other_program: subprocess.Popen[bytes],
    record: str,
) -> None:
    pid = other_program.pid
    run_dir = write_record(tmp_path, stale_records(pid)[record])
    assert main(["stop", "connect", "--run-dir", str(run_dir)]) == 0
    time.sleep(0.2)
    assert other_program.poll() is None, "the other program was signalled"
    # Said in one line, and the record removed.
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "No Spark Connect server was running."
    assert len(lines) == 2 and lines[1].startswith(f"Not signalled: pid {pid} ")
    if record == "another start":
        assert "is now another process than the Spark Connect server started" in lines[1]
    else:
        assert f"if `ps -o args= -p {pid}` shows the Spark Connect server's java" in lines[1]
    assert not (run_dir / "connect.json").exists()


@pytest.mark.parametrize("record", RECORDS)
def test_status_never_reports_a_pid_its_record_cannot_vouch_for_as_running(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    other_program: subprocess.Popen[bytes],
    record: str,
) -> None:
    pid = other_program.pid
    run_dir = write_record(tmp_path, stale_records(pid)[record])
    assert main(["status", "connect", "--run-dir", str(run_dir)]) == 1
    line = capsys.readouterr().out
    if record == "another start":
        assert line == (
            f"connect: not running (its record names pid {pid}, now another process than the "
            "Spark Connect server started (the record outlived it, a reboot perhaps); the "
            "stale record is removed)\n"
        )
        assert not (run_dir / "connect.json").exists()
    else:  # kept: `stop` forgets it, saying what to check first
        assert line.startswith(f"connect: unknown: pid {pid} runs, but nothing shows it is ")
        assert f"check with `ps -o args= -p {pid}`" in line and line.count("\n") == 1
        assert (run_dir / "connect.json").exists()
    assert other_program.poll() is None


@pytest.mark.parametrize("record", RECORDS)
def test_start_never_takes_a_pid_its_record_cannot_vouch_for_for_the_server(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    other_program: subprocess.Popen[bytes],
    record: str,
) -> None:
    pid = other_program.pid
    run_dir = write_record(tmp_path, stale_records(pid)[record])
    # The record goes and the start goes on, here to a port in use, before launching
    # anything (not to "was already running at ... pid <the other program>").
    monkeypatch.setattr(engine_command, "installed_spark_line", lambda: "4.1")
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        arguments = ["start", "connect", "--warehouse", str(tmp_path / "wh"), "--port", port]
        assert main([*arguments, "--run-dir", str(run_dir)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert lines[0].startswith(f"Not signalled: pid {pid} ")
    assert lines[1].startswith(f"Port {port} on 127.0.0.1 is taken")
    assert not (run_dir / "connect.json").exists()
    time.sleep(0.2)
    assert other_program.poll() is None


def test_log_lines_go_to_stderr_so_stdout_is_the_result(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A jar downloaded on first use is said on stderr: `start --json`'s stdout stays one
    JSON document (a fresh machine's first Connect server printed the line before it)."""
    from dbt.adapters.events.logging import AdapterLogger
    from dbt_common.events.event_manager_client import cleanup_event_logger, get_event_manager

    loggers = list(get_event_manager().loggers)
    try:
        engine_command.log_lines_to_stderr()
        AdapterLogger("s3tables").info("Downloading a:b:1 (once) into /tmp")
        captured = capsys.readouterr()
        assert captured.out == ""
        assert "Downloading a:b:1 (once)" in captured.err
    finally:
        cleanup_event_logger()
        get_event_manager().loggers.extend(loggers)
