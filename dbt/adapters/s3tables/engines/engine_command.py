"""`dbt-s3tables-engine`, the console command that starts, stops and reports the local
Spark services of local_services.py:

    dbt-s3tables-engine start connect|thrift|cluster [--warehouse DIR] [--port N]
        [--bind ADDRESS] [--master URL] [--run-dir DIR] [--json]
    dbt-s3tables-engine stop connect|thrift|cluster [--run-dir DIR] [--json]
    dbt-s3tables-engine status [connect|thrift|cluster] [--run-dir DIR] [--json]

What this module owns: the arguments and their checks, the address and port a service gets
(loopback and the profile's default port unless told otherwise), the run folder (the
user's cache folder unless `--run-dir`), and what the user reads: the warning about a
service other machines can reach, the profiles.yml output of a started service, and the
status and stop lines (or, with `--json`, the state as JSON).
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import json
import sys
from collections.abc import Callable
from pathlib import Path

from dbt.adapters.s3tables.catalogs.jars import installed_spark_line
from dbt.adapters.s3tables.engines.class_archive import cache_folder
from dbt.adapters.s3tables.engines.connect import ENGINE_KIND as CONNECT
from dbt.adapters.s3tables.engines.local_services import (
    LOOPBACK,
    SERVICE_TITLES,
    Service,
    ServiceError,
    State,
    StopReport,
    connect_binds_an_address,
    every_interface,
    port_taken,
    start_cluster,
    start_connect,
    start_thrift,
)
from dbt.adapters.s3tables.engines.process_identity import ProcessCheck
from dbt.adapters.s3tables.engines.thrift import ENGINE_KIND as THRIFT
from dbt.adapters.s3tables.errors import MissingDependencyError

COMMAND = "dbt-s3tables-engine"
SERVICES = tuple(SERVICE_TITLES)
DEFAULT_MASTER = "local[2]"
# The name of the profiles.yml output printed for each service.
TARGETS = {"connect": "warm", "thrift": "thrift", "cluster": "cluster"}
# Where each server runs: the port its engine's profile defaults to.
SERVER_PORTS = {"connect": CONNECT.default_port, "thrift": THRIFT.default_port}

DESCRIPTION = f"""\
Start, stop and check local Spark services for dbt-s3tables, run on this Python's pyspark:
a Spark Connect server (`method: connect`, the warm engine), a Spark Thrift Server
(`method: thrift`) and a standalone cluster of a master and two workers (a `master` for
`method: session`). The two servers' catalog is the embedded catalog in --warehouse.

Address: a service listens on {LOOPBACK} only, unless --bind names another address (a
warning then says so: these services have no authentication). Spark 3.5's Connect server
cannot listen on one address (it has no binding address setting): on Spark 3.5, `start
connect` needs `--bind 0.0.0.0`, accepting every interface, and warns each time; Spark
4.1's listens on {LOOPBACK}.

