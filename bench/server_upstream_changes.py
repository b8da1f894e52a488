"""Benchmark: a keyed `upstream_changes()` read over a Spark server beside the same read in
process: an upstream of N rows (written in 50 appends of 2%, merge-on-read) receives per
round late changes among its newest 2% (a MERGE updating 0.5% of its rows and inserting
0.5% new ones, then a DELETE of 0.1%), then a `merge` mirror of it
(`upstream_changes(ref('events'), unique_key='id')`, `merge_delete_when`) runs once over a
local Spark Thrift Server (`method: thrift`) and once in process (`method: session`, the
same warehouse), each as a `dbt run` process; its execution time (dbt's run results: the
read and the merge, not dbt's or the JVM's start) is compared. After the rounds, each
mirror is compared with the upstream. Raw numbers go to
`bench/results/server_upstream_changes.csv`.

    .venv/bin/python bench/server_upstream_changes.py [--sizes 1000000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from engines import engine
from machine import write_csv
from server_dag_rerun import server_sql

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog

DBT = str(Path(sys.executable).parent / "dbt")
UPSTREAM = "bench_keyed.events"
MIRROR = """
{{ config(materialized='incremental', unique_key='id',
          merge_delete_when="_change_type = 'DELETE'") }}
select id, ts, payload, _change_type
from {{ upstream_changes(source('bench', 'events'), unique_key='id') }}
"""
SOURCES = "sources:\n  - name: bench\n    schema: bench_keyed\n    tables:\n      - name: events\n"
# contender: profile output keys beyond the common ones
CONTENDERS = {
    "over thrift": {"method": "thrift"},
    "in process": {"method": "session", "master": "local[2]"},
}


def write_project(root: Path, state: dict, warehouse: Path, label: str, schema: str) -> Path:
    root.mkdir(parents=True)
    (root / "models").mkdir()
    (root / "models" / "mirror.sql").write_text(MIRROR)
    (root / "models" / "sources.yml").write_text(SOURCES)
    (root / "dbt_project.yml").write_text(
        json.dumps(
            {
                "name": "bench_keyed",
                "version": "1.0",
                "config-version": 2,
                "profile": "bench",
                # Spark starts before the model: its time excludes the JVM's start.
                "on-run-start": ["select 1"],
            }
        )
    )
    output = {
        "type": "s3tables",
        "warehouse": str(warehouse),
        "schema": schema,
        "threads": 1,
        **CONTENDERS[label],
    }
    if output["method"] == "thrift":
        output.update(host=state["host"], port=state["port"])
    (root / "profiles.yml").write_text(
        json.dumps({"bench": {"target": "t", "outputs": {"t": output}}})
    )
    return root


def dbt_run(root: Path) -> float:
    """`dbt run` in a process of its own: the model's execution time."""
    result = subprocess.run(
        [DBT, "run", "--quiet", "--project-dir", str(root), "--profiles-dir", str(root)],
        capture_output=True,
        text=True,
        env={**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"},
        timeout=3600,
    )
    if result.returncode != 0:
        raise SystemExit(f"dbt run in {root} failed:\n{result.stdout[-4000:]}{result.stderr}")
    results = json.loads((root / "target" / "run_results.json").read_text())["results"]
    return float(next(r for r in results if r["unique_id"].endswith(".mirror"))["execution_time"])


def late_changes(size: int, round_number: int) -> list[str]:
    """The round's changes among the newest 2% of `size` rows: 0.5% updated, 0.5% inserted
    (new ids), then 0.1% deleted."""
    newest = size - size // 50
    share = max(1, size // 200)
    fresh = size + round_number * share
    return [
        f"MERGE INTO {UPSTREAM} t USING (SELECT id, timestamp_seconds(id + {round_number}) AS ts, "
        f"'r{round_number}' AS payload FROM range({newest + round_number}, {size}, 4) "
        f"UNION ALL SELECT id, timestamp_seconds(id) AS ts, 'new' AS payload "
        f"FROM range({fresh}, {fresh + share})) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
        f"DELETE FROM {UPSTREAM} WHERE id >= {newest} AND id % 20 = {round_number}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000000")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="bench_keyed_") as temp:
            base = Path(temp)
            warehouse = base / "warehouse"
            state = engine("start", "thrift", base / "run", "--warehouse", str(warehouse))
            try:
                step = size // 50
                server_sql(
                    state,
                    "CREATE NAMESPACE IF NOT EXISTS bench_keyed",
                    f"CREATE TABLE {UPSTREAM} (id bigint, ts timestamp, payload string) USING "
                    "iceberg TBLPROPERTIES ('write.delete.mode'='merge-on-read', "
                    "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')",
                    *(
                        f"INSERT INTO {UPSTREAM} SELECT id, timestamp_seconds(id), 'p' "
                        f"FROM range({start}, {start + step})"
                        for start in range(0, size, step)
                    ),
                )
                roots = {}
                for n, label in enumerate(CONTENDERS):
                    schema = f"bench_keyed_{n}"
                    server_sql(state, f"CREATE NAMESPACE IF NOT EXISTS {schema}")
                    roots[label] = write_project(base / f"p{n}", state, warehouse, label, schema)
                    dbt_run(roots[label])  # the first build: the whole upstream
                for round_number in range(1, args.rounds + 1):
                    server_sql(state, *late_changes(size, round_number))
                    for label in CONTENDERS:
                        load = os.getloadavg()[0]
                        seconds = dbt_run(roots[label])
                        rows.append(
                            {
                                "rows": size,
                                "contender": label,
                                "round": round_number,
                                "seconds": round(seconds, 3),
                                "load_1m": load,
                            }
                        )
                catalog = IcebergCatalog(
                    CatalogConfig(name="local", catalog_type="local", warehouse=str(warehouse))
                )
                upstream = catalog.load_table("bench_keyed", "events").scan().to_arrow()
                wanted = sorted(upstream.column("id").to_pylist())
                for n, label in enumerate(CONTENDERS):
                    mirror = catalog.load_table(f"bench_keyed_{n}", "mirror").scan().to_arrow()
                    exact = sorted(mirror.column("id").to_pylist()) == wanted
                    print(f"  {label}: mirror {'equals' if exact else 'DIFFERS FROM'} upstream")
            finally:
                engine("stop", "thrift", base / "run")
        medians = {
            label: statistics.median(
                r["seconds"] for r in rows if r["rows"] == size and r["contender"] == label
            )
            for label in CONTENDERS
        }
        ratio = medians["over thrift"] / medians["in process"]
        print(
            f"keyed upstream_changes(), late changes to {size:,} rows, medians of "
            f"{args.rounds}: over thrift {medians['over thrift']:.2f} s, in process "
            f"{medians['in process']:.2f} s ({ratio:.2f}x)"
        )
    print(f"raw numbers: {write_csv('server_upstream_changes', rows)}")


if __name__ == "__main__":
    main()
