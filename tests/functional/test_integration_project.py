"""`dbt build` of the integration_tests/ project, from an empty warehouse and then again
with `schema_phase: 2` and the S3 Tables rules on (every incremental model must converge,
schemas evolve, and every data test pass both times).

The builds are the `integration_builds` fixture's (tests/conftest.py), made once per pytest
run in dbt subprocesses (the project's profile names its own warehouse, and a process holds
one SparkSession bound to one catalog): test_engines.py and tests/spark41 compare other
engines' and Spark 4.1's builds with the same two.
"""

from __future__ import annotations

from tests.functional.harness import IntegrationBuilds, node_statuses


def test_integration_project_builds_twice(integration_builds: IntegrationBuilds) -> None:
    # `build_integration_project` asserted that every node of each build passed.
    first, second = integration_builds.results
    for results in (first, second):
        assert node_statuses(results), "dbt build ran nothing"
    kinds = {r["unique_id"].split(".")[0] for r in first["results"]}
    assert {"seed", "model", "test", "snapshot"} <= kinds
