"""A keyed `upstream_changes()` over a Spark server (`method: thrift` or `connect`), for
test_engines.py (over Connect, the promises' keyed walk reads the same way): each range
is read file by file (planned on dbt's host, the changed files read as Parquet by the
server with their position deletes) and the mirror holds exactly what its upstream
holds after every run: merge-on-read updates and deletes, several keys deleted at once,
and files of the upstream's older schema (before a column it added) read by their
columns' field ids."""

from __future__ import annotations

import json
from pathlib import Path

from tests.functional.harness import dbt_in, local_catalog, write_project

CUSTOMERS = """
{{ config(materialized='incremental', unique_key='id', merge_delete_when='deleted',
          on_schema_change='append_new_columns') }}
{% set rows = var('rows', [[1, 'a', false], [2, 'b', false], [3, 'c', false]]) %}
select id, name, deleted{% if var('tier', false) %}, 'gold' as tier{% endif %} from values
{% for r in rows %}({{ r[0] }}, '{{ r[1] }}', {{ r[2] }}){{ ',' if not loop.last }}{% endfor %}
as t(id, name, deleted)
"""
MIRROR = """
{{ config(materialized='incremental', unique_key='id',
          merge_delete_when="_change_type = 'DELETE'") }}
select id, name, _change_type from {{ upstream_changes(ref('customers'), unique_key='id') }}
"""
# Its own namespace: the module's server warehouse also holds integration_tests/'s
# `analytics.customers` seed.
SCHEMA = "keyed_reads"
FILE_BY_FILE = f"{SCHEMA}.customers read file by file"
# (rows merged into customers: [id, name, deleted], whether its tier column is on). The
# column's arrival is a range the adapter refuses to read (the fix it names, a rebuild, is
# run); after it, the upstream's older files predate the column (read by field id).
ROUNDS = [
    ([[2, "bb", False], [3, "c", True], [4, "d", False]], False),
    ([[1, "aa", False], [5, "e", False]], True),
    ([[1, "aa", True], [2, "bb", True], [6, "f", False]], True),
]


def pairs(warehouse: str, table: str) -> list[tuple[int, str]]:
    rows = local_catalog(warehouse).load_table(SCHEMA, table).scan().to_arrow()
    return sorted(zip(rows.column("id").to_pylist(), rows.column("name").to_pylist(), strict=True))


def keyed_reads_on_a_server(folder: Path, output: dict, warehouse: str) -> None:
    project = write_project(
        folder / "project",
        "keyed",
        output={**output, "schema": SCHEMA},
        profiles_dir=folder,
        files={"models/customers.sql": CUSTOMERS, "models/mirror.sql": MIRROR},
    )

    def dbt(*args: str) -> str:
        result = dbt_in(folder, project, *args)
        assert result.returncode == 0, result.stdout[-6000:]
        return result.stdout

    dbt("run")
    assert pairs(warehouse, "mirror") == pairs(warehouse, "customers")
    had_tier = False
    for rows, tier in ROUNDS:
        dbt("run", "-s", "customers", "--vars", json.dumps({"rows": rows, "tier": tier}))
        if tier and not had_tier:
            dbt("run", "-s", "mirror", "--full-refresh")
        else:
            output_text = dbt("run", "-s", "mirror")
            assert FILE_BY_FILE in output_text, output_text[-4000:]
        had_tier = tier
        assert pairs(warehouse, "mirror") == pairs(warehouse, "customers")
