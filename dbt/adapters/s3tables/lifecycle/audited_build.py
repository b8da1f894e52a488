"""One model build staged on its table's audit branch: the branch, the statement that
writes a whole new table version to it, and the publish (see audit.py for when).

Iceberg branches share the table's schema and properties; only snapshots are per branch.
So what must be table-wide is done before the write and is harmless to readers of `main`
(a new column reads as NULL there, a type widens), and what readers of `main` must not
see yet is kept for the publish: an incremental model's recorded state, and the removal
of columns the model no longer returns. A whole-table build is never
`CREATE OR REPLACE ... AS SELECT` here: under a branch that left `main` empty (Iceberg 1.10
and 1.12, on Spark 3.5 and 4.1); the table is created empty if missing and the branch gets an
`INSERT OVERWRITE` of every row instead.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.incremental.model_state import state_keys
from dbt.adapters.s3tables.incremental.schema_evolution import SchemaDiff, schema_diff
from dbt.adapters.s3tables.incremental.warehouse import on_branch
from dbt.adapters.s3tables.lifecycle.audit import (
    LEDGER,
    AuditRecord,
    LedgerUpdate,
    StagedBuild,
    audit_records,
    record_key,
    stale_branches,
    unpublished_line,
)
from dbt.adapters.s3tables.sql.text import procedure_call, quote, sql_string
from dbt.adapters.s3tables.sql.types import is_widening, without_void

if TYPE_CHECKING:
    from dbt.adapters.base.relation import BaseRelation

    from dbt.adapters.s3tables.incremental.warehouse import Warehouse

logger = AdapterLogger("s3tables")

# Iceberg's message for a branch that is already gone: removing it is then done.
BRANCH_GONE = "does not exist"


def is_alive(pid: int) -> bool:
    """Whether a process of this machine is alive."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def this_process() -> str:
    return f"{os.getpid()}@{socket.gethostname()}"


