"""The local Spark services that `dbt-s3tables-engine` (engine_command.py) starts, built
from pyspark's own launcher and jars, those of the interpreter the adapter is installed in:
a standalone cluster (a master and two workers), a Spark Thrift Server and a Spark Connect
server (the warm engine of `method: connect`). Both servers' Iceberg catalog is the
embedded catalog of a warehouse folder, as the profile's `local` catalog.

What this module owns: launching a service's processes, recording them in
`<run_dir>/<service>.json` (pids and what identifies each process beyond its pid, address,
warehouse), waiting until the service answers, and stopping exactly the processes a start
recorded. A recorded pid counts only while its process still has the identity recorded
(process_identity.py): a record that outlived its processes (a crash, a reboot) names pids
the system may have handed to other programs, which are never signalled. Each process
writes its console to `<run_dir>/<service>-<process>.log` and its JVM's log beside it
(`...-jvm.log`).
"""

from __future__ import annotations

import ipaddress
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyspark

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.jars import (
    Artifact,
    JarSources,
    find_java,
    installed_spark_line,
    resolve_jars,
    scala_version,
    spark_connect_server,
)
from dbt.adapters.s3tables.engines.process_identity import (
    ProcessCheck,
    check_recorded,
    process_identity,
)
from dbt.adapters.s3tables.engines.spark_session import LOG4J_CONFIG, session_settings

SPARK_HOME = Path(pyspark.__file__).parent
LOOPBACK = "127.0.0.1"
WORKERS = 2
START_TIMEOUT = 120
# The services, as the command names them, and what messages call them.
SERVICE_TITLES = {
    "connect": "Spark Connect server",
    "thrift": "Spark Thrift Server",
    "cluster": "Spark standalone cluster",
}

State = dict[str, Any]


class ServiceError(Exception):
    """A service that did not start or answer: one sentence for the user."""


def every_interface(address: str) -> bool:
    """Whether `address` (an IP address) is the wildcard: every interface of the machine."""
    return ipaddress.ip_address(address).is_unspecified


def client_host(bind: str) -> str:
    """Where a client on this machine reaches a service listening on `bind`."""
    return LOOPBACK if every_interface(bind) else bind


def connect_binds_an_address(spark_line: str) -> bool:
    """Whether the line's Connect server can listen on one address: Spark 4 has
    `spark.connect.grpc.binding.address`; Spark 3.5's server (3.5.7, the newest 3.5 jar)
    has only a port, and listens on every interface."""
    return spark_line != "3.5"


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


def port_taken(bind: str, port: int) -> bool:
    """Whether a server could not listen on `bind`:`port` (something already does)."""
    try:
        family = socket.AF_INET6 if ":" in bind else socket.AF_INET
        socket.create_server((bind, port), family=family).close()
    except OSError:
        return True
    return False


def spark_class(main_class: str, *arguments: str) -> list[str]:
    """pyspark's own launcher script: it builds the JVM command (classpath, Java 17
    module options) exactly as a Spark distribution does."""
    find_java()
    return [str(SPARK_HOME / "bin" / "spark-class"), main_class, *arguments]


def signal_group(pid: int, signum: signal.Signals) -> None:
    """Signal the process group a checked service process leads (it exited meanwhile:
    nothing to do)."""
    try:
        os.killpg(pid, signum)
    except ProcessLookupError:
        pass


@dataclass
class StopReport:
    """What `Service.stop` did: the pids it stopped, and the recorded pids it left alone
    because their process is not (or cannot be shown to be) the one recorded."""

    stopped: list[int] = field(default_factory=list)
    not_signalled: dict[int, ProcessCheck] = field(default_factory=dict)


