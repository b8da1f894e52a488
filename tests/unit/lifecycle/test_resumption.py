"""Which staged builds a later invocation's test takes up, without Spark: the tables'
records and branches come from a stand-in catalog."""

from __future__ import annotations

import os
import socket
import uuid
from types import SimpleNamespace
from typing import Any

from dbt.adapters.s3tables.catalogs.history import Branches
from dbt.adapters.s3tables.lifecycle.audit import STAGED, UNPUBLISHED, AuditRecord, record_key
from dbt.adapters.s3tables.lifecycle.resumption import TakeUp

OLD = "dbt_audit_old"
THIS_PROCESS = f"{os.getpid()}@{socket.gethostname()}"
# pid 1 lives as long as the machine does.
LIVE_PROCESS = f"1@{socket.gethostname()}"


def graph_node(name: str, *parents: str, audited: bool = False) -> dict[str, Any]:
    config: dict[str, Any] = {"materialized": "table"}
    if audited:
        config["audit_before_publish"] = True
    return {
        "resource_type": "model",
        "name": name,
        "schema": "s",
        "alias": name,
        "database": None,
        "config": config,
        "depends_on": {"nodes": list(parents)},
    }


GRAPH = {
    "model.p.orders": graph_node("orders", audited=True),
    "model.p.child": graph_node("child", "model.p.orders"),
    "model.p.plain": graph_node("plain"),
}


class Catalog:
    """Each table's branches (all ahead of main unless told) and audit records."""

    def __init__(self) -> None:
        self.tables: dict[str, Branches] = {}
        self.reads: list[str] = []

    def stage(self, table: str, record: AuditRecord, ahead: bool = True) -> None:
        self.tables[table] = Branches(
            {record.branch: 1},
            {record_key(record.branch): record.to_property()},
            frozenset({record.branch}) if ahead else frozenset(),
        )

    def branches(self, namespace: str, name: str) -> Branches:
        self.reads.append(name)
        return self.tables.get(name, Branches({}, {}, frozenset()))


def record(model: str, *waiting_on: str, owner: str = THIS_PROCESS, **values: Any) -> AuditRecord:
    return AuditRecord(OLD, model, owner, 1.0, waiting_on=waiting_on, **values)


def relation(name: str) -> SimpleNamespace:
    return SimpleNamespace(database=None, schema="s", identifier=name)


def take_up(catalog: Catalog, reader: str, graph: Any = GRAPH) -> TakeUp:
    return TakeUp(
        lambda rel: SimpleNamespace(iceberg=catalog),  # type: ignore[arg-type, return-value]  # a stand-in warehouse
        lambda: reader,
        lambda: graph,
        lambda node: relation(node["alias"]),  # type: ignore[arg-type, return-value]  # a stand-in relation
    )


def node(unique_id: str) -> SimpleNamespace:
    return SimpleNamespace(unique_id=unique_id, name=unique_id.rsplit(".", 1)[1])


def taken(builds: list) -> list[tuple[str, set[str], set[str]]]:
    return [(b.model_id, b.pending_tests, b.waiting_on) for b in builds]


def run() -> str:
    return str(uuid.uuid4())  # a fresh invocation: the process-wide ledger holds nothing of it


def test_a_build_whose_test_never_reported_is_taken_up_by_that_test() -> None:
    catalog = Catalog()
    # Still `staged`: its process (an earlier invocation of this one) ended before the
    # test reported (it errored).
    catalog.stage(
        "orders", record("model.p.orders", tests=("test.p.t1", "test.p.t2"), passed=("test.p.t2",))
    )
    builds = take_up(catalog, "test.p.t1")(run(), relation("orders"), node("model.p.orders"))
    assert taken(builds) == [("model.p.orders", {"test.p.t1"}, set())]
    assert builds[0].branch == OLD and builds[0].payload.resumed


