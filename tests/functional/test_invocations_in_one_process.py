"""Many dbt invocations in one Python process (`dbtRunner`: an orchestrator, a test run)
cost the same each: building the adapter, which dbt does per invocation, leaves dbt's
module-level defaults as it found them.

dbt-adapters' `behavior` setter extended its module-level list of default behavior flags in
place with the adapter's own, so each invocation added one more flag to render, and each
rendering walks the Python stack: a test process's 500th invocation spent most of its time
there.
"""

from __future__ import annotations

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
