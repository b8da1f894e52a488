"""What a person reads when dbt runs: no Spark start-up banner, the engine's start as one
line before the first model (so no model's timing carries it), and a failed model's
error as Spark's error class and message, the Java stack going to the log files only.

A fresh `dbt run` process: the test suite's own process has its JVM started already.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.functional.harness import dbt_env, local_output, run_dbt_process, write_project

FAILING = (
    "{{ config(materialized='table') }}\n"
    "select case when id > 0 then raise_error('boom: id must not be positive') end as id\n"
    "from range(3)"
)


def test_output_is_readable(tmp_path: Path) -> None:
    project = write_project(
        tmp_path / "shop",
        "shop",
        output=local_output(tmp_path / "warehouse", "shop"),
        files={"models/good.sql": "select 1 as id", "models/failing.sql": FAILING},
    )
    result = run_dbt_process(
        ["run"], project_dir=project, profiles_dir=project, cwd=project, env=dbt_env()
    )
    assert result.returncode == 1, result.stdout + result.stderr
    output = result.stdout + result.stderr

    assert "Setting default log level" not in output
    assert "\tat org.apache" not in output and "at java." not in output

    lines = result.stdout.splitlines()
    started = next(i for i, line in enumerate(lines) if re.search(r"Spark \S+ started in", line))
    first_node = next(i for i, line in enumerate(lines) if " START " in line)
    assert started < first_node

    # The failure is Spark's message, once, without the stack.
    assert re.search(r"Database Error in model failing.*\n\s+boom: id must not be positive", output)
    assert "Job aborted due to stage failure" not in output

    # The full traces are kept: Spark's own log and dbt's debug log.
    assert "boom: id must not be positive" in (project / "logs" / "spark.log").read_text()
    assert "full trace" in (project / "logs" / "dbt.log").read_text()
