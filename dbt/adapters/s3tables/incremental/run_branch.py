"""The branch a run writes through when its rows depend on its table's state (run_bases.py):
created at the snapshot the run planned from, written by the run's statement, and
fast-forwarded into main only while main is still there (`RunBranch`).

Iceberg appends never conflict: two overlapping runs of a reader would both commit the
same range. Here the run's commit lands on a branch of its own, and main takes the
branch's head in one catalog commit that asserts main is still at the run's base, with
what the run records (its state, what it read of its upstreams) in the same commit. When
main moved, the run is refused as a conflict and its branch removed: nothing of it
reaches main, and the next run (or `dbt retry`) reads from where the other run left off.
Commits that change no row (compaction, by this adapter or S3 Tables itself), and the
run's own (a pre-hook committing to `{{ this }}`, tagged with the run's invocation and
node), are no conflict: the run's statement is written again on a branch from main's new
snapshot.

A branch left by a killed run is removed by the model's next run: its name says which
process made it and when (`stale_run_branches`).
"""

from __future__ import annotations

import hashlib
import os
import random
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError
from dbt_common.invocation import get_invocation_id

from dbt.adapters.s3tables.engines.process_identity import pid_alive
from dbt.adapters.s3tables.incremental.warehouse import on_branch

if TYPE_CHECKING:
    from dbt.adapters.base.relation import BaseRelation
    from pyiceberg.table import Table

    from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
    from dbt.adapters.s3tables.catalogs.table_changes import MainMoved

logger = AdapterLogger("s3tables")

T = TypeVar("T")

RUN_BRANCH_PREFIX = "dbt_run_"
# A run branch whose process cannot be checked (another machine) is stale after this.
ABANDONED_AFTER_SECONDS = 24 * 3600
# Iceberg's operation of a commit that changes no row (compaction).
REWRITE_OPERATION = "replace"
# How many times a run's statement is written again after commits that change no row.
REBASES = 3


def host_mark(host: str) -> str:
    """A short, name-safe mark of a machine (a branch name carries it)."""
    return hashlib.sha256(host.encode()).hexdigest()[:8]


def run_branch_name(host: str, pid: int, now: float) -> str:
    """`dbt_run_<machine>_<pid>_<unix seconds>_<random>`: unique per run, and saying whose
    it is, so that a later run can tell a branch left by a killed run from one in flight."""
    return f"{RUN_BRANCH_PREFIX}{host_mark(host)}_{pid}_{int(now)}_{random.randrange(16**6):06x}"


def stale_run_branches(
    branches: Iterable[str], now: float, host: str, is_alive: Callable[[int], bool]
) -> list[str]:
    """The run branches no run is writing through any more: made on this machine by a
    process that is gone, or elsewhere more than a day ago."""
    stale = []
    mark = host_mark(host)
    for branch in branches:
        parts = branch[len(RUN_BRANCH_PREFIX) :].split("_")
        if not branch.startswith(RUN_BRANCH_PREFIX) or len(parts) != 4:
            continue
        machine, pid, started, _ = parts
        if not (pid.isdigit() and started.isdigit()):
            continue
        if machine == mark:
            if not is_alive(int(pid)):
                stale.append(branch)
        elif now - int(started) > ABANDONED_AFTER_SECONDS:
            stale.append(branch)
    return stale


def conflict_error(model: str, base: int | None, moved: MainMoved, read_by: str) -> DbtRuntimeError:
    """The loser's sentence: who moved the table, from which snapshot, and the fix."""
    if moved.since is None:
        what = f"the table was rolled back or replaced (it is at snapshot {moved.current})"
    else:
        runs = sorted({c.invocation_id for c in moved.since if c.invocation_id})
        by = f"run {', '.join(runs)}" if runs else "a writer outside this run"
        operations = ", ".join(c.operation for c in moved.since)
        what = f"{by} committed to it ({operations}; now at snapshot {moved.current})"
    return DbtRuntimeError(
        f"Model `{model}`: its run planned from its table's snapshot {base} (read by "
        f"{read_by}), and since then {what}, so another run wrote from the same state; "
        "nothing was written. Fix: run the model again (`dbt retry`): it plans from where "
        "the other run left off"
    )


def rebasable(moved: MainMoved, invocation_id: str, node: str) -> bool:
    """Whether the run may write again from main's new snapshot: every commit since its
    base changed no row (compaction), or is the run's own (its pre-hook's, in this
    invocation: dbt runs a node's pre-hooks after its SQL rendered)."""
    return moved.since is not None and all(
        commit.operation == REWRITE_OPERATION
        or (commit.invocation_id == invocation_id and commit.node == node)
        for commit in moved.since
    )


