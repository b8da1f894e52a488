"""Write-audit-publish: which builds of this dbt invocation are staged on an Iceberg branch,
which tests gate each, and when each may publish (pure decisions and one thread-safe
ledger; `audited_build.py` carries out the branch writes and the publish).

- A model with `audit_before_publish` whose tests run in this invocation writes to the
  branch `dbt_audit_<invocation>` of its table; `main` does not move.
- Its gating tests are the error-severity data tests selected in this invocation that
  depend on it. When every one has passed, `main` is fast-forwarded to the branch; one
  failing keeps `main` where it was. A test that errors never reports: when the
  invocation ends, every build still waiting for a test (or for a parent) ends unpublished
  all the same, each said in one line naming the model, its branch and the fix.
- A model built while a parent is still staged reads the parent's branch, so it is staged
  too, and publishes only after every such parent has published: data built from
  unpublished data is never published before it.
- Each staged build keeps an `AuditRecord` on its table (a table property per branch):
  whose build it is, whether it ended unpublished, which of its tests passed, which staged
  parents it waits for, and what its publish still has to do. A concurrent build of the
  same table never removes a branch still in flight, and a build no longer in flight
  (ended unpublished, or its process gone: killed) can be audited again later (`dbt retry`,
  `dbt test`): a test of it that has not passed reads the staged data, and the build
  publishes once every such test has passed, together with the builds staged on the same
  branch behind it (its staged parents first, its staged children after it).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

BRANCH_PREFIX = "dbt_audit_"
# The table property holding a staged build's record: this prefix, then the branch.
RECORD_PREFIX = "dbt.s3tables.audit."
# A staged build whose process cannot be checked (another machine) is taken as abandoned
# after this long: no audited build runs for a day.
ABANDONED_AFTER_SECONDS = 24 * 3600
STAGED = "staged"
UNPUBLISHED = "unpublished"


def audit_branch(invocation_id: str) -> str:
    """The branch every audited build of one invocation writes to."""
    return BRANCH_PREFIX + "".join(c for c in invocation_id.lower() if c.isalnum())


def is_audit_branch(name: str) -> bool:
    return name.startswith(BRANCH_PREFIX)


def record_key(branch: str) -> str:
    return RECORD_PREFIX + branch


@dataclass(frozen=True)
class AuditRecord:
    """What a table keeps about one of its staged builds (see the module docstring)."""

    branch: str
    model_id: str
    # The process that staged it, as `pid@host`, and when (seconds since the epoch).
    owner: str
    staged_at: float
    state: str = STAGED
    # The tests that gate it, and those of them that passed on its staged data.
    tests: tuple[str, ...] = ()
    passed: tuple[str, ...] = ()
    # The staged parents (model ids) it was built from and that had not published when the
    # record was written: it publishes only after them.
    waiting_on: tuple[str, ...] = ()
    # What its publish does after moving main: table properties set and removed, and
    # columns dropped.
    set_properties: dict[str, str] = field(default_factory=dict)
    remove_properties: tuple[str, ...] = ()
    drop_columns: tuple[str, ...] = ()

    def to_property(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_property(cls, text: str) -> AuditRecord | None:
        """The record, or None for a value this version cannot read."""
        try:
            values = json.loads(text)
            return cls(
                branch=str(values["branch"]),
                model_id=str(values["model_id"]),
                owner=str(values["owner"]),
                staged_at=float(values["staged_at"]),
                state=str(values.get("state", STAGED)),
                tests=tuple(values.get("tests") or ()),
                passed=tuple(values.get("passed") or ()),
                waiting_on=tuple(values.get("waiting_on") or ()),
                set_properties={
                    str(k): str(v) for k, v in (values.get("set_properties") or {}).items()
                },
                remove_properties=tuple(values.get("remove_properties") or ()),
                drop_columns=tuple(values.get("drop_columns") or ()),
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return None

    def unpublished(self, waiting_on: Iterable[str] | None = None) -> AuditRecord:
        """Its audit failed (or a parent's did, or its publish, or its tests never
        reported): done, not in flight; `waiting_on`, the staged parents it still waits
        for (unchanged when None)."""
        waits = self.waiting_on if waiting_on is None else tuple(sorted(waiting_on))
        return replace(self, state=UNPUBLISHED, waiting_on=waits)

    def with_passed(self, test_id: str) -> AuditRecord:
        return replace(self, passed=tuple(sorted({*self.passed, test_id})))

    @property
    def tests_to_pass(self) -> frozenset[str]:
        """The gating tests that have not passed on its staged data."""
        return frozenset(self.tests) - frozenset(self.passed)


def audit_records(properties: Mapping[str, str]) -> dict[str, AuditRecord]:
    """The records a table's properties hold, by branch."""
    records = {}
    for key, value in properties.items():
        if key.startswith(RECORD_PREFIX):
            record = AuditRecord.from_property(value)
            if record is not None:
                records[record.branch] = record
    return records


