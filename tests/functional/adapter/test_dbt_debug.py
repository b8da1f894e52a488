"""dbt-tests-adapter's dbt_debug suite: `dbt debug` on a valid project and profile, with
--connection, with missing or invalid projects and profiles.

Adapted: the base's `nopass`, `wronguser` and `none_target` checks name targets the test
profile does not define, so they find no matching output line and pass whatever dbt
prints (their pattern is also anchored before the log's timestamp, so it never matches).
Here the profile defines them for this adapter: a target missing its required
`schema`, a target whose connection is refused (a Thrift Server address where nothing
listens), and an empty output.
"""

import re

import pytest
from dbt.flags import get_flags
from dbt.tests.adapter.dbt_debug.test_dbt_debug import (
    BaseDebugInvalidProjectPostgres,
    BaseDebugPostgres,
    BaseDebugProfileVariable,
)
from dbt.tests.util import run_dbt

# What each stdout line starts with: a colour reset and the time.
LOG_PREFIX = re.compile(r"^(\x1b\[[0-9;]*m)?\d{2}:\d{2}:\d{2}")


class TestDebug(BaseDebugPostgres):
    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target, unique_schema):
        default = {**dbt_profile_target, "schema": unique_schema}
        return {
            "test": {
                "outputs": {
                    "default": default,
                    "nopass": {k: v for k, v in default.items() if k != "schema"},
                    # A Thrift Server where nothing listens: the connection is refused.
                    # (Not another warehouse for the session: that is refused only once
                    # this process's SparkSession runs, which depends on test order.)
                    "wronguser": {**default, "method": "thrift", "host": "127.0.0.1", "port": 1},
                    "none_target": None,
                },
                "target": "default",
            }
        }

    @pytest.fixture(autouse=True)
    def _reset_profiles_dir(self, project):
        # run_dbt appends the previous invocation's --profiles-dir to the next one:
        # test_connection_flag's `--profiles-dir NONE` would carry into the tests after it.
        object.__setattr__(get_flags(), "PROFILES_DIR", str(project.profiles_dir))

    def assertGotValue(self, linepat, result):
        """The base passes when no line matches, and none does: `match` anchors the
        pattern at the line's start, before the log's colour code and timestamp. Here the
        pattern is matched after that prefix, and a matching line must be there."""
        output = self.capsys.readouterr().out
        lines = [
            line for line in output.split("\n") if linepat.match(LOG_PREFIX.sub("", line, count=1))
        ]
        assert lines, f"linepat {linepat} not found in stdout: {output}"
        for line in lines:
            assert result in line


class TestDebugInvalidProject(BaseDebugInvalidProjectPostgres):
    pass


class TestDebugProfileVariable(BaseDebugProfileVariable):
    # The base holds only the project config (profile name rendered from Jinja); this is
    # the check other adapters run with it.
    def test_ok(self, project):
        run_dbt(["debug"])
        assert "ERROR" not in self.capsys.readouterr().out
