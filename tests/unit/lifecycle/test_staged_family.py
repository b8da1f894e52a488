"""Which builds a later invocation takes up together on one audit branch, without Spark:
the models a build of which may be staged (from the project's graph), and a build's
family on its branch (its staged parents first, the builds waiting on them after)."""

from __future__ import annotations

import pytest

from dbt.adapters.s3tables.lifecycle.audit import AuditRecord
from dbt.adapters.s3tables.lifecycle.staged_family import (
    children_by_parent,
    read_parents,
    stageable_models,
    staged_family,
)

BRANCH = "dbt_audit_old"


def node(kind: str, materialized: str, *parents: str, audited: object = None) -> dict:
    config: dict = {"materialized": materialized}
    if audited is not None:
        config["audit_before_publish"] = audited
    return {"resource_type": kind, "config": config, "depends_on": {"nodes": list(parents)}}


GRAPH = {
    "seed.codes": node("seed", "seed", audited=True),
    "model.orders": node("model", "table", audited=True),
    "model.plain": node("model", "table"),
    "model.child": node("model", "table", "model.orders"),
    "model.grandchild": node("model", "incremental", "model.child", "model.plain"),
    "model.view": node("model", "view", "model.orders"),
    "model.behind_view": node("model", "table", "model.view"),
    "model.ephemeral": node("model", "ephemeral", "model.orders", audited="true"),
    "model.behind_ephemeral": node("model", "table", "model.ephemeral", "model.plain"),
    "model.from_codes": node("model", "table", "seed.codes"),
    "model.audit_off": node("model", "table", audited="False"),
    "test.t": node("test", "test", "model.plain", "model.orders"),
}


def test_stageable_models_are_the_audited_and_the_tables_built_from_them() -> None:
    assert stageable_models(GRAPH) == {
        "seed.codes",
        "model.orders",
        "model.child",
        "model.grandchild",
        "model.behind_ephemeral",
        "model.from_codes",
    }
    # A view reads main: neither it nor what is built from it alone is ever staged.
    assert stageable_models({}) == frozenset()


def test_children_are_the_stageable_models_built_from_each() -> None:
    children = children_by_parent(GRAPH, stageable_models(GRAPH))
    assert children["model.orders"] == ["model.behind_ephemeral", "model.child"]
    assert children["model.child"] == ["model.grandchild"]
    assert "model.view" not in children  # behind_view is not stageable


def test_a_build_reads_what_its_ephemeral_parents_read() -> None:
    assert set(read_parents(GRAPH["model.behind_ephemeral"], GRAPH)) == {
        "model.orders",
        "model.plain",
    }
    assert read_parents(GRAPH["model.child"], GRAPH) == ["model.orders"]
    assert read_parents(node("model", "table", "model.unknown"), GRAPH) == ["model.unknown"]


def record(model: str, *waiting_on: str, tests: tuple[str, ...] = ()) -> AuditRecord:
    return AuditRecord(BRANCH, model, "1@here", 0.0, tests=tests, waiting_on=waiting_on)


def family(first: str, records: dict[str, AuditRecord], children=None, here=(), published=()):
    children = children or {}
    return staged_family(
        records[first], records.get, lambda m: children.get(m, []), set(here), set(published)
    )


def ids(found) -> list[str]:
    return [r.model_id for r in found.records]


def test_a_child_is_taken_up_after_the_parents_it_waits_for() -> None:
    records = {
        "orders": record("orders", tests=("t1",)),
        "customers": record("customers"),
        "child": record("child", "orders", "customers", tests=("t2",)),
    }
    found = family("child", records)
    assert ids(found)[-1] == "child" and set(ids(found)) == {"orders", "customers", "child"}
    assert found.stranded == {}


def test_a_parent_takes_up_the_builds_waiting_on_it_and_theirs() -> None:
    records = {
        "orders": record("orders", tests=("t1",)),
        "child": record("child", "orders"),
        "grandchild": record("grandchild", "child"),
        # Staged on the branch, but not behind orders (it published before this build).
        "sibling": record("sibling"),
    }
    children = {"orders": ["child", "sibling"], "child": ["grandchild"]}
    assert ids(family("orders", records, children)) == ["orders", "child", "grandchild"]


def test_a_build_whose_parent_has_no_build_left_is_stranded_with_its_children() -> None:
    records = {
        "child": record("child", "gone", tests=("t1",)),
        "grandchild": record("grandchild", "child"),
    }
    found = family("child", records, {"child": ["grandchild"]})
    assert found.records == []
    assert found.stranded == {"child": "gone", "grandchild": "child"}


def test_parents_this_invocation_holds_are_not_taken_up_again() -> None:
    records = {
        "staged": record("staged"),
        "published": record("published"),
        "child": record("child", "staged", "published"),
    }
    found = family("child", records, here=["staged"], published=["published"])
    assert ids(found) == ["child"] and found.stranded == {}


def test_records_waiting_on_each_other_are_refused() -> None:
    records = {"a": record("a", "b"), "b": record("b", "a")}
    with pytest.raises(ValueError, match="waiting on each other"):
        family("a", records)
