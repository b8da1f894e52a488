"""Write-audit-publish decisions without Spark: the branch name, which tests gate a model,
how a test result is judged, and when the ledger publishes or gives up on a build."""

from __future__ import annotations

from dbt.adapters.s3tables.audit import (
    AuditLedger,
    StagedBuild,
    audit_branch,
    gating_tests,
    is_audit_branch,
    is_failing_test,
)

RUN = "3f2a-77"


def data_test(unique_id: str, *models: str, severity: str = "ERROR") -> dict:
    return {
        "unique_id": unique_id,
        "resource_type": "test",
        "depends_on": {"nodes": list(models)},
        "config": {"severity": severity},
    }


def build(model_id: str, tests=(), waiting_on=()) -> StagedBuild:
    return StagedBuild(model_id, model_id, "b", set(tests), set(waiting_on))


def test_the_branch_is_named_after_the_invocation() -> None:
    branch = audit_branch("5F0C-12ab-9")
    assert branch == "dbt_audit_5f0c12ab9" and is_audit_branch(branch)
    assert not is_audit_branch("main")


def test_gating_tests_are_the_selected_error_tests_of_the_model() -> None:
    nodes = [
        data_test("t.not_null", "m.orders"),
        data_test("t.warn_only", "m.orders", severity="warn"),
        data_test("t.unselected", "m.orders"),
        data_test("t.other_model", "m.customers"),
        data_test("t.relationship", "m.customers", "m.orders"),
        {"unique_id": "m.child", "resource_type": "model", "depends_on": {"nodes": ["m.orders"]}},
    ]
    selected = {n["unique_id"] for n in nodes} - {"t.unselected"}
    assert gating_tests(nodes, "m.orders", selected) == {"t.not_null", "t.relationship"}
    assert gating_tests(nodes, "m.orders", set()) == frozenset()


def test_a_test_fails_as_dbt_judges_it() -> None:
    assert is_failing_test("error", (3, True, True))
    assert not is_failing_test("error", (3, True, False))  # under error_if: a warning
    assert not is_failing_test("warn", (3, True, True))
    assert not is_failing_test("ERROR", (0, False, False))
    assert is_failing_test("error", None)  # no single result row: dbt errors the test


def test_a_build_publishes_when_its_last_test_passes() -> None:
    ledger = AuditLedger()
    assert ledger.stage(RUN, build("m", tests={"t1", "t2"})).publish == []
    assert ledger.staged_branch(RUN, "m") == "b"
    assert ledger.test_done(RUN, "t1", ["m"], failed=False).publish == []
    update = ledger.test_done(RUN, "t2", ["m"], failed=False)
    assert [b.model_id for b in update.publish] == ["m"]
    ledger.published(RUN, "m")
    assert ledger.staged_branch(RUN, "m") is None  # readers read main again


def test_one_failing_test_keeps_the_build_staged_and_fails_its_children() -> None:
    ledger = AuditLedger()
    ledger.stage(RUN, build("m", tests={"t1", "t2"}))
    ledger.stage(RUN, build("child", tests={"t3"}, waiting_on={"m"}))
    ledger.stage(RUN, build("grandchild", waiting_on={"child"}))
    update = ledger.test_done(RUN, "t1", ["m"], failed=True)
    assert update.publish == []
    assert [b.model_id for b in update.failed] == ["m", "child", "grandchild"]
    assert ledger.get(RUN, "child").failed_parent == "m"
    # The other test passing later publishes nothing.
    assert ledger.test_done(RUN, "t2", ["m"], failed=False).publish == []


def test_a_child_publishes_after_its_staged_parent() -> None:
    ledger = AuditLedger()
    ledger.stage(RUN, build("m", tests={"t1"}))
    assert ledger.unpublished(RUN, ["m", "x"]) == {"m"}
    ledger.stage(RUN, build("child", tests={"t2"}, waiting_on={"m"}))
    assert ledger.test_done(RUN, "t2", ["child"], failed=False).publish == []  # waits for m
    assert [b.model_id for b in ledger.test_done(RUN, "t1", ["m"], failed=False).publish] == ["m"]
    assert [b.model_id for b in ledger.published(RUN, "m").publish] == ["child"]


def test_a_build_staged_after_its_parent_failed_fails_at_once() -> None:
    ledger = AuditLedger()
    ledger.stage(RUN, build("m", tests={"t1"}))
    ledger.test_done(RUN, "t1", ["m"], failed=True)
    update = ledger.stage(RUN, build("child", waiting_on={"m"}))
    assert [b.model_id for b in update.failed] == ["child"]


def test_a_build_without_gates_is_ready_at_once() -> None:
    ledger = AuditLedger()
    assert [b.model_id for b in ledger.stage(RUN, build("m")).publish] == ["m"]


def test_a_failed_publish_fails_the_children_waiting_on_it() -> None:
    ledger = AuditLedger()
    ledger.stage(RUN, build("m"))
    ledger.stage(RUN, build("child", waiting_on={"m"}))
    update = ledger.publish_failed(RUN, "m", "main moved")
    assert [b.model_id for b in update.failed] == ["child"]


def test_a_new_invocation_starts_with_an_empty_ledger() -> None:
    ledger = AuditLedger()
    ledger.stage(RUN, build("m", tests={"t1"}))
    assert ledger.staged_branch("another-run", "m") is None
    assert ledger.unpublished("another-run", ["m"]) == set()