@dataclass
class AuditedBuild:
    """What the materialization of an audited model writes through, and publishes."""

    name: str
    model_id: str
    invocation_id: str
    # The model's table (main), and the same table's audit branch.
    target: BaseRelation
    branch: str
    warehouse: Warehouse
    gating_tests: frozenset[str]
    waiting_on: set[str]
    # Kept for the publish: table properties to set and remove, columns to drop.
    properties: dict[str, str] = field(default_factory=dict)
    removed_properties: set[str] = field(default_factory=set)
    dropped_columns: list[str] = field(default_factory=list)
    # Run once published (the table's threshold maintenance).
    after_publish: Callable[[], object] | None = None
    # What the table keeps about this build (see audit.py), once it is prepared.
    record: AuditRecord | None = None
    # Staged by an earlier invocation and audited again in this one.
    resumed: bool = False
    # Its record is read, changed and written by the threads of its tests one at a time:
    # two passes written at once would lose one.
    _record_lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )

    @property
    def relation(self) -> BaseRelation:
        """The branch, as a relation: what the build writes and its tests read."""
        return on_branch(self.target, self.branch)

    @property
    def _namespace(self) -> str:
        return str(self.target.schema)

    @property
    def _table(self) -> str:
        return str(self.target.identifier)

    def empty_sql(self, sql: str) -> str:
        """The model's query without rows: a missing table is created from it (empty)."""
        return f"SELECT * FROM (\n{sql}\n) AS dbt_audit_rows WHERE false"

    def prepare(self, base: int | None = None) -> None:
        """Once the table exists: remove the branches of earlier audits no longer in
        flight (and their records), record this build, then branch off `main` (a later
        batch of the same build finds its branch there already), at snapshot `base` when
        the build's rows were planned from it (incremental/run_bases.py): its publish, a
        fast-forward, then fails if another run moved main since. The record comes first,
        so a concurrent build of the table never takes this branch for a leftover."""
        iceberg = self.warehouse.iceberg
        current = iceberg.branches(self._namespace, self._table)
        if self.branch in current.heads:
            return
        records = audit_records(current.properties)
        stale = stale_branches(
            current.heads,
            records,
            self.branch,
            time.time(),
            socket.gethostname(),
            is_alive,
            this_process(),
        )
        for old in stale:
            self.drop_branch(old)
            logger.info(f"{self.name}: removed the branch of an earlier audit, {old}")
        # Records whose branch is removed now, or gone already, unless still in flight.
        done = set(stale) | (set(records) - set(current.heads) - {self.branch})
        self.record = AuditRecord(self.branch, self.model_id, this_process(), time.time())
        iceberg.set_properties_if_changed(
            self._namespace,
            self._table,
            {record_key(self.branch): self.record.to_property()},
            tuple(record_key(b) for b in done if record_key(b) in current.properties),
        )
        at = f" AS OF VERSION {base}" if base is not None else ""
        self.warehouse.execute(f"ALTER TABLE {self.target} CREATE BRANCH {quote(self.branch)}{at}")

    def drop_branch(self, branch: str) -> None:
        """Remove a branch; one another process removed first is removed all the same."""
        try:
            self.warehouse.execute(
                f"ALTER TABLE {self.target} DROP BRANCH IF EXISTS {quote(branch)}"
            )
        except Exception as error:
            if BRANCH_GONE not in str(error):
                raise
            logger.debug(f"{self.name}: branch {branch} was removed by another process")

    def replace_sql(self, sql: str) -> str:
        """The statement writing the query's rows as the branch's whole content, after
        the table-wide schema changes it needs (new columns, widened types)."""
        # Untyped (NULL) columns are stored as string, as a created table stores them.
        output = without_void(self.warehouse.engine.query_schema(sql))
        state = self.warehouse.iceberg.table_state(self._namespace, self._table)
        diff = schema_diff(state.schema, output)
        narrowing = [c for c in diff.changed if not c.widening and not is_widening(c.new, c.old)]
        if narrowing:
            raise ModelConfigError(
                self.name,
                "audit_before_publish",
                "the model changes a column's type in a way Iceberg cannot apply in place ("
                + "; ".join(c.describe() for c in narrowing)
                + "), and a table's schema is shared by all its branches",
                "build it once without the audit (`audit_before_publish: false`, e.g. from a "
                "var) so the table is replaced, then turn the audit back on",
            )
        widened = [(c.path, c.new) for c in diff.changed if c.widening]
        if diff.added or widened:
            self.warehouse.iceberg.evolve_schema(self._namespace, self._table, diff.added, widened)
            logger.info(
                f"{self.name}: schema evolved on the whole table (all branches): "
                + "; ".join(SchemaDiff(added=diff.added, changed=diff.changed).describe())
            )
        self.dropped_columns = list(diff.removed)
        self.prepare()
        # The table's columns after the evolution, new ones last: computed, not re-read.
        columns = [f.name for f in state.schema.fields]
        columns += [path[0] for path, _ in diff.added if len(path) == 1]
        removed = {c.lower() for c in diff.removed}
        select = ", ".join("NULL" if c.lower() in removed else quote(c) for c in columns)
        return (
            f"INSERT OVERWRITE {self.relation}\nSELECT {select} FROM (\n{sql}\n) AS dbt_audit_rows"
        )

    def keep_properties(self, wanted: dict[str, str], remove: tuple[str, ...] = ()) -> None:
        """Table properties to set (and remove) when the build publishes."""
        self.properties.update(wanted)
        self.removed_properties.update(remove)

    def forget_model_state(self) -> None:
        """A `table` build over an incremental model's table: its state goes at publish."""
        state = self.warehouse.iceberg.table_state(self._namespace, self._table)
        self.removed_properties.update(state_keys(state.properties))

    # --- after the build ---

    def staged(self) -> None:
        """The build is on its branch: its record completed (what the publish does, which
        tests gate it); published now if nothing gates it, else when its tests (and
        staged parents) say so."""
        self._keep_record(
            AuditRecord(
                self.branch,
                self.model_id,
                this_process(),
                self.record.staged_at if self.record else time.time(),
                tests=tuple(sorted(self.gating_tests)),
                waiting_on=tuple(sorted(self.waiting_on)),
                set_properties=dict(self.properties),
                remove_properties=tuple(sorted(self.removed_properties)),
                drop_columns=tuple(self.dropped_columns),
            )
        )
        build = StagedBuild(
            self.model_id,
            self.name,
            self.branch,
            pending_tests=set(self.gating_tests),
            waiting_on=set(self.waiting_on),
            payload=self,
        )
        logger.info(
            f"{self.name}: staged on branch {self.branch}; published when its "
            f"{len(self.gating_tests)} test(s) pass"
            + (f" and {', '.join(sorted(self.waiting_on))} publish" if self.waiting_on else "")
        )
        settle(self.invocation_id, LEDGER.stage(self.invocation_id, build))

    def _keep_record(self, record: AuditRecord) -> None:
        with self._record_lock:
            self._write_record(record)

    def _change_record(self, change: Callable[[AuditRecord], AuditRecord]) -> None:
        """The record changed from its current value and written, one thread at a time."""
        with self._record_lock:
            if self.record is not None:
                self._write_record(change(self.record))

    def _write_record(self, record: AuditRecord) -> None:
        self.record = record
        self.warehouse.iceberg.set_properties_if_changed(
            self._namespace, self._table, {record_key(self.branch): record.to_property()}
        )

    def test_passed(self, test_id: str) -> None:
        """One of its tests passed without publishing it (it failed already, or waits for
        other tests): the record keeps the pass, which holds for this staged data in any
        later run that audits it again."""
        self._change_record(lambda record: record.with_passed(test_id))

    def mark_unpublished(self, waiting_on: Iterable[str]) -> None:
        """It will not publish in this run (a test or a parent failed, or the publish, or
        the run ended before its tests reported): the record says so, with the staged
        parents it still waits for. The build stays on its branch, can be audited again,
        and is no longer in flight for a concurrent build's cleanup."""
        self._change_record(lambda record: record.unpublished(waiting_on))

    def publish(self) -> None:
        """`main` fast-forwarded to the branch, then what was kept for the publish (the
        build's record removed with it), then the branch removed."""
        iceberg = self.warehouse.iceberg
        self.warehouse.execute(
            procedure_call(
                iceberg.config.name,
                self._namespace,
                self._table,
                "fast_forward",
                "branch => 'main'",
                f"to => {sql_string(self.branch)}",
            )
        )
        iceberg.set_properties_if_changed(
            self._namespace,
            self._table,
            self.properties,
            (*self.removed_properties, record_key(self.branch)),
        )
        if self.dropped_columns:
            iceberg.drop_columns(self._namespace, self._table, self.dropped_columns)
            logger.info(
                f"{self.name}: column(s) {', '.join(self.dropped_columns)} no longer "
                "returned by the model removed at publish"
            )
        self.drop_branch(self.branch)

    def inspect_hint(self) -> str:
        return f"select * from {self.relation}"


