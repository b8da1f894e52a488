"""A failed statement on Spark 4.1 reads as on 3.5: dbt prints the adapter's one readable
error, and not also pyspark 4's own log line of it (`SQLQueryContextLogger`: the error and
its whole Java stack as JSON on the console), which the adapter turns off.

The dbt is `.venv-spark41`'s (tests/spark41/conftest.py).
"""

from __future__ import annotations

from pathlib import Path

from tests.functional.harness import assert_readable, dbt_in, local_output, write_project


def test_a_failed_model_prints_one_readable_error(tmp_path: Path, spark41_dbt: Path) -> None:
    project = write_project(
        tmp_path / "project",
        "errors",
        output=local_output(tmp_path / "warehouse", "errors"),
        profiles_dir=tmp_path,
        files={
            "models/good.sql": "select 1 as a",
            "models/bad.sql": "select nope from {{ ref('good') }}",
        },
    )
    result = dbt_in(tmp_path, project, "run", dbt=spark41_dbt)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "SQLQueryContextLogger" not in output, output
    assert output.count("[UNRESOLVED_COLUMN.WITH_SUGGESTION]") == 1, output
    assert_readable(output)
