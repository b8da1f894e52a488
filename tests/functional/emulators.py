"""Emulators the tests start themselves on 127.0.0.1 (AWS ones with fake credentials):

- ministack: the S3 Tables API, S3, and the S3 Tables Iceberg REST endpoint (`/iceberg`),
  run from its own virtualenv (`make emulators`) because it pins its own botocore, with
  its commits' branch updates applied as the Iceberg REST spec says (ministack_refs.py);
- moto: the boto3 `s3tables` management API, in this process;
- Apache Iceberg's REST catalog test server (`iceberg_rest_server`), from Maven jars that
  `make emulators` puts in `.emulator-jars/iceberg-rest-fixture`;
- Spark's own services (a standalone cluster, a Thrift server, a Spark Connect server),
  started and stopped by the installed `dbt-s3tables-engine` (`engine_command`,
  `services`, `services_alive`), and the addresses a port is listened on
  (`listening_addresses`).
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dbt.adapters.s3tables.catalogs.jars import installed_spark_line
from dbt.adapters.s3tables.engines.local_services import connect_binds_an_address
from tests.functional.harness import TEST_JVM_OPTIONS, TEST_SPARK_SUBMIT_OPTS

REPO = Path(__file__).resolve().parents[2]
MINISTACK_PYTHON = REPO / ".venv-ministack" / "bin" / "python"
EMULATOR_JARS = REPO / ".emulator-jars"
REGION = "us-east-1"
# ministack's default account: the ARNs it hands out carry it.
ACCOUNT = "000000000000"
FAKE_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing-secret",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def require(path: Path) -> Path:
    if not path.exists():
        raise RuntimeError(f"{path} is missing: run `make emulators` (part of `make test`)")
    return path


def _wait_for_answer(url: str, process: subprocess.Popen, name: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{name} did not answer {url} within {timeout} s")


def _stop(process: subprocess.Popen) -> None:
    """Stop an emulator: politely, then for good after 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def ministack(log_path: Path) -> Iterator[str]:
    """A fresh ministack on a free port; yields its endpoint URL."""
    port = free_port()
    env = {
        **os.environ,
        **FAKE_AWS_ENV,
        "GATEWAY_PORT": str(port),
        "BIND_HOST": "127.0.0.1",
        "MINISTACK_HOST": "127.0.0.1",
        "LOG_LEVEL": "WARNING",
    }
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            # With its branch updates as the Iceberg REST spec applies them (see there).
            [str(require(MINISTACK_PYTHON)), str(Path(__file__).with_name("ministack_refs.py"))],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        _wait_for_answer(f"{endpoint}/_ministack/health", process, "ministack", timeout=60)
        yield endpoint
    finally:
        _stop(process)


