"""Benchmark: a keyed `upstream_changes()` read over a Spark server beside the same read in
process: an upstream of N rows (written in 50 appends of 2%, merge-on-read) receives per
round late changes among its newest 2% (a MERGE updating 0.5% of its rows and inserting
0.5% new ones, then a DELETE of 0.1%), then each contender runs as a `dbt run` process:
over a local Spark Thrift Server (`method: thrift`), over a local Spark Connect server
(`method: connect`) and in process (`method: session`), all on one warehouse. Each runs
two models: a `merge` mirror of the upstream
(`upstream_changes(ref('events'), unique_key='id')`, `merge_delete_when`) and, for scale,
a `max()` watermark model (`append`, the rows above the highest id it holds: the cheap read
that misses late changes). Their execution times (dbt's run results: the read and the
write, not dbt's or the JVM's start) are compared. After the rounds, each mirror is
compared with the upstream row for row. Raw numbers go to
`bench/results/server_upstream_changes.csv`.

    .venv/bin/python bench/server_upstream_changes.py [--sizes 1000000,10000000] [--rounds 3]
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
WATERMARK = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select id, ts, payload from {{ source('bench', 'events') }}
{% if is_incremental() %} where id > (select coalesce(max(id), -1) from {{ this }}) {% endif %}
"""
MODELS = ("mirror", "watermark")
SOURCES = "sources:\n  - name: bench\n    schema: bench_keyed\n    tables:\n      - name: events\n"
# contender: profile output keys beyond the common ones
CONTENDERS = {
    "over thrift": {"method": "thrift"},
    "over connect": {"method": "connect"},
    "in process": {"method": "session", "master": "local[2]"},
}
SERVERS = {"over thrift": "thrift", "over connect": "connect"}


def write_project(
    root: Path, servers: dict[str, dict], warehouse: Path, label: str, schema: str
) -> Path:
    root.mkdir(parents=True)
    (root / "models").mkdir()
    (root / "models" / "mirror.sql").write_text(MIRROR)
    (root / "models" / "watermark.sql").write_text(WATERMARK)
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
    if label in SERVERS:
        state = servers[SERVERS[label]]
        output.update(host=state["host"], port=state["port"])
    (root / "profiles.yml").write_text(
        json.dumps({"bench": {"target": "t", "outputs": {"t": output}}})
    )
    return root


def dbt_run(root: Path) -> dict[str, float]:
    """`dbt run` in a process of its own: each model's execution time."""
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
    return {r["unique_id"].split(".")[-1]: float(r["execution_time"]) for r in results}


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


def mirror_is_exact(catalog: IcebergCatalog, schema: str) -> bool:
    """Whether the mirror in `schema` holds the upstream's rows, value for value."""

    def rows(namespace: str, name: str) -> list[tuple]:
        table = catalog.load_table(namespace, name).scan().to_arrow()
        columns = [table.column(c).to_pylist() for c in ("id", "ts", "payload")]
        return sorted(zip(*columns, strict=True))

    return rows(schema, "mirror") == rows("bench_keyed", "events")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000000")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rows = []
    labels = list(CONTENDERS)
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="bench_keyed_") as temp:
            base = Path(temp)
            warehouse = base / "warehouse"
            servers = {}
            try:
                for service in SERVERS.values():
                    servers[service] = engine(
                        "start", service, base / service, "--warehouse", str(warehouse)
                    )
                step = size // 50
                server_sql(
                    servers["thrift"],
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
                for n, label in enumerate(labels):
                    schema = f"bench_keyed_{n}"
                    server_sql(servers["thrift"], f"CREATE NAMESPACE IF NOT EXISTS {schema}")
                    roots[label] = write_project(base / f"p{n}", servers, warehouse, label, schema)
                    dbt_run(roots[label])  # the first build: the whole upstream
                for round_number in range(1, args.rounds + 1):
                    server_sql(servers["thrift"], *late_changes(size, round_number))
                    # Alternating which contender runs first.
                    shift = round_number % len(labels)
                    for label in labels[shift:] + labels[:shift]:
                        load = os.getloadavg()[0]
                        for model, seconds in dbt_run(roots[label]).items():
                            rows.append(
                                {
                                    "rows": size,
                                    "contender": label,
                                    "model": model,
                                    "round": round_number,
                                    "seconds": round(seconds, 3),
                                    "load_1m": load,
                                }
                            )
                catalog = IcebergCatalog(
                    CatalogConfig(name="local", catalog_type="local", warehouse=str(warehouse))
                )
                for n, label in enumerate(labels):
                    exact = mirror_is_exact(catalog, f"bench_keyed_{n}")
                    print(f"  {label}: mirror {'equals' if exact else 'DIFFERS FROM'} upstream")
            finally:
                for service in servers:
                    engine("stop", service, base / service)

        def median(label: str, model: str, size: int = size) -> float:
            return statistics.median(
                r["seconds"]
                for r in rows
                if r["rows"] == size and r["contender"] == label and r["model"] == model
            )

        loads = [r["load_1m"] for r in rows if r["rows"] == size]
        print(
            f"late changes to {size:,} rows, medians of {args.rounds} "
            f"(1-minute load {min(loads):.1f}-{max(loads):.1f}):"
        )
        floor = median("in process", "mirror")
        for label in labels:
            keyed, watermark = median(label, "mirror"), median(label, "watermark")
            print(
                f"  {label}: keyed upstream_changes() {keyed:.2f} s "
                f"({keyed / floor:.2f}x in process), max() watermark {watermark:.2f} s"
            )
    print(f"raw numbers: {write_csv('server_upstream_changes', rows)}")


if __name__ == "__main__":
    main()
