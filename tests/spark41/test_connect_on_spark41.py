"""`upstream_changes()` over Spark Connect on Spark 4.1: the read is recorded in the model's
own commit (Iceberg's `spark.sql.iceberg.snapshot-property.*` session settings), so each
append is read exactly once, as in process. The server is `.venv-spark41`'s
`dbt-s3tables-engine start connect`; the builds are `.venv-spark41`'s dbt."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.functional.emulators import connect_output, free_port
from tests.functional.harness import (
    TEST_SPARK_SUBMIT_OPTS,
    dbt_in,
    iceberg_rows,
    local_catalog,
    write_project,
)

MODELS = {
    "appended.sql": "{{ config(materialized='incremental', incremental_strategy='append') }}\n"
    "select id from range({{ var('start', 0) }}, {{ var('start', 0) }} + 3)",
    "appended_copy.sql": "{{ config(materialized='incremental', "
    "incremental_strategy='append') }}\n"
    "select id from {{ upstream_changes(ref('appended')) }}",
}
READ_KEY = "dbt.read.local.analytics.appended"


def engine(spark41_dbt: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`.venv-spark41`'s `dbt-s3tables-engine args`; a server it starts has the tests'
    Spark settings (`TEST_SPARK_SQL_SETTINGS`)."""
    command = [str(spark41_dbt.parent / "dbt-s3tables-engine"), *args]
    env = {**os.environ, "SPARK_SUBMIT_OPTS": TEST_SPARK_SUBMIT_OPTS}
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)


@pytest.fixture(scope="module")
def server(spark41_dbt: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    run_dir = tmp_path_factory.mktemp("connect41-run")
    warehouse = tmp_path_factory.mktemp("connect41-warehouse")
    started = engine(
        spark41_dbt,
        "start",
        "connect",
        "--run-dir",
        str(run_dir),
        "--json",
        "--port",
        str(free_port()),
        "--warehouse",
        str(warehouse),
    )
    assert started.returncode == 0, started.stdout + started.stderr
    state = json.loads(started.stdout)
    yield state
    engine(spark41_dbt, "stop", "connect", "--run-dir", str(run_dir))


def test_each_append_is_read_once_and_recorded_in_the_models_commit(
    tmp_path: Path, server: dict, spark41_dbt: Path
) -> None:
    project = write_project(
        tmp_path / "project",
        "connect41",
        output=connect_output(server, threads=1),
        profiles_dir=tmp_path,
        files={f"models/{name}": text for name, text in MODELS.items()},
    )
    catalog = local_catalog(server["warehouse"])

    def run(*args: str) -> str:
        result = dbt_in(tmp_path, project, "run", *args, dbt=spark41_dbt)
        assert result.returncode == 0, result.stdout[-6000:]
        return result.stdout

    run()
    run("-s", "appended", "--vars", "{start: 3}")
    for _ in range(2):  # the second run finds nothing new
        output_text = run("-s", "appended_copy")
        ids = sorted(r["id"] for r in iceberg_rows(catalog, "analytics", "appended_copy"))
        assert ids == list(range(6))
    assert "cannot record the read in the model's commit" not in output_text
    upstream = catalog.load_table("analytics", "appended")
    copy = catalog.load_table("analytics", "appended_copy")
    upstream_head, copy_head = upstream.current_snapshot(), copy.current_snapshot()
    assert upstream_head is not None and copy_head is not None and copy_head.summary
    expected = f"{upstream.metadata.table_uuid}@{upstream_head.snapshot_id}"
    # In the commit itself, not only in the property written after it.
    tagged = [s.summary.additional_properties.get(READ_KEY) for s in copy.snapshots() if s.summary]
    assert expected in tagged, tagged
