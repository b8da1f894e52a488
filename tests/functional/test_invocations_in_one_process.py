"""Many dbt invocations in one Python process (`dbtRunner`: an orchestrator, a test run)
cost the same each: building the adapter, which dbt does per invocation, leaves dbt's
module-level defaults as it found them.

dbt-adapters' `behavior` setter extended its module-level list of default behavior flags in
place with the adapter's own, so each invocation added one more flag to render, and each
rendering walked the Python stack: a test process's 500th invocation spent most of its time
there. dbt_common walks it for each flag it renders, reading every frame's source lines
(0.1-0.15 s a flag in a test process): the adapter's flags are rendered without it.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from dbt.adapters.base.impl import DEFAULT_BASE_BEHAVIOR_FLAGS
from dbt.tests.util import run_dbt

from dbt.adapters.s3tables.keys.config_keys import FAIL_FLAG


class TestInvocationsInOneProcess:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"one.sql": "select 1 as id"}

    def test_each_invocation_renders_the_same_behavior_flags(self, project) -> None:
        defaults = [flag["name"] for flag in DEFAULT_BASE_BEHAVIOR_FLAGS]
        for _ in range(3):
            assert len(run_dbt(["run"])) == 1
        assert [flag["name"] for flag in DEFAULT_BASE_BEHAVIOR_FLAGS] == defaults
        assert FAIL_FLAG not in defaults
        # The adapter's own flag is still rendered, and off unless the project turns it on.
        assert getattr(project.adapter.behavior, FAIL_FLAG).no_warn is False

    def test_an_invocation_walks_no_python_stack(self, monkeypatch: pytest.MonkeyPatch) -> None:
        walks = []

        def walk(*args: Any, **kwargs: Any) -> list[Any]:
            walks.append(1)
            return []

        monkeypatch.setattr(inspect, "stack", walk)
        assert len(run_dbt(["run"])) == 1
        assert walks == []