class Service:
    """One kind of service: its processes are recorded in `<run_dir>/<name>.json`."""

    def __init__(self, name: str, run_dir: Path) -> None:
        self.name = name
        self.run_dir = run_dir
        self.state_file = run_dir / f"{name}.json"
        # The identity of each process this object launched, taken at its launch.
        self.identities: dict[int, str | None] = {}

    @property
    def title(self) -> str:
        return SERVICE_TITLES[self.name]

    def state(self) -> State | None:
        if not self.state_file.exists():
            return None
        state: State = json.loads(self.state_file.read_text())
        return state

    def record(self, state: State) -> None:
        """Write the state, with the identity of each of its pids this object launched."""
        identities = {str(pid): self.identities.get(pid) for pid in state["pids"]}
        self.state_file.write_text(json.dumps({**state, "identities": identities}))

    def forget(self) -> None:
        """Remove the record (never signalling anything)."""
        self.state_file.unlink(missing_ok=True)

    def log(self, label: str) -> Path:
        return self.run_dir / f"{self.name}-{label}.log"

    def jvm_log(self, label: str) -> Path:
        return self.run_dir / f"{self.name}-{label}-jvm.log"

    def launch(self, label: str, command: list[str], env: dict[str, str]) -> int:
        with self.log(label).open("wb") as log:
            process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                # What a JVM writes to its working folder (the Thrift Server's Derby
                # metastore, for one) stays with its logs, not in the user's project.
                cwd=self.run_dir,
                env={
                    **os.environ,
                    "SPARK_HOME": str(SPARK_HOME),
                    # Spark's launcher asks for the Scala version outside a release layout.
                    "SPARK_SCALA_VERSION": scala_version(installed_spark_line()),
                    # The adapter's log4j config writes the JVM's own log to this file.
                    "SPARK_DAEMON_JAVA_OPTS": f"-Dlog4j.configurationFile=file:{LOG4J_CONFIG} "
                    f"-Ddbt.s3tables.spark.log={self.jvm_log(label)}",
                    "SPARK_DAEMON_MEMORY": "1g",
                    # Python workers (UDFs) run this interpreter: its pyspark is the JVM's.
                    "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
                    **env,
                },
                start_new_session=True,
            )
        # Taken now, while the process is surely the one launched (its pid leads the new
        # session: `stop` signals that process group).
        self.identities[process.pid] = process_identity(process.pid)
        return process.pid

    def checks(self) -> dict[int, ProcessCheck]:
        """What each recorded pid is now (see process_identity.py); empty without a record.
        A record without identities (an older version's) leaves every live pid
        unverifiable."""
        state = self.state() or {}
        identities = state.get("identities") or {}
        return {pid: check_recorded(pid, identities.get(str(pid))) for pid in state.get("pids", [])}

    def alive(self) -> list[int]:
        """The recorded pids whose process is still the one recorded."""
        return [pid for pid, check in self.checks().items() if check is ProcessCheck.RUNNING]

    def running(self) -> bool:
        """Whether every process the start recorded is alive and still the one recorded."""
        checks = self.checks()
        return bool(checks) and all(c is ProcessCheck.RUNNING for c in checks.values())

    def stale(self) -> bool:
        """Whether the record names no process of the service any more: each of its pids
        exited, or now has another process (never one it cannot verify)."""
        checks = self.checks()
        return bool(checks) and all(
            c in (ProcessCheck.EXITED, ProcessCheck.RECYCLED) for c in checks.values()
        )

    def stop(self) -> StopReport:
        """Stop the recorded processes that are still the ones recorded (politely, then for
        good after 20 s) and remove the record. A pid whose process is another one, or
        cannot be shown to be the one recorded, is never signalled."""
        report = StopReport()
        for pid, check in self.checks().items():
            if check is ProcessCheck.RUNNING:
                report.stopped.append(pid)
            elif check is not ProcessCheck.EXITED:
                report.not_signalled[pid] = check
        # Each signal follows a check of the identity (`alive()` checks again): a pid that
        # exits meanwhile and goes to another program is not signalled after the wait.
        for pid in report.stopped:
            signal_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.2)
        for pid in self.alive():
            signal_group(pid, signal.SIGKILL)
        self.forget()
        return report

    def wait_for(self, check: Callable[[], bool], what: str) -> None:
        """Return once `check()` holds; stop the service and say where its logs are when a
        process exits or START_TIMEOUT passes first."""
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if len(self.alive()) < len((self.state() or {}).get("pids", [])):
                self.stop()
                raise ServiceError(f"{what}: a process exited; see the logs in {self.run_dir}")
            if check():
                return
            time.sleep(0.5)
        self.stop()
        raise ServiceError(
            f"{what} did not answer within {START_TIMEOUT} s; see the logs in {self.run_dir}"
        )


def base_state(bind: str, port: int) -> State:
    """What every service records besides its pids: its address and Spark's version."""
    return {"host": client_host(bind), "port": port, "bind": bind, "spark": pyspark.__version__}


# --- standalone cluster ---


def master_status(host: str, web_port: int) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(f"http://{host}:{web_port}/json/", timeout=2) as response:
            status: dict[str, Any] = json.loads(response.read())
            return status
    except OSError:
        return None


