"""A model that runs for several seconds says its progress while it runs: lines in the
console and `logs/dbt.log` that name the model and give the elapsed time and Spark's
jobs, stages and tasks, the finished tasks growing from line to line. Two such models run
at once (threads 2): each line names its own model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt_and_capture

# 20 tasks of about 0.6 s each (two sleeping rows per task) on 2 cores: about 6-10 s.
SLOW = """{{ config(materialized='table') }}
select id, reflect('java.lang.Thread', 'sleep', cast(300 as bigint)) as slept
from range(0, 40, 1, 20)
"""
LINE = re.compile(
    r"(slow_\w+): running for (\d+) s; Spark jobs (\d+)/(\d+), stages (\d+)/(\d+), "
    r"tasks (\d+)/(\d+)"
)


class TestProgressLines:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, dbt_profile_target: dict) -> dict:
        return {**dbt_profile_target, "threads": 2, "progress_interval_seconds": 2}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"slow_one.sql": SLOW, "slow_two.sql": SLOW, "quick.sql": "select 1 as id"}

    def test_slow_models_say_their_progress_with_growing_numbers(
        self, project, logs_dir: str
    ) -> None:
        _, log = run_dbt_and_capture(["run"])
        lines = [LINE.search(line) for line in log.splitlines()]
        found = [m for m in lines if m]
        assert found, log
        grew = False
        for model in ("slow_one", "slow_two"):
            tasks_done = [int(m.group(7)) for m in found if m.group(1) == model]
            assert tasks_done, f"no progress line of {model}:\n{log}"
            assert tasks_done == sorted(tasks_done), tasks_done
            grew = grew or len(set(tasks_done)) > 1
            assert all(int(m.group(8)) >= int(m.group(7)) for m in found)
        assert grew, log
        print("\n".join(m.group(0) for m in found))  # shown with -s: the lines as users see them
        assert not [line for line in log.splitlines() if "quick: running for" in line]
        # The log file has them too.
        dbt_log = (Path(logs_dir) / "dbt.log").read_text(encoding="utf-8")
        assert "slow_one: running for" in dbt_log
