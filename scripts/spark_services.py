"""Start, stop and check local Spark services built from pyspark's own jars, bound to
127.0.0.1: a standalone cluster (a master and two workers) and a Spark Thrift Server
and a Spark Connect server (the warm engine of `method: connect`), whose Iceberg catalog is
the profile's embedded catalog.

    python scripts/spark_services.py cluster start|stop|status
    python scripts/spark_services.py thrift start|stop|status --warehouse DIR
    python scripts/spark_services.py connect start|stop|status --warehouse DIR [--port N]

State (pid files, logs, ports) lives in `--run-dir` (default `.spark-run/`). `stop` stops
exactly the processes `start` recorded. `start` returns once the service answers.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

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
from dbt.adapters.s3tables.engines.spark_session import LOG4J_CONFIG, session_settings

SPARK_HOME = Path(pyspark.__file__).parent
HOST = "127.0.0.1"
WORKERS = 2
START_TIMEOUT = 120


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def spark_class(main_class: str, *arguments: str) -> list[str]:
    """pyspark's own launcher script: it builds the JVM command (classpath, Java 17
    module options) exactly as a Spark distribution does."""
    find_java()
    return [str(SPARK_HOME / "bin" / "spark-class"), main_class, *arguments]


class Service:
    """One kind of service: its processes are recorded in `<run_dir>/<name>.json`."""

    def __init__(self, name: str, run_dir: Path) -> None:
        self.name = name
        self.run_dir = run_dir
        self.state_file = run_dir / f"{name}.json"

    def state(self) -> dict | None:
        if not self.state_file.exists():
            return None
        return json.loads(self.state_file.read_text())

    def launch(self, label: str, command: list[str], env: dict[str, str]) -> int:
        log = (self.run_dir / f"{self.name}-{label}.log").open("wb")
        process = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            # Spark's launcher asks for the Scala version outside a release layout.
            env={
                **os.environ,
                "SPARK_HOME": str(SPARK_HOME),
                "SPARK_SCALA_VERSION": scala_version(installed_spark_line()),
                # The adapter's log4j config writes the JVM's own log to this file.
                "SPARK_DAEMON_JAVA_OPTS": f"-Dlog4j.configurationFile=file:{LOG4J_CONFIG} "
                f"-Ddbt.s3tables.spark.log={self.jvm_log(label)}",
                "SPARK_DAEMON_MEMORY": "1g",
                **env,
            },
            start_new_session=True,
        )
        return process.pid

    def jvm_log(self, label: str) -> Path:
        return self.run_dir / f"{self.name}-{label}-jvm.log"

    def alive(self) -> list[int]:
        state = self.state() or {}
        return [pid for pid in state.get("pids", []) if pid_alive(pid)]

    def stop(self) -> None:
        for pid in self.alive():
            os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.2)
        for pid in self.alive():
            os.killpg(pid, signal.SIGKILL)
        self.state_file.unlink(missing_ok=True)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    # A zombie (exited child not yet reaped) is not alive.
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split()[2] == "Z")


def wait_for(check, what: str, service: Service) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if not service.alive():
            raise SystemExit(f"{what}: a process exited; see the logs in {service.run_dir}")
        if check():
            return
        time.sleep(0.5)
    service.stop()
    raise SystemExit(f"{what} did not answer within {START_TIMEOUT} s; logs in {service.run_dir}")


# --- standalone cluster ---


def master_status(web_port: int) -> dict | None:
    try:
        with urllib.request.urlopen(f"http://{HOST}:{web_port}/json/", timeout=2) as response:
            return json.loads(response.read())
    except OSError:
        return None


def start_cluster(service: Service) -> dict:
    port, web_port = free_port(), free_port()
    pids = [
        service.launch(
            "master",
            spark_class(
                "org.apache.spark.deploy.master.Master",
                "--host",
                HOST,
                "--port",
                str(port),
                "--webui-port",
                str(web_port),
            ),
            {"SPARK_MASTER_HOST": HOST},
        )
    ]
    url = f"spark://{HOST}:{port}"
    state = {"pids": pids, "master": url, "web_port": web_port}
    service.state_file.write_text(json.dumps(state))
    wait_for(lambda: master_status(web_port) is not None, "the master", service)
    for number in range(WORKERS):
        work_dir = service.run_dir / f"worker-{number}"
        work_dir.mkdir(exist_ok=True)
        pids.append(
            service.launch(
                f"worker-{number}",
                spark_class(
                    "org.apache.spark.deploy.worker.Worker",
                    "--host",
                    HOST,
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
                {"SPARK_LOCAL_IP": HOST, "SPARK_WORKER_DIR": str(work_dir)},
            )
        )
        service.state_file.write_text(json.dumps(state))

    def workers_alive() -> bool:
        status = master_status(web_port) or {}
        return sum(w.get("state") == "ALIVE" for w in status.get("workers", [])) == WORKERS

    wait_for(workers_alive, f"{WORKERS} workers", service)
    return state


# --- thrift server ---


def port_answers(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1):
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
    port: int,
    warehouse: str,
    answers: Callable[[int], bool],
    what: str,
) -> dict:
    """Start the server's spark-submit, record its state, and wait until it answers."""
    pid = service.launch(
        "server",
        spark_class("org.apache.spark.deploy.SparkSubmit", *arguments),
        {"SPARK_LOCAL_IP": HOST},
    )
    state = {"pids": [pid], "host": HOST, "port": port, "warehouse": warehouse}
    service.state_file.write_text(json.dumps(state))
    wait_for(lambda: answers(port), what, service)
    return state


