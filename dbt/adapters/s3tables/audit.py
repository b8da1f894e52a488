"""Write-audit-publish: which builds of this dbt invocation are staged on an Iceberg branch,
which tests gate each, and when each may publish (pure decisions and one thread-safe
ledger; `audited_build.py` carries out the branch writes and the publish).

- A model with `audit_before_publish` whose tests run in this invocation writes to the
  branch `dbt_audit_<invocation>` of its table; `main` does not move.
- Its gating tests are the error-severity data tests selected in this invocation that
  depend on it. When every one has passed, `main` is fast-forwarded to the branch; one
  failing (or the test erroring: it never reports) keeps `main` where it was.
- A model built while a parent is still staged reads the parent's branch, so it is staged
  too, and publishes only after every such parent has published: data built from
  unpublished data is never published before it.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

BRANCH_PREFIX = "dbt_audit_"


def audit_branch(invocation_id: str) -> str:
    """The branch every audited build of one invocation writes to."""
    return BRANCH_PREFIX + "".join(c for c in invocation_id.lower() if c.isalnum())


def is_audit_branch(name: str) -> bool:
    return name.startswith(BRANCH_PREFIX)


def gating_tests(
    nodes: Iterable[Mapping[str, Any]], model_id: str, selected: Collection[str]
) -> frozenset[str]:
    """The tests that must pass before `model_id` publishes: data tests selected in this
    invocation, of error severity, that read the model."""
    return frozenset(
        node["unique_id"]
        for node in nodes
        if node.get("resource_type") == "test"
        and node["unique_id"] in selected
        and model_id in (node.get("depends_on") or {}).get("nodes", [])
        and str((node.get("config") or {}).get("severity", "error")).lower() == "error"
    )


def is_failing_test(severity: str, result_row: Iterable[Any] | None) -> bool:
    """Whether a test's result row `(failures, should_warn, should_error)` fails it as dbt
    judges it (only an error-severity test with `should_error` fails)."""
    if result_row is None:
        return True  # dbt reports a test without its one result row as an error
    _, _, should_error = tuple(result_row)
    return str(severity).lower() == "error" and str(should_error).lower() == "true"


@dataclass
class StagedBuild:
    """A model's build staged on its table's audit branch in this invocation."""

    model_id: str
    name: str
    branch: str
    pending_tests: set[str]
    waiting_on: set[str]
    failed_tests: list[str] = field(default_factory=list)
    failed_parent: str | None = None
    published: bool = False
    # What the adapter needs to publish it (relation, deferred table changes).
    payload: Any = None

    @property
    def failed(self) -> bool:
        return bool(self.failed_tests) or self.failed_parent is not None

    @property
    def ready(self) -> bool:
        return not self.published and not self.failed and not self.pending_tests


@dataclass
class LedgerUpdate:
    """What a ledger event settled: builds to publish now (in order), and builds whose
    audit failed, or that can no longer publish because a parent failed."""

    publish: list[StagedBuild] = field(default_factory=list)
    failed: list[StagedBuild] = field(default_factory=list)


class AuditLedger:
    """The staged builds of the current invocation (reset when the invocation changes:
    several invocations may run in one process, one after the other)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._invocation: str | None = None
        self._builds: dict[str, StagedBuild] = {}

    def _for(self, invocation_id: str) -> dict[str, StagedBuild]:
        if invocation_id != self._invocation:
            self._invocation = invocation_id
            self._builds = {}
        return self._builds

    def unpublished(self, invocation_id: str, model_ids: Iterable[str]) -> set[str]:
        """Those of `model_ids` staged in this invocation and not published."""
        with self._lock:
            builds = self._for(invocation_id)
            return {m for m in model_ids if m in builds and not builds[m].published}

    def staged_branch(self, invocation_id: str, model_id: str) -> str | None:
        """The branch readers of `model_id` read now: its audit branch while staged and
        not published; None (main) otherwise."""
        with self._lock:
            build = self._for(invocation_id).get(model_id)
            return build.branch if build is not None and not build.published else None

    def staged_builds(self, invocation_id: str) -> list[StagedBuild]:
        """The builds staged in this invocation and not published."""
        with self._lock:
            return [b for b in self._for(invocation_id).values() if not b.published]

    def get(self, invocation_id: str, model_id: str) -> StagedBuild | None:
        with self._lock:
            return self._for(invocation_id).get(model_id)

    def stage(self, invocation_id: str, build: StagedBuild) -> LedgerUpdate:
        """Record a staged build; it may be ready at once (nothing gates it)."""
        with self._lock:
            builds = self._for(invocation_id)
            builds[build.model_id] = build
            for parent in list(build.waiting_on):
                if builds[parent].failed:
                    build.failed_parent = parent
                    return LedgerUpdate(failed=[build])
            return LedgerUpdate(publish=[build] if self._ready(build) else [])

    def test_done(
        self, invocation_id: str, test_id: str, depends_on: Iterable[str], failed: bool
    ) -> LedgerUpdate:
        """A gating test finished: the builds it settles."""
        update = LedgerUpdate()
        with self._lock:
            builds = self._for(invocation_id)
            for model_id in depends_on:
                build = builds.get(model_id)
                if build is None or test_id not in build.pending_tests:
                    continue
                build.pending_tests.discard(test_id)
                if failed:
                    build.failed_tests.append(test_id)
                    update.failed.append(build)
                    update.failed += self._fail_children(builds, build.model_id)
                elif self._ready(build):
                    update.publish.append(build)
        return update

    def published(self, invocation_id: str, model_id: str) -> LedgerUpdate:
        """`model_id` published: the staged builds that waited only for it."""
        with self._lock:
            builds = self._for(invocation_id)
            builds[model_id].published = True
            ready = []
            for build in builds.values():
                if model_id in build.waiting_on:
                    build.waiting_on.discard(model_id)
                    if self._ready(build):
                        ready.append(build)
            return LedgerUpdate(publish=ready)

    def publish_failed(self, invocation_id: str, model_id: str, reason: str) -> LedgerUpdate:
        """Publishing `model_id` failed (`reason`): it and the builds waiting on it stay
        unpublished."""
        with self._lock:
            builds = self._for(invocation_id)
            builds[model_id].failed_tests.append(reason)
            return LedgerUpdate(failed=self._fail_children(builds, model_id))

    @staticmethod
    def _ready(build: StagedBuild) -> bool:
        return build.ready and not build.waiting_on

    @staticmethod
    def _fail_children(builds: dict[str, StagedBuild], model_id: str) -> list[StagedBuild]:
        failed = []
        for build in builds.values():
            if model_id in build.waiting_on and not build.failed:
                build.failed_parent = model_id
                failed.append(build)
                failed += AuditLedger._fail_children(builds, build.model_id)
        return failed


# One per process: dbt builds models and runs tests on several threads of one adapter.
LEDGER = AuditLedger()
