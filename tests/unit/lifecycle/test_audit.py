"""Write-audit-publish decisions without Spark: the branch name, which tests gate a model,
how a test result is judged, and when the ledger publishes or gives up on a build."""

from __future__ import annotations

from dbt.adapters.s3tables.lifecycle.audit import (
    ABANDONED_AFTER_SECONDS,
    AuditLedger,
    AuditRecord,
    StagedBuild,
    audit_branch,
    audit_records,
    gating_tests,
    in_flight,
    is_audit_branch,
    is_failing_test,
    record_key,
    stale_branches,
    unpublished_line,
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


NOW = 1_800_000_000.0


def record(branch: str, owner: str = "41@here", age: float = 60, **values) -> AuditRecord:
    return AuditRecord(branch, "model.p.orders", owner, NOW - age, **values)


def test_a_record_survives_its_table_property() -> None:
    kept = record(
        "dbt_audit_a",
        tests=("test.p.t1",),
        set_properties={"dbt.s3tables.unique_key": '["id"]'},
        remove_properties=("x",),
        drop_columns=("legacy",),
        waiting_on=("model.p.customers", "model.p.accounts"),
    ).unpublished()
    properties = {record_key("dbt_audit_a"): kept.to_property(), "other": "1"}
    assert audit_records(properties) == {"dbt_audit_a": kept}
    # Marked unpublished with the parents it still waits for (one published meanwhile).
    assert kept.unpublished(["model.p.customers"]).waiting_on == ("model.p.customers",)
    assert AuditRecord.from_property("{not json") is None
    assert audit_records({record_key("dbt_audit_b"): '{"branch": 1}'}) == {}


def stale(branches, records, alive=(), host="here") -> list[str]:
    by_branch = {r.branch: r for r in records}
    return stale_branches(branches, by_branch, "dbt_audit_own", NOW, host, lambda p: p in alive)


def test_a_concurrent_build_in_flight_keeps_its_branch() -> None:
    # Staged by a live process on this machine: in flight.
    assert stale(["dbt_audit_a", "dbt_audit_own"], [record("dbt_audit_a")], alive={41}) == []


def test_unpublished_dead_and_unrecorded_branches_are_removed() -> None:
    branches = [
        "dbt_audit_failed",
        "dbt_audit_dead",
        "dbt_audit_bare",
        "main_copy",
        "dbt_audit_own",
    ]
    records = [
        record("dbt_audit_failed").unpublished(),
        record("dbt_audit_dead", owner="99@here"),
    ]
    assert stale(branches, records, alive={41}) == [
        "dbt_audit_failed",
        "dbt_audit_dead",
        "dbt_audit_bare",
    ]


def test_a_staged_build_whose_process_ended_is_abandoned() -> None:
    staged = record("dbt_audit_a", owner="41@here")
    assert in_flight(staged, NOW, "here", lambda pid: pid == 41)
    # Killed: its process is gone.
    assert not in_flight(staged, NOW, "here", lambda pid: False)
    # Staged by this very process in an earlier invocation (dbt's in-process runs, or a pid
    # used again): that invocation ended.
    assert not in_flight(staged, NOW, "here", lambda pid: True, "41@here", "dbt_audit_b")
    assert in_flight(staged, NOW, "here", lambda pid: True, "41@here", "dbt_audit_a")
    assert not in_flight(staged.unpublished(), NOW, "here", lambda pid: True)


def test_a_branch_an_earlier_invocation_of_this_process_left_is_removed() -> None:
    left = record("dbt_audit_a", owner="41@here")
    assert (
        stale_branches(
            ["dbt_audit_a"], {"dbt_audit_a": left}, "dbt_audit_own", NOW, "here", lambda p: True
        )
        == []
    )
    assert stale_branches(
        ["dbt_audit_a"],
        {"dbt_audit_a": left},
        "dbt_audit_own",
        NOW,
        "here",
        lambda p: True,
        "41@here",
    ) == ["dbt_audit_a"]


def test_a_build_staged_on_another_machine_is_in_flight_for_a_day() -> None:
    recent = record("dbt_audit_a", owner="41@elsewhere")
    old = record("dbt_audit_b", owner="41@elsewhere", age=ABANDONED_AFTER_SECONDS + 1)
    assert stale(["dbt_audit_a", "dbt_audit_b"], [recent, old]) == ["dbt_audit_b"]


def test_a_build_of_an_earlier_invocation_is_taken_up_once_per_invocation() -> None:
    ledger = AuditLedger()
    asked = []
    settled = []

    def resumer(invocation: str, relation: object, node: object) -> list[StagedBuild]:
        asked.append(invocation)
        return [StagedBuild("m.orders", "orders", "dbt_audit_old", {"t.not_null"}, set())]

    ledger.resume_with(resumer, lambda invocation, update: settled.append(update))
    assert ledger.reading_branch(RUN, "m.orders", None, None, resume=False) is None
    assert ledger.reading_branch(RUN, "m.orders", None, None, resume=True) == "dbt_audit_old"
    assert ledger.reading_branch(RUN, "m.orders", None, None, resume=True) == "dbt_audit_old"
    assert asked == [RUN] and settled == []
    update = ledger.test_done(RUN, "t.not_null", ["m.orders"], failed=False)
    assert [b.model_id for b in update.publish] == ["m.orders"]


def test_builds_taken_up_together_wait_for_their_parents() -> None:
    ledger = AuditLedger()
    family = [
        StagedBuild("m.orders", "orders", "dbt_audit_old", {"t.orders"}, set()),
        StagedBuild("m.child", "child", "dbt_audit_old", {"t.both"}, {"m.orders"}),
        StagedBuild("m.ids", "ids", "dbt_audit_old", set(), {"m.orders"}),
    ]
    calls = []

    def resumer(invocation: str, relation: object, node: object) -> list[StagedBuild]:
        calls.append(invocation)
        return family

    ledger.resume_with(resumer, lambda invocation, update: None)
    # Asked for the child (its test reads it first): its parent is taken up with it.
    assert ledger.reading_branch(RUN, "m.child", None, None, resume=True) == "dbt_audit_old"
    assert ledger.reading_branch(RUN, "m.orders", None, None, resume=True) == "dbt_audit_old"
    assert ledger.reading_branch(RUN, "m.ids", None, None, resume=True) == "dbt_audit_old"
    assert calls == [RUN]
    assert ledger.test_done(RUN, "t.both", ["m.child"], failed=False).publish == []
    update = ledger.test_done(RUN, "t.orders", ["m.orders"], failed=False)
    assert [b.model_id for b in update.publish] == ["m.orders"]
    # No test of ids runs again: it publishes with its parent.
    assert {b.model_id for b in ledger.published(RUN, "m.orders").publish} == {"m.child", "m.ids"}


def test_a_build_taken_up_with_nothing_left_to_wait_for_is_settled_at_once() -> None:
    ledger = AuditLedger()
    settled = []
    ledger.resume_with(
        lambda invocation, relation, node: [StagedBuild("m.a", "a", "dbt_audit_old", set(), set())],
        lambda invocation, update: settled.append([b.model_id for b in update.publish]),
    )
    ledger.reading_branch(RUN, "m.a", None, None, resume=True)
    assert settled == [["m.a"]]


def test_a_build_not_taken_up_reads_main() -> None:
    ledger = AuditLedger()
    ledger.resume_with(lambda invocation, relation, node: [], lambda invocation, update: None)
    assert ledger.reading_branch(RUN, "m.a", None, None, resume=True) is None
    assert ledger.reading_branch(RUN, "m.a", None, None, resume=True) is None


def test_a_reader_that_takes_nothing_up_leaves_the_next_reader_its_chance() -> None:
    ledger = AuditLedger()
    readers = iter(["test.passed_on_it", "test.failed_on_it"])

    def resumer(invocation: str, relation: object, node: object) -> list[StagedBuild]:
        # As the adapter answers: only a test that has not passed on the build takes it up.
        if next(readers) == "test.passed_on_it":
            return []
        return [StagedBuild("m.a", "a", "dbt_audit_old", {"test.failed_on_it"}, set())]

    ledger.resume_with(resumer, lambda invocation, update: None)
    assert ledger.reading_branch(RUN, "m.a", None, None, resume=True) is None
    assert ledger.reading_branch(RUN, "m.a", None, None, resume=True) == "dbt_audit_old"


def test_a_model_written_to_main_in_this_invocation_is_not_taken_up() -> None:
    ledger = AuditLedger()
    asked = []

    def resumer(invocation: str, relation: object, node: object) -> list[StagedBuild]:
        asked.append(invocation)
        return [StagedBuild("m.a", "a", "dbt_audit_old", {"t"}, set())]

    ledger.resume_with(resumer, lambda invocation, update: None)
    ledger.built_on_main(RUN, "m.a")
    assert ledger.reading_branch(RUN, "m.a", None, None, resume=True) is None
    assert asked == []


def test_builds_still_waiting_when_the_invocation_ends_end_unpublished() -> None:
    ledger = AuditLedger()
    ledger.stage(RUN, build("errored", tests={"t.errored", "t.passed"}))
    ledger.test_done(RUN, "t.passed", ["errored"], failed=False)
    ledger.stage(RUN, build("child", tests={"t.child"}, waiting_on={"errored"}))
    ledger.test_done(RUN, "t.child", ["child"], failed=False)  # waits for its parent
    ledger.stage(RUN, build("failed", tests={"t.failed"}))
    ledger.test_done(RUN, "t.failed", ["failed"], failed=True)
    ledger.stage(RUN, build("published"))
    ledger.published(RUN, "published")

    left = {b.model_id: b for b in ledger.finish()}
    assert set(left) == {"errored", "child", "failed"}
    assert left["errored"].unreported_tests == ["t.errored"]
    assert left["child"].failed_parent == "errored" and left["child"].waiting_on == {"errored"}
    assert left["failed"].failed_tests == ["t.failed"]
    assert all(b.failed and not b.ready for b in left.values())
    # A test reporting after the end settles nothing; the end is said once.
    assert ledger.test_done(RUN, "t.errored", ["errored"], failed=False).publish == []
    assert ledger.finish() == []


def test_the_end_of_an_invocation_leaves_the_next_one_alone() -> None:
    ledger = AuditLedger()
    ledger.stage(RUN, build("m", tests={"t1"}))
    ledger.finish()
    ledger.stage("next-run", build("m", tests={"t1"}))
    assert [b.model_id for b in ledger.finish()] == ["m"]


def test_a_failed_publish_is_said_as_such() -> None:
    ledger = AuditLedger()
    ledger.stage(RUN, build("m"))
    ledger.publish_failed(RUN, "m", "main moved")
    (left,) = ledger.finish()
    assert left.publish_error == "main moved" and left.failed_tests == []
    assert "its publish failed: main moved" in unpublished_line(left)
    assert "Fix: rebuild it: `dbt build -s m+`" in unpublished_line(left)


def test_each_build_left_unpublished_is_one_line_naming_the_model_branch_and_fix() -> None:
    errored = StagedBuild("m.o", "orders", "dbt_audit_x", set(), set(), unreported_tests=["t.a"])
    failing = StagedBuild("m.o", "orders", "dbt_audit_x", set(), set(), failed_tests=["t.b"])
    child = StagedBuild("m.c", "child", "dbt_audit_x", set(), set(), failed_parent="model.p.orders")
    lines = {
        "errored": unpublished_line(errored),
        "failing": unpublished_line(failing),
        "child": unpublished_line(child),
    }
    for line in lines.values():
        assert "\n" not in line and "left unpublished on branch dbt_audit_x" in line
        assert "main is unchanged. Fix: " in line and "`dbt retry`" in line
    assert lines["errored"].startswith("orders: ")
    assert "test(s) that never reported (they errored, or did not run): t.a" in lines["errored"]
    assert "failing test(s): t.b" in lines["failing"]
    assert lines["child"].startswith("child: ")
    assert "built from the staged model.p.orders" in lines["child"]
    assert "rebuild from the parent: `dbt build -s orders+`" in lines["child"]