def start_thrift(service: Service, warehouse: str, master: str) -> dict:
    arguments = embedded_catalog_submit(service, warehouse, master, "dbt-s3tables-thrift")
    port = free_port()
    arguments += [
        "--class",
        "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
        "spark-internal",
        "--hiveconf",
        f"hive.server2.thrift.port={port}",
        "--hiveconf",
        f"hive.server2.thrift.bind.host={HOST}",
    ]
    return launch_server(service, arguments, port, warehouse, port_answers, "the thrift server")


# --- Spark Connect server ---


def connect_answers(port: int) -> bool:
    """The server runs a query: its session, and the Iceberg catalog, are open (the first
    query pays for loading them, so no dbt run does)."""
    if not port_answers(port):
        return False
    from pyspark.sql import SparkSession

    try:
        spark = SparkSession.builder.remote(f"sc://{HOST}:{port}").create()
        spark.sql("SHOW NAMESPACES IN local").collect()
        spark.sql("SELECT 1").collect()
        spark.stop()
        return True
    except Exception:  # not ready yet: asked again until START_TIMEOUT
        return False


def start_connect(service: Service, warehouse: str, master: str, port: int | None) -> dict:
    arguments = embedded_catalog_submit(
        service, warehouse, master, "dbt-s3tables-connect", spark_connect_server()
    )
    port = port or free_port()
    # Spark 3.5's server listens on every interface (a binding address is Spark 4's
    # `spark.connect.grpc.binding.address`); its driver binds to 127.0.0.1.
    arguments += [
        "--conf",
        f"spark.connect.grpc.binding.port={port}",
        "--class",
        "org.apache.spark.sql.connect.service.SparkConnectServer",
        "spark-internal",
    ]
    return launch_server(
        service, arguments, port, warehouse, connect_answers, "the Spark Connect server"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("service", choices=["cluster", "thrift", "connect"])
    parser.add_argument("action", choices=["start", "stop", "status"])
    parser.add_argument("--run-dir", default=".spark-run")
    parser.add_argument(
        "--warehouse", help="thrift, connect: the embedded catalog's warehouse folder"
    )
    parser.add_argument("--master", default="local[2]", help="thrift, connect: Spark master URL")
    parser.add_argument("--port", type=int, help="connect: the server's port (default: a free one)")
    args = parser.parse_args()
    run_dir = Path(args.run_dir).resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    service = Service(args.service, run_dir)
    if args.action == "stop":
        service.stop()
        return
    if args.action == "status":
        state = service.state()
        running = bool(state) and len(service.alive()) == len(state["pids"])
        print(json.dumps({"running": running, **(state or {})}))
        sys.exit(0 if running else 1)
    if service.alive():
        print(json.dumps(service.state()))
        return
    if args.service == "cluster":
        state = start_cluster(service)
    elif not args.warehouse:
        raise SystemExit(f"{args.service} start needs --warehouse")
    elif args.service == "thrift":
        state = start_thrift(service, str(Path(args.warehouse).resolve()), args.master)
    else:
        state = start_connect(service, str(Path(args.warehouse).resolve()), args.master, args.port)
    print(json.dumps(state))


if __name__ == "__main__":
    main()