def in_flight(
    record: AuditRecord,
    now: float,
    host: str,
    is_alive: Callable[[int], bool],
    process: str = "",
    own_branch: str = "",
) -> bool:
    """Whether a staged build may still be running: staged (not yet unpublished) by a
    process that is alive (same machine) or, elsewhere, less than a day ago. A build this
    `process` staged on another branch than its current invocation's (`own_branch`) was
    staged by an earlier invocation of it, which has ended (one process runs its dbt
    invocations one after another): not in flight. Not in flight and still staged is
    abandoned (its process killed, or ended before its tests reported): it ended
    unpublished."""
    if record.state != STAGED:
        return False
    if process and record.owner == process and record.branch != own_branch:
        return False
    pid, _, owner_host = record.owner.partition("@")
    if owner_host == host and pid.isdigit():
        return is_alive(int(pid))
    return now - record.staged_at < ABANDONED_AFTER_SECONDS


def stale_branches(
    branches: Iterable[str],
    records: Mapping[str, AuditRecord],
    own: str,
    now: float,
    host: str,
    is_alive: Callable[[int], bool],
    process: str = "",
) -> list[str]:
    """The audit branches a new audited build removes before staging its own: every one
    but its own and those of builds still in flight (a concurrent build of the same
    table). A branch without a record is an earlier version's, or its record was written
    after it: records are written before their branch, so never a build in flight."""
    return [
        branch
        for branch in branches
        if is_audit_branch(branch)
        and branch != own
        and not (
            branch in records
            and in_flight(records[branch], now, host, is_alive, process, own_branch=own)
        )
    ]


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
    # Why its publish failed (its tests passed).
    publish_error: str | None = None
    # Set when the invocation ended first: its gating tests that never reported (they
    # errored, or did not run), and whether it ended still waiting (for them or a parent).
    unreported_tests: list[str] = field(default_factory=list)
    ended_waiting: bool = False
    published: bool = False
    # What the adapter needs to publish it (relation, deferred table changes).
    payload: Any = None

    @property
    def failed(self) -> bool:
        return bool(
            self.failed_tests
            or self.failed_parent is not None
            or self.publish_error is not None
            or self.unreported_tests
            or self.ended_waiting
        )

    @property
    def ready(self) -> bool:
        return not self.published and not self.failed and not self.pending_tests


def unpublished_line(build: StagedBuild) -> str:
    """The one line saying a build is left unpublished when its invocation ends: the
    model, why, its branch and the fix."""
    if build.failed_tests:
        why = f"failing test(s): {', '.join(build.failed_tests)}"
    elif build.publish_error is not None:
        why = f"its tests passed but its publish failed: {build.publish_error}"
    elif build.failed_parent is not None:
        why = f"built from the staged {build.failed_parent}, which did not publish"
    elif build.unreported_tests:
        why = (
            f"test(s) that never reported (they errored, or did not run): "
            f"{', '.join(build.unreported_tests)}"
        )
    else:
        why = "still waiting to publish when the run ended"
    if build.publish_error is not None:
        fix = f"rebuild it: `dbt build -s {build.name}+`"
    elif build.failed_parent is not None:
        # A unique id is `<type>.<package>.<name>` (a version after the name).
        parent = build.failed_parent.split(".", 2)[-1]
        fix = (
            "it publishes after its parent: fix what the parent's test(s) report, then `dbt "
            f"retry`, or rebuild from the parent: `dbt build -s {parent}+`"
        )
    else:
        fix = (
            "fix what the test(s) report, then `dbt retry` (its tests audit the staged data "
            f"again, and it publishes when they pass), or rebuild: `dbt build -s {build.name}+`"
        )
    return (
        f"{build.name}: left unpublished on branch {build.branch} ({why}); main is "
        f"unchanged. Fix: {fix}"
    )


# (invocation id, the model's relation on main, its node) -> the builds taken up with it,
# each after the staged parents it waits for (none: its readers read main).
Resumer = Callable[[str, Any, Any], list[StagedBuild]]
# Carries out what a ledger event settled (publishes, reports): audited_build.settle.
Settler = Callable[[str, "LedgerUpdate"], None]


@dataclass
class LedgerUpdate:
    """What a ledger event settled: builds to publish now (in order), and builds whose
    audit failed, or that can no longer publish because a parent failed."""

    publish: list[StagedBuild] = field(default_factory=list)
    failed: list[StagedBuild] = field(default_factory=list)
    # Gating tests that passed without publishing their build (it failed already, or
    # waits for other tests): (build, test).
    passed: list[tuple[StagedBuild, str]] = field(default_factory=list)


# The node each dbt thread is running (its connection's name, a node's unique id): the
# reader a `ref()` resolves for.
_RUNNING = threading.local()

# The node types that read main while a parent is staged, never its audit branch: they
# cannot be staged behind it (a snapshot keeps the history of what it reads).
READS_MAIN = ("snapshot.",)


def running_node(node_id: str) -> None:
    """This thread now runs the node `node_id` (dbt names the thread's connection so)."""
    _RUNNING.node = node_id


