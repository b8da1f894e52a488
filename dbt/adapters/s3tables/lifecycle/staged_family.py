"""Which builds an earlier invocation staged on one audit branch a later invocation takes up
together (pure: the project's graph and the tables' records in, decisions out; see
audit.py for the protocol and resumption.py for the reads).

A build staged while one of its parents was staged read that parent's branch, so it is
staged behind it and may only publish after it. When a later invocation's test takes up
one such build, it takes up the builds it is tied to on the same branch: the staged
parents it waits for (they publish first) and the staged children waiting on it (they
publish after it, even when no test of theirs runs again). A build whose staged parent has
no build left to take up (rebuilt or removed since) can no longer publish.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.s3tables.lifecycle.audit import AuditRecord

# What a model never stages as: a view stores its query (it reads main), an ephemeral
# model is no table.
NOT_STAGED = frozenset({"view", "ephemeral", "materialized_view"})


def is_audited(node: Mapping[str, Any]) -> bool:
    """Whether a node sets `audit_before_publish` (dbt keeps the value as written)."""
    value = (node.get("config") or {}).get("audit_before_publish")
    return str(value).lower() == "true"


def parents(node: Mapping[str, Any]) -> list[str]:
    return list((node.get("depends_on") or {}).get("nodes") or [])


def read_parents(node: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The nodes a build of `node` reads: its parents, each ephemeral one replaced by what
    it reads (its query is inlined into the build's, its `ref`s resolved there: a staged
    parent's branch included)."""
    read: list[str] = []
    todo = parents(node)
    seen: set[str] = set()
    while todo:
        parent = todo.pop(0)
        if parent in seen:
            continue
        seen.add(parent)
        parent_node = nodes.get(parent) or {}
        if str((parent_node.get("config") or {}).get("materialized")) == "ephemeral":
            todo += parents(parent_node)
        else:
            read.append(parent)
    return read


def stageable_models(nodes: Mapping[str, Mapping[str, Any]]) -> frozenset[str]:
    """The models and seeds (of the graph's `nodes`, as the macros' `graph.nodes` has
    them) a build of which may be staged on an audit branch: those with
    `audit_before_publish`, and the tables built from one of them (a build reading a staged
    parent is staged too), through tables only (a view reads main)."""
    tables = {
        unique_id
        for unique_id, node in nodes.items()
        if node.get("resource_type") in ("model", "seed")
        and str((node.get("config") or {}).get("materialized")) not in NOT_STAGED
    }
    stageable = {m for m in tables if is_audited(nodes[m])}
    # Each pass adds the tables built from one found in the passes before it.
    grown = True
    while grown:
        grown = False
        for model in tables - stageable:
            if any(p in stageable for p in read_parents(nodes[model], nodes)):
                stageable.add(model)
                grown = True
    return frozenset(stageable)


def children_by_parent(
    nodes: Mapping[str, Mapping[str, Any]], stageable: Collection[str]
) -> dict[str, list[str]]:
    """For each model, the stageable models built from it (through ephemeral ones)."""
    children: dict[str, list[str]] = {}
    for model in sorted(stageable):
        for parent in read_parents(nodes[model], nodes):
            children.setdefault(parent, []).append(model)
    return children


@dataclass
class Family:
    """The builds taken up together on one branch, each after the parents it waits for, and
    those that cannot be (model id: the staged parent it waits for that has no build to
    take up)."""

    records: list[AuditRecord] = field(default_factory=list)
    stranded: dict[str, str] = field(default_factory=dict)


def staged_family(
    first: AuditRecord,
    record_of: Callable[[str], AuditRecord | None],
    children_of: Callable[[str], Iterable[str]],
    staged_here: Collection[str],
    published_here: Collection[str],
) -> Family:
    """The builds taken up with `first` (a build staged on its branch by an earlier
    invocation): it, the staged parents it waits for (recursively), and the builds waiting
    on any of these (`children_of` a model: the models built from it), parents first.
    `record_of(model)`: the model's record on the branch if its build there can be taken
    up (else None); `staged_here` and `published_here`: the models this invocation already
    holds on that branch, not published (waited for, not taken up again) and published (no
    longer waited for)."""
    found: dict[str, AuditRecord] = {first.model_id: first}
    missing: set[str] = set()
    todo = [first.model_id]
    while todo:
        model = todo.pop()
        for parent in found[model].waiting_on:
            if parent in found or parent in missing or parent in staged_here:
                continue
            if parent in published_here:
                continue
            record = record_of(parent)
            if record is None:
                missing.add(parent)
            else:
                found[parent] = record
                todo.append(parent)
        for child in children_of(model):
            if child in found or child in staged_here or child in published_here:
                continue
            record = record_of(child)
            if record is not None and model in record.waiting_on:
                found[child] = record
                todo.append(child)
    return _in_order(found, missing, set(staged_here) | set(published_here))


def _in_order(found: dict[str, AuditRecord], missing: set[str], here: set[str]) -> Family:
    """`found` parents first; a build waiting on a missing parent, or on a stranded one,
    is stranded."""
    family = Family()
    placed: set[str] = set()
    left = dict(sorted(found.items()))
    while left:
        progressed = False
        for model, record in list(left.items()):
            waits = [p for p in record.waiting_on if p not in here]
            lost = next((p for p in waits if p in missing or p in family.stranded), None)
            if lost is not None:
                family.stranded[model] = lost
            elif all(p in placed for p in waits):
                family.records.append(record)
                placed.add(model)
            else:
                continue
            del left[model]
            progressed = True
        if not progressed:
            # A cycle cannot come from a graph dbt accepts; refuse rather than guess.
            raise ValueError(f"audit records waiting on each other: {', '.join(left)}")
    return family
