"""Builds an earlier invocation staged and did not publish, taken up by this invocation's
tests (`dbt retry`, `dbt test`): which ones (the model's record on its table, and the
builds tied to it on its branch, see staged_family.py) and as what (staged builds of this
invocation, published as any other when their tests pass).

A build is taken up when a test that gates it and has not passed on its staged data reads
it, and its build is no longer in flight: it ended unpublished (a test failed, or never
reported), or the process that staged it is gone (killed). Only the models a build of which
can be staged are looked up (the project's graph says which): one catalog read each, once
per invocation.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Mapping
from typing import Any

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.contracts.relation import RelationType
from dbt.adapters.events.logging import AdapterLogger
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

from dbt.adapters.s3tables.catalogs.history import Branches
from dbt.adapters.s3tables.incremental.warehouse import Warehouse
from dbt.adapters.s3tables.lifecycle.audit import (
    LEDGER,
    AuditRecord,
    StagedBuild,
    audit_branch,
    audit_records,
    in_flight,
)
from dbt.adapters.s3tables.lifecycle.audited_build import AuditedBuild, is_alive, this_process
from dbt.adapters.s3tables.lifecycle.staged_family import (
    children_by_parent,
    stageable_models,
    staged_family,
)

logger = AdapterLogger("s3tables")


class TakeUp:
    """Takes up, for the ledger, the builds a reader test of a model finds staged."""

    def __init__(
        self,
        warehouse_for: Callable[[BaseRelation], Warehouse],
        connection_name: Callable[[], str],
        graph_nodes: Callable[[], Mapping[str, Mapping[str, Any]] | None],
        relation_for: Callable[[Mapping[str, Any]], BaseRelation],
    ) -> None:
        # The calling thread's connection is named after the node it runs (a test's starts
        # with `test.`); the project's nodes as the macros' `graph.nodes` has them (None
        # when dbt gave none); a node's table.
        self.warehouse_for = warehouse_for
        self.connection_name = connection_name
        self.graph_nodes = graph_nodes
        self.relation_for = relation_for
        self._graph: tuple[str, frozenset[str] | None, dict[str, list[str]]] | None = None
        # Per model, the build a test of it may take up (None: none), read once per
        # invocation (the ledger asks again for each reader: a test that has passed on the
        # build reads main, one that has not takes it up).
        self._candidates: tuple[str, dict[str, AuditRecord | None]] = ("", {})

    def __call__(self, invocation: str, relation: BaseRelation, node: Any) -> list[StagedBuild]:
        """The builds taken up when the calling thread's node reads `node`'s table
        (`relation`, on main), parents first; none: its readers read main."""
        reader = self.connection_name()
        if not reader.startswith("test."):
            return []
        model_id, name = str(node.unique_id), str(node.name)
        stageable, children = self._graph_of(invocation)
        if stageable is not None and model_id not in stageable:
            return []
        record = self._candidate(invocation, model_id, name, relation)
        # A test that passed on it already reads main (it may have been given up since).
        if record is None or reader not in record.tests_to_pass:
            return []
        nodes = self.graph_nodes() or {}
        found: dict[str, tuple[BaseRelation, str]] = {model_id: (relation, name)}

        def record_of(other: str) -> AuditRecord | None:
            other_node = nodes.get(other)
            if other_node is None:
                return None
            other_relation = self.relation_for(other_node)
            taken = self._record_on(
                other_relation, str(other_node["name"]), record.branch, invocation
            )
            if taken is not None:
                found[other] = (other_relation, str(other_node["name"]))
            return taken

        staged_here, published_here = LEDGER.on_branch(invocation, record.branch)
        family = staged_family(
            record, record_of, lambda m: children.get(m, []), staged_here, published_here
        )
        for stranded, parent in family.stranded.items():
            _, stranded_name = found.get(stranded, (None, stranded))
            logger.warning(
                f"{stranded_name}: the build staged on branch {record.branch} was built from "
                f"the staged {parent}, whose build there is gone (rebuilt or removed since), "
                "so it can no longer be published; its tests read main. Fix: rebuild it "
                f"(`dbt build -s {stranded_name}`)"
            )
        if model_id in family.stranded:
            return []
        builds = []
        for taken in family.records:
            taken_relation, taken_name = found[taken.model_id]
            waits = {p for p in taken.waiting_on if p not in published_here}
            builds.append(self._staged(invocation, taken, taken_relation, taken_name, waits))
            self._say_taken_up(
                taken, taken_name, waits, name if taken.model_id != model_id else None
            )
        return builds

    def _graph_of(self, invocation: str) -> tuple[frozenset[str] | None, dict[str, list[str]]]:
        """The models a build of which can be staged, and the stageable children of each,
        once per invocation. Without the project's graph (None), every model a test reads
        is looked up and no child is found (said once): slower, and a child staged behind a
        build taken up stays unpublished, never published unaudited."""
        if self._graph is None or self._graph[0] != invocation:
            nodes = self.graph_nodes()
            if nodes is None:
                logger.warning(
                    "audit_before_publish: dbt gave the adapter no project graph, so every "
                    "model a test reads is looked up for a staged build, and the builds "
                    "staged behind one taken up are not: they stay unpublished until their "
                    "model's next audited build"
                )
                self._graph = (invocation, None, {})
            else:
                found = stageable_models(nodes)
                self._graph = (invocation, found, children_by_parent(nodes, found))
        _, stageable, children = self._graph
        return stageable, children

    def _candidate(
        self, invocation: str, model_id: str, name: str, relation: BaseRelation
    ) -> AuditRecord | None:
        """The latest build of `model_id` staged by an earlier invocation that can be taken
        up: no longer in flight, its branch still there and ahead of main (said once when
        main has moved past it)."""
        if self._candidates[0] != invocation:
            self._candidates = (invocation, {})
        known = self._candidates[1]
        if model_id not in known:
            known[model_id] = self._read_candidate(invocation, model_id, name, relation)
        return known[model_id]

    def _read_candidate(
        self, invocation: str, model_id: str, name: str, relation: BaseRelation
    ) -> AuditRecord | None:
        branches = self._branches(relation)
        if branches is None:
            return None
        records = [
            r
            for r in audit_records(branches.properties).values()
            if r.model_id == model_id and r.branch in branches.heads and self._ended(r, invocation)
        ]
        if not records:
            return None
        record = max(records, key=lambda r: r.staged_at)
        if record.branch not in branches.ahead_of_main:
            logger.warning(
                f"{name}: the build staged on branch {record.branch} was not published and "
                "no longer can be (main has moved since it was staged); its tests read main. "
                f"Fix: rebuild the model (`dbt build -s {name}+`)"
            )
            return None
        return record

    def _branches(self, relation: BaseRelation) -> Branches | None:
        try:
            return self.warehouse_for(relation).iceberg.branches(
                str(relation.schema), str(relation.identifier)
            )
        except (NoSuchTableError, NoSuchNamespaceError):
            return None  # not built yet, or a view

    @staticmethod
    def _ended(record: AuditRecord, invocation: str) -> bool:
        """Whether a staged build is no longer in flight: ended unpublished, or staged by
        a process that is gone (or by an earlier invocation of this one)."""
        return not in_flight(
            record,
            time.time(),
            socket.gethostname(),
            is_alive,
            this_process(),
            audit_branch(invocation),
        )

    def _record_on(
        self, relation: BaseRelation, name: str, branch: str, invocation: str
    ) -> AuditRecord | None:
        """The record of the build staged on `branch` of `relation`'s table, if it can be
        taken up (said in one line when main has moved past it)."""
        branches = self._branches(relation)
        if branches is None or branch not in branches.heads:
            return None
        record = audit_records(branches.properties).get(branch)
        if record is None or not self._ended(record, invocation):
            return None
        if branch not in branches.ahead_of_main:
            logger.warning(
                f"{name}: the build staged on branch {branch} was not published and no "
                "longer can be (main has moved since it was staged). Fix: rebuild it "
                f"(`dbt build -s {name}`)"
            )
            return None
        return record

    def _staged(
        self,
        invocation: str,
        record: AuditRecord,
        relation: BaseRelation,
        name: str,
        waits: set[str],
    ) -> StagedBuild:
        tests = record.tests_to_pass
        audited_build = AuditedBuild(
            name=name,
            model_id=record.model_id,
            invocation_id=invocation,
            target=relation,
            branch=record.branch,
            warehouse=self.warehouse_for(relation),
            gating_tests=tests,
            waiting_on=set(waits),
            properties=dict(record.set_properties),
            removed_properties=set(record.remove_properties),
            dropped_columns=list(record.drop_columns),
            record=record,
            resumed=True,
        )
        return StagedBuild(
            record.model_id, name, record.branch, set(tests), set(waits), payload=audited_build
        )

    @staticmethod
    def _say_taken_up(
        record: AuditRecord, name: str, waits: set[str], with_model: str | None
    ) -> None:
        tests = record.tests_to_pass
        after = f" and {', '.join(sorted(waits))} publish" if waits else ""
        if with_model is None:
            logger.info(
                f"{name}: the build staged on branch {record.branch} was not published; its "
                f"tests that have not passed on it ({len(tests)}) audit it again in this run, "
                f"and it is published when they pass{after}"
            )
            return
        when = []
        if waits:
            when.append(f"after {', '.join(sorted(waits))}")
        if tests:
            when.append(f"once its {len(tests)} test(s) not passed on it pass")
        logger.info(
            f"{name}: the build staged on branch {record.branch} was not published; taken up "
            f"with {with_model}'s, it is published {' and '.join(when) or 'now'}"
        )


def graph_nodes(resolver: object) -> Mapping[str, Mapping[str, Any]] | None:
    """The project's nodes as the macros' `graph.nodes` has them: dbt hands the adapter
    its manifest (as the macro resolver, its graph built) before a command runs nodes;
    None without one."""
    graph = getattr(resolver, "flat_graph", None)
    nodes = graph.get("nodes") if isinstance(graph, dict) else None
    return nodes if isinstance(nodes, Mapping) and nodes else None


def node_relation(relation_class: type[BaseRelation], node: Mapping[str, Any]) -> BaseRelation:
    """A node's table (of `graph.nodes`), on main."""
    return relation_class.create(
        database=node.get("database"),
        schema=node.get("schema"),
        identifier=node.get("alias") or node.get("name"),
        type=RelationType.Table,
    )
