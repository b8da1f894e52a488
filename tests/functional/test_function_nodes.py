"""dbt's function nodes (UDFs): no Spark line here can keep a SQL function
(lifecycle/function_nodes.py says why), so `dbt build` refuses each selected SQL function
in one sentence, naming why and the macro to write instead, before anything runs: no
table, no hook. A build that leaves the function out runs; `dbt parse` and `dbt ls` read
the project as it is. The same refusal on Spark 4.1 is tests/spark41/test_errors_on_spark41.py's.
"""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.s3tables.errors import FunctionNodeError

DOUBLE_IT_SQL = "x * 2"
DOUBLE_IT_YML = """
functions:
  - name: double_it
    arguments:
      - name: x
        data_type: double
    returns:
      data_type: double
"""


class TestASqlFunctionIsRefusedBeforeAnythingRuns:
    @pytest.fixture(scope="class")
    def functions(self):
        return {"double_it.sql": DOUBLE_IT_SQL, "double_it.yml": DOUBLE_IT_YML}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "doubled.sql": "select {{ function('double_it') }}(2.0) as y",
            "plain.sql": "select 1 as a",
        }

    def test_build_refuses_it_and_builds_nothing(self, project) -> None:
        with pytest.raises(FunctionNodeError) as refused:
            run_dbt(["build"])
        message = str(refused.value)
        assert (
            "Function `double_it`: this adapter cannot build it, because Spark 3.5 has no "
            "SQL functions" in message
        ), message
        assert "{% macro double_it(x) %}" in message and "nothing was built" in message
        # The test's schema is the fixture's; nothing was built in it.
        assert project.adapter.iceberg.list_relations(project.test_schema) == []

    def test_a_build_without_it_runs(self, project) -> None:
        assert [r.node.name for r in run_dbt(["build", "--select", "plain"])] == ["plain"]

    def test_parse_and_ls_read_the_project(self, project) -> None:
        run_dbt(["parse"])
        listed = run_dbt(["ls", "--resource-type", "function", "--output", "name"])
        assert listed == ["double_it"]
