"""`dbt build` of the integration_tests/ project, from an empty warehouse and then again
with `schema_phase: 2` and the S3 Tables rules on (every incremental model must converge,
schemas evolve, and every data test pass both times).

It runs in a subprocess: the project's profile names its own warehouse, and a process
holds one SparkSession bound to one catalog.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.functional.harness import DBT, dbt_in, node_statuses, passed_run_results

PROJECT = Path(__file__).resolve().parents[2] / "integration_tests"


def build(tmp_path: Path, *extra: str, s3tables_rules: bool = False, dbt: str = DBT) -> dict:
    """`dbt build` of the project into `tmp_path` (warehouse, target, logs) by `dbt`; every
    node must pass."""
    env = {
        **os.environ,
        "DBT_S3TABLES_WAREHOUSE": str(tmp_path / "warehouse"),
        "DBT_S3TABLES_RULES": str(s3tables_rules).lower(),
    }
    result = dbt_in(
        tmp_path, PROJECT, "build", *extra, profiles_dir=PROJECT, env=env, timeout=900, dbt=dbt
    )
    results = passed_run_results(result, tmp_path / "target", prefix=f"{dbt}: ")
    statuses = node_statuses(results)
    assert statuses, "dbt build ran nothing"
    assert set(statuses.values()) <= {"success", "pass"}, statuses
    return results


def test_integration_project_builds_twice(tmp_path: Path) -> None:
    first = build(tmp_path)
    # The second build evolves the schemas of the models that read `schema_phase`, and
    # checks the whole project against the S3 Tables rules (no views, names).
    build(tmp_path, "--vars", "{schema_phase: 2}", s3tables_rules=True)
    kinds = {r["unique_id"].split(".")[0] for r in first["results"]}
    assert {"seed", "model", "test", "snapshot"} <= kinds