def start_cluster(service: Service, bind: str, port: int) -> State:
    """A master (on `port`; 0: a free one) and WORKERS workers, all on `bind`."""
    port = port or free_port(bind)
    web_port = free_port(bind)
    # Spark's daemons bind their other ports (and the web UIs) to SPARK_LOCAL_IP.
    local = {"SPARK_LOCAL_IP": bind}
    pids = [
        service.launch(
            "master",
            spark_class(
                "org.apache.spark.deploy.master.Master",
                "--host",
                bind,
                "--port",
                str(port),
                "--webui-port",
                str(web_port),
            ),
            {**local, "SPARK_MASTER_HOST": bind},
        )
    ]
    url = f"spark://{bind}:{port}"
    state = {**base_state(bind, port), "pids": pids, "master": url, "web_port": web_port}
    service.record(state)
    service.wait_for(lambda: master_status(bind, web_port) is not None, "the master")
    for number in range(WORKERS):
        work_dir = service.run_dir / f"worker-{number}"
        work_dir.mkdir(exist_ok=True)
        pids.append(
            service.launch(
                f"worker-{number}",
                spark_class(
                    "org.apache.spark.deploy.worker.Worker",
                    "--host",
                    bind,
                    "--cores",
                    "1",
                    "--memory",
                    "2g",
                    "--work-dir",
                    str(work_dir),
                    "--webui-port",
                    "0",
                    url,
                ),
                {**local, "SPARK_WORKER_DIR": str(work_dir)},
            )
        )
        service.record(state)

    def workers_alive() -> bool:
        workers = (master_status(bind, web_port) or {}).get("workers", [])
        return len([worker for worker in workers if worker.get("state") == "ALIVE"]) == WORKERS

    service.wait_for(workers_alive, f"{WORKERS} workers")
    return state


# --- the servers: thrift and connect ---


def port_answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def embedded_catalog_submit(
    service: Service, warehouse: str, master: str, app_name: str, extra: tuple[Artifact, ...] = ()
) -> list[str]:
    """spark-submit's arguments for a server whose Iceberg catalog is the embedded catalog in
    `warehouse`, with the settings the in-process session uses (and `extra` jars)."""
    catalog = CatalogConfig(name="local", catalog_type="local", warehouse=warehouse)
    iceberg = IcebergCatalog(catalog)
    # Spark's default catalog is the Iceberg catalog, and a server session starts in its
    # `default` namespace: without it, every session fails with SCHEMA_NOT_FOUND.
    iceberg.create_namespace("default")
    jars = resolve_jars([*catalog.jar_artifacts, *extra], JarSources())
    settings = session_settings(
        master=master,
        catalog=catalog,
        jars=jars,
        user_settings={},
        log_file=str(service.jvm_log("server")),
        # The server loads Iceberg's SQL extensions at start: its jars must be on the
        # driver's own classpath, not only in the `spark.jars` class loader.
        driver_class_path=jars.jars,
    )
    settings["spark.app.name"] = app_name
    arguments = ["--master", master]
    for key, value in settings.items():
        if key != "spark.master":
            arguments += ["--conf", f"{key}={value}"]
    return arguments


def launch_server(
    service: Service,
    arguments: list[str],
    state: State,
    answers: Callable[[str, int], bool],
) -> State:
    """Start the server's spark-submit, record its state, and wait until it answers."""
    pid = service.launch(
        "server",
        spark_class("org.apache.spark.deploy.SparkSubmit", *arguments),
        # The driver's own ports (RPC, block manager) serve only this machine.
        {"SPARK_LOCAL_IP": LOOPBACK},
    )
    state = {**state, "pids": [pid]}
    service.record(state)
    service.wait_for(lambda: answers(state["host"], state["port"]), f"the {service.title}")
    return state


def start_thrift(service: Service, warehouse: str, master: str, bind: str, port: int) -> State:
    arguments = embedded_catalog_submit(service, warehouse, master, "dbt-s3tables-thrift")
    arguments += [
        "--class",
        "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
        "spark-internal",
        "--hiveconf",
        f"hive.server2.thrift.port={port}",
        "--hiveconf",
        f"hive.server2.thrift.bind.host={bind}",
    ]
    state = {**base_state(bind, port), "warehouse": warehouse}
    return launch_server(service, arguments, state, port_answers)


def connect_answers(host: str, port: int) -> bool:
    """The server runs a query: its session, and the Iceberg catalog, are open (the first
    query pays for loading them, so no dbt run does)."""
    if not port_answers(host, port):
        return False
    from pyspark.sql import SparkSession

    try:
        spark = SparkSession.builder.remote(f"sc://{host}:{port}").create()
        spark.sql("SHOW NAMESPACES IN local").collect()
        spark.sql("SELECT 1").collect()
        spark.stop()
        return True
    except Exception:  # not ready yet: asked again until START_TIMEOUT
        return False


def start_connect(service: Service, warehouse: str, master: str, bind: str, port: int) -> State:
    """The Connect server on `bind`:`port`. Spark 3.5's listens on every interface: its
    caller passes the wildcard address then (see `connect_binds_an_address`)."""
    arguments = embedded_catalog_submit(
        service, warehouse, master, "dbt-s3tables-connect", spark_connect_server()
    )
    arguments += ["--conf", f"spark.connect.grpc.binding.port={port}"]
    if connect_binds_an_address(installed_spark_line()):
        arguments += ["--conf", f"spark.connect.grpc.binding.address={bind}"]
    arguments += ["--class", "org.apache.spark.sql.connect.service.SparkConnectServer"]
    arguments += ["spark-internal"]
    state = {**base_state(bind, port), "warehouse": warehouse}
    return launch_server(service, arguments, state, connect_answers)