def runs_before_nodes() -> bool:
    """Whether this thread runs dbt's own steps around the nodes (its `master` connection:
    schemas, the relation cache, on-run-start hooks), not a node."""
    return getattr(_RUNNING, "node", "") == "master"


def reads_main() -> bool:
    """Whether the node this thread runs reads main, never a staged parent's branch."""
    return str(getattr(_RUNNING, "node", "")).startswith(READS_MAIN)


class AuditLedger:
    """The staged builds of the current invocation (reset when the invocation changes:
    several invocations may run in one process, one after the other)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._invocation: str | None = None
        self._builds: dict[str, StagedBuild] = {}
        # Taking up builds staged by earlier invocations (see `reading_branch`): one at a
        # time; a model taken up, or written to main, is not asked again in the invocation.
        self._resume_lock = threading.Lock()
        self._resumer: Resumer | None = None
        self._settler: Settler | None = None
        self._asked: set[str] = set()
        # Whether the current invocation has ended (`finish`).
        self._finished = False

    def _for(self, invocation_id: str) -> dict[str, StagedBuild]:
        if invocation_id != self._invocation:
            self._invocation = invocation_id
            self._builds = {}
            self._asked = set()
            self._finished = False
        return self._builds

    def resume_with(self, resumer: Resumer, settler: Settler) -> None:
        """How a build an earlier invocation staged and did not publish is taken up (the
        adapter reads its record from the table's catalog), and how a build taken up with
        nothing left to wait for is published."""
        self._resumer = resumer
        self._settler = settler

    def reading_branch(
        self, invocation_id: str, model_id: str, relation: Any, node: Any, resume: bool
    ) -> str | None:
        """The branch a reader of `model_id` reads: its audit branch while staged in this
        invocation; with `resume`, also the branch of a build an earlier invocation staged
        and did not publish, when this invocation runs tests that gate it (it is then
        staged here too, with the builds staged behind it or before it on its branch,
        published when they pass). None: main, always for a reader that cannot be staged
        behind a build (a snapshot): it must not read what an audit may reject."""
        if reads_main():
            return None
        branch = self.staged_branch(invocation_id, model_id)
        if branch is not None or not resume or self._resumer is None:
            return branch
        with self._resume_lock:
            with self._lock:
                self._for(invocation_id)
                if model_id in self._asked:
                    return self._branch_of(invocation_id, model_id)
            # Asked again for each reader until a build is taken up: whether one is
            # depends on the reader (a test that passed on it reads main).
            updates = []
            for resumed in self._resumer(invocation_id, relation, node):
                with self._lock:
                    self._asked.add(resumed.model_id)
                updates.append(self.stage(invocation_id, resumed))
            for update in updates:
                if (update.publish or update.failed) and self._settler is not None:
                    self._settler(invocation_id, update)
            return self.staged_branch(invocation_id, model_id)

    def built_on_main(self, invocation_id: str, model_id: str) -> None:
        """`model_id` was written to main in this invocation: its tests read that, never a
        build an earlier invocation staged (its main has moved past it)."""
        with self._lock:
            self._for(invocation_id)
            self._asked.add(model_id)

    def _branch_of(self, invocation_id: str, model_id: str) -> str | None:
        build = self._for(invocation_id).get(model_id)
        return build.branch if build is not None and not build.published else None

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

    def on_branch(self, invocation_id: str, branch: str) -> tuple[set[str], set[str]]:
        """The models staged in this invocation on `branch`: those not published, and those
        published."""
        with self._lock:
            builds = [b for b in self._for(invocation_id).values() if b.branch == branch]
            return (
                {b.model_id for b in builds if not b.published},
                {b.model_id for b in builds if b.published},
            )

    def waiting_on(self, invocation_id: str, model_id: str) -> tuple[str, ...]:
        """The staged parents `model_id` still waits for."""
        with self._lock:
            build = self._for(invocation_id).get(model_id)
            return tuple(sorted(build.waiting_on)) if build is not None else ()

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
                else:
                    update.passed.append((build, test_id))
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
            builds[model_id].publish_error = reason
            return LedgerUpdate(failed=self._fail_children(builds, model_id))

    def finish(self) -> list[StagedBuild]:
        """The current invocation ends (once; later calls find nothing): a build still
        waiting for a gating test (one that errored never reports), or for a parent, can no
        longer publish in it and ends unpublished; every build left unpublished is
        returned, to be recorded and said."""
        with self._lock:
            if self._finished or self._invocation is None:
                return []
            self._finished = True
            builds = self._builds
            for build in builds.values():
                if not build.published and not build.failed and build.pending_tests:
                    build.unreported_tests = sorted(build.pending_tests)
                    build.pending_tests.clear()
                    self._fail_children(builds, build.model_id)
            left = [b for b in builds.values() if not b.published]
            for build in left:
                # Nothing to wait for and yet not published: said all the same.
                if not build.failed:
                    build.ended_waiting = True
            return left

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
