"""The local Spark services a benchmark starts and stops, through the installed
`dbt-s3tables-engine` of this interpreter (its state as JSON)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from dbt.adapters.s3tables.catalogs.jars import installed_spark_line
from dbt.adapters.s3tables.engines.local_services import connect_binds_an_address

ENGINE_COMMAND = str(Path(sys.executable).parent / "dbt-s3tables-engine")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def engine(action: str, service: str, run_dir: Path, *extra: str) -> dict[str, Any]:
    """`dbt-s3tables-engine <action> <service>` with its state in `run_dir`; a server starts
    on a free port (a server of the user's may hold the default one)."""
    if action == "start" and service != "cluster":
        extra = ("--port", str(free_port()), *extra)
    connect_binds = connect_binds_an_address(installed_spark_line())
    if action == "start" and service == "connect" and not connect_binds:
        # Spark 3.5's Connect server cannot listen on one address: accepted for a benchmark.
        extra = ("--bind", "0.0.0.0", *extra)
    result = subprocess.run(
        [ENGINE_COMMAND, action, service, "--run-dir", str(run_dir), "--json", *extra],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode != 0:
        raise SystemExit(f"{service} {action} failed: {result.stdout}{result.stderr}")
    state: dict[str, Any] = json.loads(result.stdout)
    return state
