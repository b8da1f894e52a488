"""Benchmark: the production path, a Spark server (EMR's Thrift server), as a scheduler
runs it: whole `dbt run` processes of this adapter (`method: thrift`) beside dbt-spark
(`method: thrift`, `file_format: iceberg`) against one local Spark Thrift Server
(`dbt-s3tables-engine start thrift`, the embedded catalog), alternating, medians; and this
adapter over a local Spark Connect server on the same warehouse (`method: connect`, which
dbt-spark does not have: its peer is dbt-spark over thrift).

- the DAG: dag_rerun.py's 60 models (20 tables, 20 incremental merges of 2% of their
  table's rows, 20 views; threads 4), rerun after a first build and one untimed rerun;
- a 1% merge: one incremental merge model of `--merge-rows` rows, each run merging a new
  1% of them (updated amounts) after a first build.

With `--in-process`, both adapters also run in the dbt process (`method: session`, a
Spark of their own per `dbt run`, on the same warehouse: this adapter's catalog settings
given to dbt-spark), as whole processes too: the in-process path as a scheduler runs it.

Per contender: the process's wall time (dbt's start, parse, the server's statements);
the 1-minute load average with each round. Raw numbers go to
`bench/results/server_dag_rerun.csv`.

    .venv/bin/python bench/server_dag_rerun.py [--rows 20000] [--merge-rows 1000000] \
        [--rounds 3] [--workloads dag,merge] [--in-process] [--no-servers]
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

from dag_rerun import CHAINS, SOURCE, write_models
from engines import engine
from incremental_scale import CATALOG, MASTER
from machine import write_csv

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.jars import JarSources, resolve_jars
from dbt.adapters.s3tables.engines.spark_session import session_settings

DBT = str(Path(sys.executable).parent / "dbt")
# contender: (dbt adapter type, model configs added for that adapter, its method)
SERVER_CONTENDERS = {
    "s3tables (thrift)": ("s3tables", "", "thrift"),
    "dbt-spark (thrift)": ("spark", "file_format='iceberg', ", "thrift"),
    "s3tables (connect)": ("s3tables", "", "connect"),
}
IN_PROCESS_CONTENDERS = {
    "s3tables (in process)": ("s3tables", "", "session"),
    "dbt-spark (in process)": ("spark", "file_format='iceberg', ", "session"),
}
# Each contender's peer: dbt-spark over thrift for a server (dbt-spark has no Connect
# method), dbt-spark in process for the in-process path.
PEERS = {"thrift": "dbt-spark (thrift)", "connect": "dbt-spark (thrift)"}
PEERS["session"] = "dbt-spark (in process)"
MERGE_SOURCE = "bench_server_source.orders"
MERGE_MODEL = """
{{{{ config(materialized='incremental', incremental_strategy='merge', {extra}unique_key='id') }}}}
select id, concat('order ', id) as label, id * {{{{ var('round', 0) }}}} as amount
from {source}
{{% if is_incremental() %}} where id % 100 = {{{{ var('round', 0) }}}} {{% endif %}}
"""


def server_sql(state: dict, *statements: str) -> None:
    """Statements on the server through PyHive (the benchmark's own setup)."""
    from pyhive import hive

    cursor = hive.connect(host=state["host"], port=state["port"]).cursor()
    for statement in statements:
        cursor.execute(statement)


def write_project(
    root: Path, state: dict, adapter: str, schema: str, warehouse: Path, method: str
) -> None:
    (root / "dbt_project.yml").write_text(
        json.dumps(
            {"name": "bench_server", "version": "1.0", "config-version": 2, "profile": "bench"}
        )
    )
    output: dict[str, object] = {"type": adapter, "method": method, "schema": schema, "threads": 4}
    if method == "session":
        catalog = CatalogConfig(name=CATALOG, catalog_type="local", warehouse=str(warehouse))
        if adapter == "s3tables":
            output["master"] = MASTER
        else:  # dbt-spark's session on the same catalog, with this adapter's settings
            output["host"] = "localhost"
            output["server_side_parameters"] = session_settings(
                master=MASTER,
                catalog=catalog,
                jars=resolve_jars(catalog.jar_artifacts, JarSources()),
                user_settings={},
            )
    else:
        output.update(host=state["host"], port=state["port"])
    if adapter == "s3tables":
        output["warehouse"] = str(warehouse)
    (root / "profiles.yml").write_text(
        json.dumps({"bench": {"target": "t", "outputs": {"t": output}}})
    )


def dbt_run(root: Path, *args: str) -> float:
    """`dbt run` of the project in `root` in a process of its own: its wall time."""
    started = time.perf_counter()
    result = subprocess.run(
        [DBT, "run", "--quiet", "--project-dir", str(root), "--profiles-dir", str(root), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"},
        timeout=3600,
    )
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"dbt run in {root} failed:\n{result.stdout[-4000:]}{result.stderr}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--merge-rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--in-process", action="store_true", help="in-process contenders too")
    parser.add_argument("--workloads", type=lambda text: text.split(","), default=["dag", "merge"])
    parser.add_argument("--no-servers", action="store_true", help="only the in-process contenders")
    args = parser.parse_args()
    contenders = {} if args.no_servers else dict(SERVER_CONTENDERS)
    if args.in_process or args.no_servers:
        contenders.update(IN_PROCESS_CONTENDERS)
    services = ("thrift",) if args.no_servers else ("thrift", "connect")
    with tempfile.TemporaryDirectory(prefix="bench_server_") as temp:
        base = Path(temp)
        warehouse = base / "warehouse"
        servers: dict[str, dict] = {}
        try:
            for service in services:
                servers[service] = engine(
                    "start", service, base / service, "--warehouse", str(warehouse)
                )
            state = servers["thrift"]
            server_sql(
                state,
                "CREATE NAMESPACE IF NOT EXISTS bench_dag_source",
                f"CREATE OR REPLACE TABLE {SOURCE} USING iceberg AS SELECT id "
                f"FROM range({args.rows})",
                "CREATE NAMESPACE IF NOT EXISTS bench_server_source",
                f"CREATE OR REPLACE TABLE {MERGE_SOURCE} USING iceberg AS SELECT id "
                f"FROM range({args.merge_rows})",
            )
            if args.no_servers:  # the server made the sources; the runs need none
                engine("stop", "thrift", base / "thrift")
                servers.clear()
            projects = {}
            for label, (adapter, extra, service) in contenders.items():
                for workload in args.workloads:
                    root = base / f"{adapter}-{service}-{workload}"
                    root.mkdir()
                    schema = f"bench_server_{workload}_{adapter}_{service}"
                    write_project(
                        root, servers.get(service, {}), adapter, schema, warehouse, service
                    )
                    if workload == "dag":
                        write_models(root, extra)
                    else:
                        (root / "models").mkdir()
                        (root / "models" / "orders.sql").write_text(
                            MERGE_MODEL.format(extra=extra, source=MERGE_SOURCE)
                        )
                    if service != "session":
                        server_sql(state, f"CREATE NAMESPACE IF NOT EXISTS {schema}")
                    dbt_run(root)  # the first build, then a rerun: untimed
                    dbt_run(root, "--vars", "{round: 1}")
                    projects[label, workload] = root
            rows = []
            labels = list(contenders)
            for round_number in range(args.rounds):
                shift = round_number % len(labels)
                for workload in args.workloads:
                    for label in labels[shift:] + labels[:shift]:
                        load = os.getloadavg()[0]
                        seconds = dbt_run(
                            projects[label, workload], "--vars", f"{{round: {round_number + 2}}}"
                        )
                        rows.append(
                            {
                                "workload": workload,
                                "contender": label,
                                "round": round_number + 1,
                                "seconds": round(seconds, 3),
                                "load_1m": load,
                                "dag_source_rows": args.rows,
                                "merge_rows": args.merge_rows,
                            }
                        )
        finally:
            for service in servers:
                engine("stop", service, base / service)
    titles = {
        "dag": f"rerun of the {3 * CHAINS}-model DAG ({args.rows:,} source rows, threads 4)",
        "merge": f"a 1% merge into {args.merge_rows:,} rows",
    }
    for workload in args.workloads:
        title = titles[workload]
        medians = {
            label: statistics.median(
                r["seconds"] for r in rows if r["workload"] == workload and r["contender"] == label
            )
            for label in labels
        }
        print(f"{title}, whole dbt processes, medians of {args.rounds}:")
        for label in labels:
            peer = PEERS[contenders[label][2]]
            ratio = medians[label] / medians[peer]
            print(f"  {label}: {medians[label]:.2f} s ({ratio:.2f}x {peer})")
    loads = [r["load_1m"] for r in rows]
    print(f"  1-minute load average: {min(loads):.1f}-{max(loads):.1f}")
    print(f"raw numbers: {write_csv('server_dag_rerun', rows)}")


if __name__ == "__main__":
    main()
