"""The end of an invocation for the builds it left staged, without Spark: each said in one
line, then its record marked unpublished; a record that cannot be written fails the
invocation, after every line was said."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.s3tables.lifecycle import audited_build
from dbt.adapters.s3tables.lifecycle.audit import StagedBuild


class Log:
    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warning(self, message: str) -> None:
        self.warnings.append(message)


class Payload:
    """Stands in for an AuditedBuild: what `mark_unpublished` was told, or its failure."""

    def __init__(self, fails: bool = False) -> None:
        self.fails = fails
        self.marked: list[list[str]] = []

    def mark_unpublished(self, waiting_on: list[str]) -> None:
        if self.fails:
            raise OSError("catalog unreachable")
        self.marked.append(waiting_on)


@pytest.fixture
def log(monkeypatch: pytest.MonkeyPatch) -> Log:
    log = Log()
    monkeypatch.setattr(audited_build, "logger", log)
    return log


def staged(name: str, payload: Payload, waiting_on: set[str] | None = None, **values: object):
    build = StagedBuild(f"model.p.{name}", name, "dbt_audit_x", set(), waiting_on or set())
    build.payload = payload
    for key, value in values.items():
        setattr(build, key, value)
    return build


def test_each_build_left_staged_is_said_and_recorded_unpublished(log: Log) -> None:
    orders, child = Payload(), Payload()
    audited_build.settle_ended(
        [
            staged("orders", orders, unreported_tests=["test.p.t"]),
            staged("child", child, failed_parent="model.p.orders", waiting_on={"model.p.orders"}),
        ]
    )
    assert [line.split(":")[0] for line in log.warnings] == ["orders", "child"]
    assert orders.marked == [[]] and child.marked == [["model.p.orders"]]


def test_a_record_not_written_fails_the_invocation_after_every_line(log: Log) -> None:
    second = Payload()
    with pytest.raises(DbtRuntimeError, match="orders: its audit record on branch dbt_audit_x"):
        audited_build.settle_ended(
            [
                staged("orders", Payload(fails=True), unreported_tests=["test.p.t"]),
                staged("child", second, failed_parent="model.p.orders"),
            ]
        )
    assert len(log.warnings) == 2 and second.marked == [[]]


def test_nothing_left_says_nothing(log: Log) -> None:
    audited_build.settle_ended([])
    assert log.warnings == []
