"""Benchmark: `dbt build` of the project's own integration_tests/ (every model kind and
strategy of the adapter, seeds, snapshots, data tests) as a whole process, over a local
Spark Thrift Server (`method: thrift`), over a local Spark Connect server (`method:
connect`), both on one warehouse (`dbt-s3tables-engine start`), and in process (`method:
session`, a Spark of its own per build) on the same warehouse. dbt-spark has no peer here:
the project uses what only this adapter has. The Python model is left out everywhere (it
needs `method: session` by design).

Each round builds each contender (order rotated) into a schema of its own, new that
round: a first build, every table created. Per contender: the process's wall time, the
nodes that passed; the 1-minute load average with each round. Raw numbers go to
`bench/results/server_integration_build.csv`.

    .venv/bin/python bench/server_integration_build.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engines import engine
from incremental_scale import MASTER
from machine import write_csv

DBT = str(Path(sys.executable).parent / "dbt")
PROJECT = Path(__file__).resolve().parents[1] / "integration_tests"
PYTHON_MODEL = "customer_balances_py"
CONTENDERS = ("thrift", "connect", "session")
FLOOR = "session"


def output(method: str, server: dict, warehouse: Path, schema: str) -> dict[str, object]:
    """The profile's output for one contender (threads 4, as the server benchmarks)."""
    where: dict[str, object] = (
        {"master": MASTER}
        if method == "session"
        else {"host": server["host"], "port": server["port"]}
    )
    return {
        "type": "s3tables",
        "method": method,
        "warehouse": str(warehouse),
        "schema": schema,
        "threads": 4,
        **where,
    }


def build(root: Path) -> tuple[float, int]:
    """`dbt build` of integration_tests/ with the profile in `root`: its wall time and the
    nodes that passed (a node that did not stops the benchmark)."""
    started = time.perf_counter()
    result = subprocess.run(
        [
            DBT,
            "build",
            "--quiet",
            "--project-dir",
            str(PROJECT),
            "--profiles-dir",
            str(root),
            "--target-path",
            str(root / "target"),
            "--log-path",
            str(root / "logs"),
            "--exclude",
            PYTHON_MODEL,
            f"{PYTHON_MODEL}_values",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"},
        timeout=3600,
    )
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"dbt build in {root} failed:\n{result.stdout[-4000:]}{result.stderr}")
    results = json.loads((root / "target" / "run_results.json").read_text())["results"]
    return seconds, sum(r["status"] in ("success", "pass") for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_integration_") as temp:
        base = Path(temp)
        warehouse = base / "warehouse"
        servers: dict[str, dict] = {}
        try:
            for service in ("thrift", "connect"):
                servers[service] = engine(
                    "start", service, base / service, "--warehouse", str(warehouse)
                )
            for round_number in range(1, args.rounds + 1):
                shift = round_number % len(CONTENDERS)
                for method in CONTENDERS[shift:] + CONTENDERS[:shift]:
                    root = base / f"{method}-{round_number}"
                    root.mkdir()
                    schema = f"bench_it_{method}_{round_number}"
                    profile = {
                        "target": "t",
                        "outputs": {
                            "t": output(method, servers.get(method, {}), warehouse, schema)
                        },
                    }
                    (root / "profiles.yml").write_text(json.dumps({"integration_tests": profile}))
                    load = os.getloadavg()[0]
                    seconds, nodes = build(root)
                    rows.append(
                        {
                            "contender": method,
                            "round": round_number,
                            "seconds": round(seconds, 3),
                            "nodes_passed": nodes,
                            "load_1m": load,
                        }
                    )
        finally:
            for service in servers:
                engine("stop", service, base / service)
    floor = statistics.median(r["seconds"] for r in rows if r["contender"] == FLOOR)
    print(f"dbt build of integration_tests/, whole processes, medians of {args.rounds}:")
    for method in CONTENDERS:
        mine = [r for r in rows if r["contender"] == method]
        seconds = statistics.median(r["seconds"] for r in mine)
        print(
            f"  {method}: {seconds:.2f} s ({seconds / floor:.2f}x in process), "
            f"{mine[0]['nodes_passed']} nodes passed"
        )
    loads = [r["load_1m"] for r in rows]
    print(f"  1-minute load average: {min(loads):.1f}-{max(loads):.1f}")
    print(f"raw numbers: {write_csv('server_integration_build', rows)}")


if __name__ == "__main__":
    main()