@dataclass
class RunBranch:
    """The branch one run of `model` writes through (see the module docstring)."""

    model: str
    # The model's node id: its own commits (a pre-hook's) carry it.
    node: str
    target: BaseRelation
    iceberg: IcebergCatalog
    # The table's snapshot the run planned from, and what read it first.
    base: int
    read_by: str
    name: str = field(
        default_factory=lambda: run_branch_name(socket.gethostname(), os.getpid(), time.time())
    )
    # What the run records, set with the publish: properties to set and to remove.
    properties: dict[str, str] = field(default_factory=dict)
    removed: set[str] = field(default_factory=set)
    opened: bool = False
    # The table as the run's plan loaded it (main at `base`): the branch's first creation
    # starts from it instead of loading the table again.
    planned: Table | None = None

    @property
    def relation(self) -> BaseRelation:
        """The branch, as a relation: what the run's statements write."""
        return on_branch(self.target, self.name)

    @property
    def _namespace(self) -> str:
        return str(self.target.schema)

    @property
    def _table(self) -> str:
        return str(self.target.identifier)

    def keep_properties(self, wanted: dict[str, str], remove: tuple[str, ...] = ()) -> None:
        """Table properties the run records, set when it publishes."""
        self.properties.update(wanted)
        self.removed.update(remove)
        self.removed.difference_update(wanted)

    def open(self) -> None:
        """The branch at the run's base (main still there, else MainMoved; as the plan's
        load saw it on the first creation, the publish checking main again), with the run
        branches of killed runs removed in the same commit."""
        planned, self.planned = self.planned, None
        self.iceberg.create_branch(
            self._namespace,
            self._table,
            self.name,
            self.base,
            lambda names: stale_run_branches(
                (n for n in names if n != self.name), time.time(), socket.gethostname(), pid_alive
            ),
            planned,
        )
        self.opened = True

    def publish(self, records: dict[str, str], loaded: Table | None = None) -> None:
        """Main takes the branch's head, only from the run's base (else MainMoved, nothing
        changed), with the run's state and `records` (what it read), and the branch goes:
        one commit, from `loaded` (the table as loaded after the run's write) when given."""
        self.iceberg.publish_branch(
            self._namespace,
            self._table,
            self.name,
            self.base,
            {**self.properties, **records},
            tuple(self.removed),
            loaded,
        )
        self.opened = False

    def written_through(
        self,
        write: Callable[[], T],
        records: Callable[[T], dict[str, str]],
        loaded: Callable[[T], Table | None] = lambda _: None,
    ) -> T:
        """`write()` (the run's statements, onto the branch) published into main from the
        run's base with `records(what write() gave)` (from `loaded(what write() gave)`,
        the table as loaded after the write, when there is one); written again from main's
        new snapshot after commits that change no row or are the run's own, refused as a
        conflict after any other, the branch removed whatever fails."""
        from dbt.adapters.s3tables.catalogs.table_changes import MainMoved

        for rebase in range(REBASES + 1):
            try:
                self.open()
                written = write()
                self.publish(records(written), loaded(written))
                return written
            except MainMoved as moved:
                if not self.can_rebase(moved) or rebase == REBASES:
                    self.discard()
                    raise conflict_error(self.model, self.base, moved, self.read_by) from None
                self.rebase(moved)
            except BaseException:
                self.discard()
                raise
        raise AssertionError("unreachable")

    def record_without_commit(self, records: dict[str, str]) -> None:
        """A run that committed no row: its state and `records` set while main is at its
        base, or moved only by commits that change no row or are the run's own. When
        another run committed meanwhile, nothing is recorded, said in one line: the next
        run reads again what this one found empty."""
        from dbt.adapters.s3tables.catalogs.table_changes import MainMoved

        for _ in range(REBASES + 1):
            try:
                self.iceberg.set_properties_at(
                    self._namespace,
                    self._table,
                    self.base,
                    {**self.properties, **records},
                    tuple(self.removed),
                )
                return
            except MainMoved as moved:
                if not self.can_rebase(moved) or moved.current is None:
                    break
                self.base = moved.current
        logger.warning(
            f"{self.model}: another run committed to the table while this one ran, which "
            "returned no rows: nothing is recorded, and the next run reads again from where "
            "that run left off"
        )

    def can_rebase(self, moved: MainMoved) -> bool:
        return rebasable(moved, get_invocation_id(), self.node)

    def rebase(self, moved: MainMoved) -> None:
        """After commits that changed no row, or the run's own: the run writes again from
        main's snapshot."""
        assert moved.current is not None, "a rewrite leaves main on a snapshot"
        self.discard()
        operations = ", ".join(c.operation for c in moved.since or ())
        logger.info(
            f"{self.model}: commits that change no row, or its own ({operations}), landed "
            f"while the run wrote: its rows are written again from snapshot {moved.current}"
        )
        self.base = moved.current

    def discard(self) -> None:
        """Remove the branch (the run failed or lost): nothing of it reaches main. A branch
        that cannot be removed now is said, and the model's next run removes it."""
        if not self.opened:
            return
        self.opened = False
        try:
            self.iceberg.remove_branch(self._namespace, self._table, self.name)
        except Exception as error:
            logger.warning(
                f"{self.model}: its run branch {self.name} could not be removed ({error}); "
                "main is unchanged, and the model's next run removes it"
            )