def settle(invocation_id: str, update: LedgerUpdate) -> None:
    """Carry out what a ledger event settled: publish the builds that are ready (and
    then those that waited for them), report the ones that cannot publish; a publish that
    failed fails the node that ran it (after the others were carried out)."""
    for build, test_id in update.passed:
        audited_build: AuditedBuild = build.payload
        audited_build.test_passed(test_id)
        if audited_build.resumed and not build.failed and build.pending_tests:
            logger.warning(
                f"{build.name}: {test_id} passed on the build staged on branch "
                f"{build.branch}; it is published once these pass too: "
                f"{', '.join(sorted(build.pending_tests))}"
            )
    pending = list(update.publish)
    failed = list(update.failed)
    publish_errors = []
    while pending:
        build = pending.pop(0)
        audited: AuditedBuild = build.payload
        try:
            audited.publish()
        except Exception as error:
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            publish_errors.append(
                f"{build.name}: its tests passed but the publish failed ({reason}); main is "
                f"unchanged and the new data stays on branch {build.branch}: "
                f"{audited.inspect_hint()}. Fix: rerun the model (if another writer moved "
                "main meanwhile, the rerun stages on top of it)"
            )
            failed += LEDGER.publish_failed(invocation_id, build.model_id, reason).failed
            continue
        tests = len(audited.gating_tests)
        logger.info(
            f"{build.name}: audited ({tests} test(s) passed) and published: main now "
            f"holds the new data; branch {build.branch} removed"
            if tests or not audited.waiting_on
            else f"{build.name}: published after {', '.join(sorted(audited.waiting_on))}: "
            f"main now holds the new data; branch {build.branch} removed"
        )
        pending += LEDGER.published(invocation_id, build.model_id).publish
        if audited.after_publish is not None:
            try:
                audited.after_publish()
            except Exception as error:
                publish_errors.append(f"{build.name}: published; then {error}")
    reported = set()
    for build in failed:
        if build.model_id in reported:
            continue
        reported.add(build.model_id)
        audited = build.payload
        why = (
            f"its parent {build.failed_parent} did not publish"
            if build.failed_parent
            else f"failing test(s): {', '.join(build.failed_tests)}"
        )
        logger.warning(
            f"{build.name}: not published ({why}); main is unchanged and the new data "
            f"stays on branch {build.branch} until a `dbt retry` audits it again or the "
            f"model's next audited build replaces it: {audited.inspect_hint()}"
        )
        audited.mark_unpublished(LEDGER.waiting_on(invocation_id, build.model_id))
    if publish_errors:
        raise DbtRuntimeError("; ".join(publish_errors))


def settle_ended(builds: Iterable[StagedBuild]) -> None:
    """The invocation ended with `builds` unpublished (the ledger's `finish`): each said in
    one line (model, why, branch, fix), then its record marked unpublished with the staged
    parents it still waits for, so that a later invocation's tests take it up. A record
    that cannot be written fails the invocation, after every line was said."""
    errors = []
    for build in builds:
        logger.warning(unpublished_line(build))
        audited: AuditedBuild = build.payload
        try:
            audited.mark_unpublished(sorted(build.waiting_on))
        except Exception as error:
            errors.append(f"{build.name}: its audit record on branch {build.branch}: {error}")
    if errors:
        raise DbtRuntimeError(
            "audit records not written (their builds stay staged until their process is "
            "gone): " + "; ".join(errors)
        )