def test_a_build_staged_by_a_live_process_is_in_flight_and_left_alone() -> None:
    catalog = Catalog()
    catalog.stage("orders", record("model.p.orders", owner=LIVE_PROCESS, tests=("test.p.t1",)))
    assert take_up(catalog, "test.p.t1")(run(), relation("orders"), node("model.p.orders")) == []
    unpublished = record("model.p.orders", owner=LIVE_PROCESS, tests=("test.p.t1",)).unpublished()
    assert unpublished.state == UNPUBLISHED != STAGED
    catalog.stage("orders", unpublished)
    assert take_up(catalog, "test.p.t1")(run(), relation("orders"), node("model.p.orders"))


def test_only_a_test_that_has_not_passed_on_it_takes_a_build_up() -> None:
    catalog = Catalog()
    catalog.stage("orders", record("model.p.orders", tests=("test.p.t1",)).unpublished())
    for reader in ("model.p.child", "test.p.other"):
        assert take_up(catalog, reader)(run(), relation("orders"), node("model.p.orders")) == []


def test_the_table_is_read_once_per_invocation_whoever_reads_it() -> None:
    catalog = Catalog()
    catalog.stage("orders", record("model.p.orders", tests=("test.p.t1",)).unpublished())
    reader = ["test.p.passed"]
    take = TakeUp(
        lambda rel: SimpleNamespace(iceberg=catalog),  # type: ignore[arg-type, return-value]  # a stand-in warehouse
        lambda: reader[0],
        lambda: GRAPH,
        lambda node: relation(node["alias"]),  # type: ignore[arg-type, return-value]  # a stand-in relation
    )
    invocation = run()
    assert take(invocation, relation("orders"), node("model.p.orders")) == []
    reader[0] = "test.p.t1"
    assert take(invocation, relation("orders"), node("model.p.orders"))
    # Once for both readers (then child's, staged behind it or not, when it is taken up).
    assert catalog.reads == ["orders", "child"]


def test_a_model_that_is_never_staged_is_not_looked_up() -> None:
    catalog = Catalog()
    assert take_up(catalog, "test.p.t1")(run(), relation("plain"), node("model.p.plain")) == []
    assert catalog.reads == []
    # Without the project's graph, every model is looked up.
    take_up(catalog, "test.p.t1", graph=None)(run(), relation("plain"), node("model.p.plain"))
    assert catalog.reads == ["plain"]


def test_a_child_read_first_is_taken_up_after_its_parent() -> None:
    catalog = Catalog()
    catalog.stage("orders", record("model.p.orders", tests=("test.p.both",)).unpublished())
    catalog.stage("child", record("model.p.child", "model.p.orders", tests=("test.p.both",)))
    builds = take_up(catalog, "test.p.both")(run(), relation("child"), node("model.p.child"))
    assert taken(builds) == [
        ("model.p.orders", {"test.p.both"}, set()),
        ("model.p.child", {"test.p.both"}, {"model.p.orders"}),
    ]


def test_a_parent_takes_up_the_child_staged_behind_it_whose_tests_passed() -> None:
    catalog = Catalog()
    catalog.stage("orders", record("model.p.orders", tests=("test.p.t1",)).unpublished())
    child = record("model.p.child", "model.p.orders", tests=("test.p.c",), passed=("test.p.c",))
    catalog.stage("child", child.unpublished())
    builds = take_up(catalog, "test.p.t1")(run(), relation("orders"), node("model.p.orders"))
    assert taken(builds) == [
        ("model.p.orders", {"test.p.t1"}, set()),
        ("model.p.child", set(), {"model.p.orders"}),
    ]


def test_a_build_main_has_moved_past_is_not_taken_up() -> None:
    catalog = Catalog()
    catalog.stage("orders", record("model.p.orders", tests=("test.p.t1",)).unpublished(), False)
    assert take_up(catalog, "test.p.t1")(run(), relation("orders"), node("model.p.orders")) == []


def test_a_child_whose_parent_build_is_gone_is_not_taken_up() -> None:
    catalog = Catalog()
    catalog.stage("child", record("model.p.child", "model.p.orders", tests=("test.p.both",)))
    assert take_up(catalog, "test.p.both")(run(), relation("child"), node("model.p.child")) == []
