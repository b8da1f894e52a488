"""What a query's rows depend on, read from Spark's analysed plan: the plan itself (views
expanded, so a view's SQL is part of it), the Iceberg tables it reads with the snapshot
each is read at, and the rows of any inline `VALUES`; or what makes its rows differ
between two runs of the same plan over the same snapshots (a clock, a random function, a
user-defined function whose code Spark does not see, a source that is not an Iceberg
table). `skip_when_unchanged` (lifecycle/unchanged_inputs.py) compares two of these.

The plan is Spark's canonical form as JSON, with the JVM's own id taken out, so the same
query over the same views gives the same text in any process.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Expression classes (simple names) whose value depends on the moment the query runs.
CLOCK_EXPRESSIONS = {
    "CurrentTimestamp": "current_timestamp()",
    "Now": "now()",
    "CurrentDate": "current_date()",
    "LocalTimestamp": "localtimestamp()",
    "CurrentBatchTimestamp": "a batch timestamp",
}
# Leaves whose rows the plan holds itself (their values are in the plan or its `VALUES`).
SELF_CONTAINED_LEAVES = {"Range", "OneRowRelation", "LocalRelation"}
ICEBERG_TABLE_CLASS = "org.apache.iceberg.spark.source.SparkTable"


@dataclass(frozen=True)
class QueryInputs:
    """A query's plan digest and the Iceberg tables it reads (name -> snapshot id, None
    for a table without one), or `unfixed`: why its rows can differ over the same inputs."""

    plan_digest: str
    tables: dict[str, int | None]
    unfixed: str | None = None


# What a server engine (Thrift, Connect) answers: its plans live in the server's JVM.
SERVER_QUERY_INPUTS = QueryInputs(
    "",
    {},
    unfixed="the query's analysed plan lives in the server's JVM, out of the adapter's "
    "reach; it needs `method: session` (Spark in process, or a cluster)",
)


def _without_jvm_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_jvm_ids(v) for k, v in node.items() if k != "jvmId"}
    if isinstance(node, list):
        return [_without_jvm_ids(v) for v in node]
    return node


def _classes(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        name = node.get("class")
        if isinstance(name, str):
            yield name.rsplit(".", 1)[-1]
        for value in node.values():
            yield from _classes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _classes(value)


def plan_digest(canonical_json: str, extra: list[str]) -> tuple[str, set[str]]:
    """The digest of a canonical plan's JSON (without the JVM's id) and of `extra` (the
    rows of its inline `VALUES`, which the JSON leaves out), and the plan's expression and
    node classes (simple names)."""
    plan = _without_jvm_ids(json.loads(canonical_json))
    text = json.dumps([plan, extra], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest(), set(_classes(plan))


def unfixed_reason(classes: set[str], deterministic: bool) -> str | None:
    """Why a plan with these classes gives different rows over the same inputs, or None."""
    clocks = sorted(CLOCK_EXPRESSIONS[c] for c in classes & CLOCK_EXPRESSIONS.keys())
    if clocks:
        return f"its SQL reads the clock ({', '.join(clocks)})"
    functions = sorted(c for c in classes if c.endswith(("UDF", "UDAF", "UDTF", "Aggregator")))
    if functions:
        return (
            f"its SQL calls a user-defined function ({', '.join(functions)}), whose code "
            "Spark does not see"
        )
    if not deterministic:
        return "its SQL calls a non-deterministic function (such as rand() or uuid())"
    return None


def _seq(scala_seq: Any) -> Iterator[Any]:
    iterator = scala_seq.iterator()
    while iterator.hasNext():
        yield iterator.next()


def read_query_inputs(spark: SparkSession, sql: str) -> QueryInputs:
    """`sql`'s inputs as this session analyses it (the query does not run)."""
    plan = spark.sql(sql)._jdf.queryExecution().analyzed()
    tables: dict[str, int | None] = {}
    values: list[str] = []
    unread: set[str] = set()
    # The plan's nodes, and those of its subqueries (which `children` do not reach).
    pending = [plan]
    while pending:
        node = pending.pop()
        pending.extend(_seq(node.subqueries()))
        children = list(_seq(node.children()))
        pending.extend(children)
        if children:
            continue
        kind = node.getClass().getSimpleName()
        if kind == "LocalRelation":
            values.append(str(node.data().toString()))
        elif kind == "DataSourceV2Relation" and (
            (spark_table := node.table()).getClass().getName() == ICEBERG_TABLE_CLASS
        ):
            pinned, branch = spark_table.snapshotId(), spark_table.branch()
            table = spark_table.table()
            snapshot = (
                table.snapshot(pinned)
                if pinned is not None
                else table.snapshot(branch)
                if branch is not None
                else table.currentSnapshot()
            )
            name = str(spark_table.name()) + (f"@{branch}" if branch is not None else "")
            tables[name] = None if snapshot is None else int(snapshot.snapshotId())
        elif kind not in SELF_CONTAINED_LEAVES:
            unread.add(kind)
    digest, classes = plan_digest(plan.canonicalized().toJSON(), sorted(values))
    if unread:
        unfixed: str | None = (
            f"it reads a source that is not an Iceberg table ({', '.join(sorted(unread))})"
        )
    else:
        unfixed = unfixed_reason(classes, bool(plan.deterministic()))
    return QueryInputs(digest, tables, unfixed)
