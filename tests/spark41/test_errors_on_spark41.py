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


FUNCTION_FILES = {
    "functions/double_it.sql": "x * 2",
    "functions/double_it.yml": (
        "functions:\n  - name: double_it\n    arguments:\n      - name: x\n"
        "        data_type: double\n    returns:\n      data_type: double\n"
    ),
    "models/plain.sql": "select 1 as a",
    # What the refusal says Spark 4.1 does with a SQL function under Iceberg's extensions.
    "macros/create_function.sql": (
        "{% macro create_function() %}{% do run_query('create temporary function "
        "double_it(x double) returns double return x * 2') %}{% endmacro %}"
    ),
}


def test_a_sql_function_is_refused_before_anything_runs(tmp_path: Path, spark41_dbt: Path) -> None:
    """`dbt build` refuses the function on Spark 4.1 too, naming why; the reason holds:
    Spark 4.1's `CREATE FUNCTION ... RETURN`, even a temporary one, fails in a session with
    Iceberg's SQL extensions (when it stops failing, functions can be built)."""
    project = write_project(
        tmp_path / "project",
        "functions",
        output=local_output(tmp_path / "warehouse", "functions"),
        profiles_dir=tmp_path,
        files=FUNCTION_FILES,
    )
    result = dbt_in(tmp_path, project, "build", dbt=spark41_dbt)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert (
        "Function `double_it`: this adapter cannot build it, because Spark 4.1's "
        "`CREATE FUNCTION ... RETURN` fails under Iceberg 1.12's SQL extensions" in output
    ), output
    assert "START" not in output, output
    assert_readable(output)
    tried = dbt_in(tmp_path, project, "run-operation", "create_function", dbt=spark41_dbt)
    assert tried.returncode == 1, tried.stdout
    assert "UnsupportedOperationException" in tried.stdout + tried.stderr, tried.stdout