@contextmanager
def fake_aws_environment(**extra: str) -> Iterator[None]:
    """Fake credentials (and `extra` variables) in this process's environment."""
    changes = {**FAKE_AWS_ENV, **extra}
    saved = {key: os.environ.get(key) for key in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# Apache Iceberg's REST catalog test server (`make emulators` puts it and its jars in one
# folder): a second, independent Iceberg REST implementation next to ministack's.
REST_FIXTURE_JARS = EMULATOR_JARS / "iceberg-rest-fixture"
REST_FIXTURE_MAIN = "org.apache.iceberg.rest.RESTCatalogServer"


@contextmanager
def iceberg_rest_server(warehouse: Path, log_path: Path) -> Iterator[str]:
    """Iceberg's `RESTCatalogServer` on a free port; yields its URI (`http://127.0.0.1:<port>`).

    The server reads its catalog properties from `CATALOG_*` variables (`CATALOG_` dropped,
    `__` -> `-`, `_` -> `.`, lower case): a JDBC catalog on an in-memory H2 database (kept
    until the server stops), tables under `warehouse` (a local folder) through HadoopFileIO.
    It listens on every interface (Jetty's default; it has no host setting); only
    127.0.0.1 is used. The warehouse URI the server expects is `warehouse.as_uri()`.
    """
    jars = require(REST_FIXTURE_JARS)
    port = free_port()
    warehouse.mkdir(parents=True, exist_ok=True)
    # Only these catalog properties: the server turns every CATALOG_* variable into one.
    env = {key: value for key, value in os.environ.items() if not key.startswith("CATALOG_")}
    env.update(
        {
            "CATALOG_REST_PORT": str(port),
            "CATALOG_WAREHOUSE": warehouse.as_uri(),
            "CATALOG_URI": f"jdbc:h2:mem:iceberg_rest_{port};DB_CLOSE_DELAY=-1",
            "CATALOG_IO__IMPL": "org.apache.iceberg.hadoop.HadoopFileIO",
        }
    )
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            ["java", *TEST_JVM_OPTIONS.split(), "-cp", f"{jars}/*", REST_FIXTURE_MAIN],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    uri = f"http://127.0.0.1:{port}"
    try:
        _wait_for_answer(f"{uri}/v1/config", process, "Iceberg's REST catalog server", 60)
        yield uri
    finally:
        _stop(process)


# The console script installed with the adapter, beside this interpreter.
ENGINE_COMMAND = str(Path(sys.executable).parent / "dbt-s3tables-engine")


def engine_command(
    action: str, service: str, run_dir: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    """`dbt-s3tables-engine <action> <service> --run-dir run_dir extra`, waited for; a
    server it starts has the tests' Spark settings (`TEST_SPARK_SQL_SETTINGS`)."""
    return subprocess.run(
        [ENGINE_COMMAND, action, service, "--run-dir", str(run_dir), *extra],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "SPARK_SUBMIT_OPTS": TEST_SPARK_SUBMIT_OPTS},
    )


def connect_bind() -> tuple[str, ...]:
    """The `--bind` a Connect server's start needs here: Spark 3.5's cannot listen on one
    address, so its start must accept every interface (`--bind 0.0.0.0`)."""
    return () if connect_binds_an_address(installed_spark_line()) else ("--bind", "0.0.0.0")


def services(action: str, service: str, run_dir: Path, *extra: str) -> dict:
    """`dbt-s3tables-engine <action> <service> --json` (start, stop); the state it prints.
    A server starts on a free port unless `extra` names one: other test processes, and
    other checkouts' tests on this machine, may hold the default ports."""
    if action == "start" and service != "cluster" and "--port" not in extra:
        extra = ("--port", str(free_port()), *extra)
    if action == "start" and service == "connect" and "--bind" not in extra:
        extra = (*connect_bind(), *extra)
    result = engine_command(action, service, run_dir, "--json", *extra)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def connect_output(state: dict, **extra: object) -> dict:
    """A `method: connect` profile output on the server `services("start", "connect")`
    reported (`state`), schema `analytics`; `extra` keys added or replaced."""
    return {
        "type": "s3tables",
        "method": "connect",
        "host": state["host"],
        "port": state["port"],
        "warehouse": state["warehouse"],
        "schema": "analytics",
        "threads": 2,
        "connect_timeout": 3,
        **extra,
    }


def services_alive(run_dir: Path, service: str) -> bool:
    return engine_command("status", service, run_dir).returncode == 0


def listening_addresses(port: int) -> set[str]:
    """The addresses this machine listens on at TCP `port` (the kernel's socket tables): `::`
    or `0.0.0.0` is every interface; an IPv4 address on an IPv6 socket is given as IPv4."""
    found = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state != "0A" or int(hex_port, 16) != port:  # 0A: LISTEN
                continue
            raw = bytes.fromhex(address)
            # Each 32-bit word of the address is printed in the machine's byte order.
            if sys.byteorder == "little":
                raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
            ip = ipaddress.ip_address(raw)
            mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
            found.add(str(mapped or ip))
    return found