Ports: connect {SERVER_PORTS["connect"]} and thrift {SERVER_PORTS["thrift"]} (the \
profile's defaults for `port`);
the cluster's master takes a free port. A port in use fails the start: choose another
with --port.

`start` returns once the service answers and prints a profiles.yml output for it. State
and logs: $XDG_CACHE_HOME/dbt-s3tables/engines (else ~/.cache/dbt-s3tables/engines), or
--run-dir. `stop` stops exactly the processes `start` recorded: a recorded pid whose
process is not the one started (a record that outlived a crash or a reboot, whose pid went
to another program) is never signalled, and its stale record is removed. `status` exits
with 0 when the service (with none named: any service) runs, else 1."""


class UsageError(Exception):
    """Arguments that cannot work together: one sentence naming the option and the fix."""


def parser() -> argparse.ArgumentParser:
    command = argparse.ArgumentParser(
        prog=COMMAND, description=DESCRIPTION, formatter_class=argparse.RawTextHelpFormatter
    )
    actions = command.add_subparsers(dest="action", required=True, metavar="start|stop|status")
    start = actions.add_parser("start", help="start a service and wait until it answers")
    start.add_argument("service", choices=SERVICES)
    start.add_argument(
        "--warehouse",
        metavar="DIR",
        help="thrift, connect (required): the embedded catalog's warehouse folder",
    )
    start.add_argument(
        "--port",
        type=int,
        metavar="N",
        help=f"the port (default: connect {SERVER_PORTS['connect']}, thrift "
        f"{SERVER_PORTS['thrift']}, the cluster's master a free one)",
    )
    start.add_argument(
        "--bind",
        metavar="ADDRESS",
        help=f"the IP address to listen on (default {LOOPBACK}; 0.0.0.0: every interface); "
        "Spark 3.5's Connect server always listens on every interface",
    )
    start.add_argument(
        "--master",
        metavar="URL",
        help=f"thrift, connect: the server's Spark master (default {DEFAULT_MASTER})",
    )
    stop = actions.add_parser("stop", help="stop a service that `start` started")
    stop.add_argument("service", choices=SERVICES)
    status = actions.add_parser("status", help="whether services run, where, and their logs")
    status.add_argument("service", choices=SERVICES, nargs="?")
    for action in (start, stop, status):
        action.add_argument(
            "--run-dir",
            metavar="DIR",
            help="the folder of the services' state and logs "
            "(default $XDG_CACHE_HOME/dbt-s3tables/engines, else ~/.cache/...)",
        )
        action.add_argument("--json", action="store_true", help="print the state as JSON")
    return command


def run_folder(run_dir: str | None) -> Path:
    """Where services keep their state and logs: `--run-dir`, else the user's cache folder
    (never the project folder, which would collect pid files and logs)."""
    return Path(run_dir).resolve() if run_dir else cache_folder("engines")


def listen_address(service: str, bind: str | None, connect_binds: bool) -> str:
    """The address the service will listen on: `--bind` (loopback when not given), or the
    wildcard for a Connect server that cannot bind one address (`connect_binds` False)."""
    try:
        chosen = LOOPBACK if bind is None else str(ipaddress.ip_address(bind))
    except ValueError:
        raise UsageError(
            f"`--bind {bind}` is not an IP address: give one of this machine's addresses, "
            f"such as {LOOPBACK}, or 0.0.0.0 for every interface"
        ) from None
    if service == "connect" and not connect_binds:
        # Spark 3.5's server cannot listen on one address: every interface, only when asked.
        if bind is None or not every_interface(chosen):
            given = "no --bind" if bind is None else f"`--bind {bind}`"
            raise UsageError(
                f"{given}: Spark 3.5's Connect server cannot listen on one address (it has no "
                "binding address setting) and would listen on every interface, with no "
                "authentication; start it with `--bind 0.0.0.0` to accept that, or install "
                "Spark 4.1 (`pip install 'dbt-s3tables-core[spark41]'`), whose server "
                f"listens on {LOOPBACK}"
            )
        return chosen
    if service == "cluster" and every_interface(chosen):
        raise UsageError(
            f"`--bind {bind}`: the cluster's master and workers tell each other their address, "
            "so it cannot be every interface; give one of this machine's addresses"
        )
    return chosen


def exposure_warning(service: str, listen: str, port: int, connect_binds: bool) -> str | None:
    """The one-line warning for a service other machines may reach (None on loopback)."""
    if ipaddress.ip_address(listen).is_loopback:
        return None
    where = "every interface" if every_interface(listen) else listen
    if service == "connect" and not connect_binds:
        where += f" (Spark 3.5's has no binding address setting; 4.1's listens on {LOOPBACK})"
    at = f"port {port} of this machine" if port else "this machine"
    return (
        f"warning: the {SERVICE_TITLES[service]} listens on {where}, with no authentication: "
        f"anyone who can reach {at} can run SQL and code on it"
    )


def server_warehouse(arguments: argparse.Namespace) -> str:
    """A server's `--warehouse`, as an absolute path."""
    if not arguments.warehouse:
        raise UsageError(
            f"`start {arguments.service}` needs `--warehouse`: the embedded catalog's folder "
            "(the profile's `warehouse`), e.g. --warehouse ./warehouse"
        )
    return str(Path(arguments.warehouse).resolve())


def check_start(arguments: argparse.Namespace) -> None:
    """The options `start` of this service takes."""
    if arguments.service == "cluster":
        for option in ("warehouse", "master"):
            if getattr(arguments, option) is not None:
                raise UsageError(
                    f"`--{option}` is for thrift and connect (a cluster has no catalog, and "
                    "is its own master): omit it"
                )
    else:
        server_warehouse(arguments)
    if arguments.port is not None and not 0 < arguments.port < 65536:
        raise UsageError(f"`--port {arguments.port}` is not a port: give one from 1 to 65535")


def run_dir_option(run_dir: Path) -> str:
    """` --run-dir DIR` for a command the user is told to type, when not the default."""
    return "" if run_dir == cache_folder("engines") else f" --run-dir {run_dir}"


def profile_block(service: str, state: State) -> str:
    """A profiles.yml output for the started service, to paste under a profile's `outputs:`."""
    lines = [f"{TARGETS[service]}:", "  type: s3tables"]
    if service == "cluster":
        lines += [
            f"  master: {state['master']}",
            "  warehouse: ./warehouse     # a folder every worker can read and write",
        ]
    else:
        lines += [
            f"  method: {service}",
            f"  host: {state['host']}",
            f"  port: {state['port']}",
            f"  warehouse: {state['warehouse']}",
        ]
    lines.append("  schema: my_schema          # your models' Iceberg namespace")
    return "\n".join(f"    {line}" for line in lines)


def address_text(service: str, state: State) -> str:
    """Where the service answers, its Spark and its pids."""
    where = state["master"] if service == "cluster" else f"{state['host']}:{state['port']}"
    pids = ", ".join(str(pid) for pid in state["pids"])
    return f"{where} (Spark {state['spark']}; pid {pids})"


def listens_text(state: State) -> str:
    """The address the service listens on, in words."""
    return "every interface" if every_interface(state["bind"]) else state["bind"]


def started_text(service: str, state: State, run_dir: Path, already: bool) -> str:
    """What `start` prints: where the service answers, its logs, how to stop it, and its
    profiles.yml output."""
    if service == "cluster":
        detail = f"the master's web UI: http://{state['host']}:{state['web_port']}"
    else:
        detail = f"its catalog: the embedded catalog in {state['warehouse']}"
    verb = "was already running" if already else "answers"
    lines = [
        f"The {SERVICE_TITLES[service]} {verb} at {address_text(service, state)}.",
        f"It listens on {listens_text(state)}; {detail}.",
        f"Logs: {run_dir}/{service}-*.log",
        f"Stop it: {COMMAND} stop {service}{run_dir_option(run_dir)}",
        "",
        "A profiles.yml output for it (under your profile's `outputs:`):",
        "",
        profile_block(service, state),
    ]
    return "\n".join(lines)


def pid_list(pids: list[int]) -> str:
    return f"pid {', '.join(str(pid) for pid in pids)}"


def stale_text(title: str, checks: dict[int, ProcessCheck]) -> str:
    """Why a record names none of the service's processes any more (each pid exited, or
    is another process now)."""
    recycled = [pid for pid, check in checks.items() if check is ProcessCheck.RECYCLED]
    if not recycled:
        return f"its record names {pid_list(list(checks))}, which exited"
    return (
        f"its record names {pid_list(recycled)}, now another process than the {title} "
        "started (the record outlived it, a reboot perhaps)"
    )


def not_signalled_line(title: str, pid: int, check: ProcessCheck) -> str:
    """One line for a recorded pid left alone: whose process it is not, or cannot be
    shown to be, and what to do."""
    if check is ProcessCheck.RECYCLED:
        return (
            f"Not signalled: pid {pid} is now another process than the {title} started (its "
            "record outlived it, a reboot perhaps); the stale record is removed."
        )
    return (
        f"Not signalled: pid {pid} runs, but nothing shows it is the {title} (its record, "
        "from an older dbt-s3tables, keeps no start time, or this system shows none); if "
        f"`ps -o args= -p {pid}` shows the {title}'s java, end it with `kill {pid}`; the "
        "record is removed."
    )


def status_line(service: Service, run_dir: Path) -> str:
    """One service's line of `status`: whether it runs, where, its pids and its logs. A
    stale record (its pids exited, or went to other processes) is removed, and said so."""
    state, checks = service.state(), service.checks()
    if not state:
        return f"{service.name}: not running"
    if service.stale():
        service.forget()
        return (
            f"{service.name}: not running ({stale_text(service.title, checks)}; the stale "
            "record is removed)"
        )
    unverified = [pid for pid, check in checks.items() if check is ProcessCheck.UNVERIFIABLE]
    stop = f"`{COMMAND} stop {service.name}{run_dir_option(run_dir)}`"
    if unverified:
        return (
            f"{service.name}: unknown: {pid_list(unverified)} runs, but nothing shows it is "
            f"the {service.title} (its record, from an older dbt-s3tables, keeps no start "
            f"time, or this system shows none); check with `ps -o args= -p "
            f"{unverified[0]}`, and {stop} forgets the record without signalling it"
        )
    alive = len(service.alive())
    if alive < len(checks):
        return (
            f"{service.name}: broken, {alive} of {len(checks)} processes alive (logs "
            f"in {run_dir}); end it with {stop}"
        )
    where = f"{address_text(service.name, state)}, listening on {listens_text(state)}"
    warehouse = f", warehouse {state['warehouse']}" if "warehouse" in state else ""
    return f"{service.name}: running at {where}{warehouse}; logs in {run_dir}"


def stopped_text(service: str, state: State | None, report: StopReport) -> str:
    """What `stop` prints: what it stopped, or that nothing ran; then one line for each
    recorded pid it did not signal."""
    title = SERVICE_TITLES[service]
    if not state or not report.stopped:
        lines = [f"No {title} was running."]
    else:
        where = state["master"] if service == "cluster" else f"{state['host']}:{state['port']}"
        lines = [f"Stopped the {title} at {where} ({pid_list(report.stopped)})."]
    lines += [not_signalled_line(title, pid, check) for pid, check in report.not_signalled.items()]
    return "\n".join(lines)


def start(arguments: argparse.Namespace, run_dir: Path) -> int:
    check_start(arguments)
    service = Service(arguments.service, run_dir)
    if service.running():
        state = service.state() or {}
        if arguments.warehouse and state["warehouse"] != server_warehouse(arguments):
            raise ServiceError(
                f"The {service.title} already runs, on the warehouse {state['warehouse']}: stop "
                f"it first (`{COMMAND} stop {service.name}{run_dir_option(run_dir)}`)"
            )
        report(arguments, state, started_text(service.name, state, run_dir, already=True))
        return 0
    # What a broken start left, or a record that outlived its processes (only processes
    # still the ones recorded are signalled).
    for pid, check in service.stop().not_signalled.items():
        print(not_signalled_line(service.title, pid, check), file=sys.stderr)
    connect_binds = connect_binds_an_address(installed_spark_line())
    listen = listen_address(service.name, arguments.bind, connect_binds)
    # 0: a free port (the cluster's master).
    port: int = arguments.port or SERVER_PORTS.get(service.name, 0)
    if port and port_taken(listen, port):
        on = "" if every_interface(listen) else f" on {listen}"
        raise ServiceError(
            f"Port {port}{on} is taken (by another {service.title}, or another program): "
            "stop that, or choose another port with `--port N` (and set the profile's `port` "
            "to it)"
        )
    warning = exposure_warning(service.name, listen, port, connect_binds)
    if warning:
        print(warning, file=sys.stderr)
    if service.name == "cluster":
        state = start_cluster(service, listen, port)
    else:
        start_server = start_thrift if service.name == "thrift" else start_connect
        master = arguments.master or DEFAULT_MASTER
        state = start_server(service, server_warehouse(arguments), master, listen, port)
    report(arguments, state, started_text(service.name, state, run_dir, already=False))
    return 0


def stop(arguments: argparse.Namespace, run_dir: Path) -> int:
    service = Service(arguments.service, run_dir)
    state = service.state()
    stopped = service.stop()
    result = {"stopped": stopped.stopped, "not_signalled": list(stopped.not_signalled)}
    report(arguments, result, stopped_text(service.name, state, stopped))
    return 0


def status(arguments: argparse.Namespace, run_dir: Path) -> int:
    names = [arguments.service] if arguments.service else list(SERVICES)
    services = [Service(name, run_dir) for name in names]
    # The lines first: a stale record is removed as its line says so.
    text = "\n".join(status_line(service, run_dir) for service in services)
    states = {s.name: {"running": s.running(), **(s.state() or {})} for s in services}
    report(arguments, states[arguments.service] if arguments.service else states, text)
    return 0 if any(state["running"] for state in states.values()) else 1


def report(arguments: argparse.Namespace, state: object, text: str) -> None:
    """The state as JSON with `--json`, else the text for a person."""
    print(json.dumps(state) if arguments.json else text)


ACTIONS: dict[str, Callable[[argparse.Namespace, Path], int]] = {
    "start": start,
    "stop": stop,
    "status": status,
}


def log_lines_to_stderr() -> None:
    """dbt's log lines (the adapter's: a jar downloaded on first use, Spark starting) on
    stderr, as dbt's default console format: stdout is the command's result, which
    `--json` makes one JSON document for a script to parse."""
    from dbt_common.events.base_types import EventLevel
    from dbt_common.events.event_manager_client import cleanup_event_logger, get_event_manager
    from dbt_common.events.functions import get_stdout_config
    from dbt_common.events.logger import LineFormat

    console = get_stdout_config(LineFormat.PlainText, True, EventLevel.INFO, False)
    cleanup_event_logger()
    get_event_manager().add_logger(dataclasses.replace(console, output_stream=sys.stderr))


def main(argv: list[str] | None = None) -> int:
    command = parser()
    arguments = command.parse_args(argv)
    log_lines_to_stderr()
    run_dir = run_folder(arguments.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        return ACTIONS[arguments.action](arguments, run_dir)
    except UsageError as error:
        command.error(str(error))
    except ServiceError as error:
        print(error, file=sys.stderr)
        return 1
    except MissingDependencyError as error:  # no Java, or a jar that cannot be fetched
        print(error.msg, file=sys.stderr)  # the sentence, without dbt's "Runtime Error"
        return 1


if __name__ == "__main__":
    sys.exit(main())
