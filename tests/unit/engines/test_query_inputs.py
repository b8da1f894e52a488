"""The pure half of reading a query's inputs: a canonical plan's digest is the same in any
JVM, and what makes a plan's rows differ over the same inputs is named."""

from __future__ import annotations

import json

import pytest

from dbt.adapters.s3tables.engines.query_inputs import plan_digest, unfixed_reason


def plan(jvm: str, literal: int = 1, expression: str = "Literal") -> str:
    """A canonical plan's JSON as Spark writes it: every exprId carries the JVM's id."""
    return json.dumps(
        [
            {
                "class": "org.apache.spark.sql.catalyst.plans.logical.Project",
                "projectList": [
                    [
                        {
                            "class": f"org.apache.spark.sql.catalyst.expressions.{expression}",
                            "value": str(literal),
                            "exprId": {"id": 0, "jvmId": jvm},
                        }
                    ]
                ],
            }
        ]
    )


def test_the_digest_is_the_same_in_another_jvm_and_follows_the_plan() -> None:
    digest, classes = plan_digest(plan("jvm-a"), [])
    assert plan_digest(plan("jvm-b"), [])[0] == digest
    assert plan_digest(plan("jvm-a", literal=2), [])[0] != digest
    # An inline VALUES' rows are not in the JSON: they are given beside it.
    assert plan_digest(plan("jvm-a"), ["[0,1]"])[0] != digest
    assert classes == {"Project", "Literal"}


@pytest.mark.parametrize(
    ("classes", "deterministic", "said"),
    [
        ({"Project", "CurrentTimestamp"}, True, "reads the clock (current_timestamp())"),
        ({"CurrentDate", "Now"}, True, "reads the clock (current_date(), now())"),
        ({"PythonUDF"}, True, "user-defined function (PythonUDF)"),
        ({"ScalaUDAF"}, True, "user-defined function (ScalaUDAF)"),
        ({"Project"}, False, "non-deterministic function"),
        ({"Project", "Literal"}, True, None),
    ],
)
def test_what_makes_rows_differ_over_the_same_inputs_is_named(
    classes: set[str], deterministic: bool, said: str | None
) -> None:
    reason = unfixed_reason(classes, deterministic)
    assert reason == said if said is None else said in (reason or "")
