"""Write-audit-publish as dbt's macros reach it: whether a build is staged on an audit
branch (`audit_build`), a staged build taken up again by a later invocation's tests
(`resume_audit`, for `dbt retry`), views reading their parents' main while a parent is
staged (`reading_main`), and a finished test settling the builds it gates
(`audit_test_done`). The protocol itself is in audit.py (the ledger, records, branches) and
audited_build.py (one staged build and its publish)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.events.logging import AdapterLogger
from dbt_common.invocation import get_invocation_id
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

from dbt.adapters.s3tables.incremental.warehouse import Warehouse
from dbt.adapters.s3tables.keys.format_version import FORMAT_VERSION_PROPERTY
from dbt.adapters.s3tables.lifecycle.audit import (
    LEDGER,
    UNPUBLISHED,
    StagedBuild,
    audit_branch,
    audit_records,
    gating_tests,
    is_failing_test,
)
from dbt.adapters.s3tables.lifecycle.audited_build import AuditedBuild, settle
from dbt.adapters.s3tables.lifecycle.build_config import LifecycleConfig

logger = AdapterLogger("s3tables")


class WriteAuditPublish:
    """Decides and settles the audited builds of one dbt invocation."""

    def __init__(
        self,
        warehouse_for: Callable[[BaseRelation], Warehouse],
        connection_name: Callable[[], str],
    ) -> None:
        # What a build writes through; the name of the calling thread's connection (dbt
        # names it after the node it runs: a test's starts with `test.`).
        self.warehouse_for = warehouse_for
        self.connection_name = connection_name

    def audit_build(
        self,
        model: Any,
        model_config: LifecycleConfig,
        target: BaseRelation,
        nodes: Any,
        selected: Any,
    ) -> AuditedBuild | None:
        """How this build of `model` is audited: None (written to main as usual) unless
        it sets `audit_before_publish` and tests of it run in this invocation, or a
        parent it reads is staged and unpublished; then the build its materialization
        writes through, on the table's audit branch."""
        invocation = get_invocation_id()
        model_id = str(model["unique_id"])
        staged = LEDGER.get(invocation, model_id)
        if staged is not None and not staged.published:
            resumed: AuditedBuild = staged.payload  # a later batch of the same microbatch build
            return resumed
        parents = (model.get("depends_on") or {}).get("nodes") or []
        waiting_on = LEDGER.unpublished(invocation, parents)
        if not model_config.audit_before_publish and not waiting_on:
            return None
        tests = gating_tests(nodes.values(), model_id, set(selected or ()))
        if not tests and not waiting_on:
            logger.info(
                f"{model['name']}: audit_before_publish: no test of it runs in this "
                "invocation, so it is written to main directly (`dbt build` audits it)"
            )
            return None
        return AuditedBuild(
            name=str(model["name"]),
            model_id=model_id,
            invocation_id=invocation,
            target=target,
            branch=audit_branch(invocation),
            warehouse=self.warehouse_for(target),
            gating_tests=tests,
            waiting_on=waiting_on,
            # The model's table properties (a replace would set them), at the publish; not
            # the format version, which only a create or an upgrade sets.
            properties={
                key: value
                for key, value in model_config.table_properties(
                    self.warehouse_for(target).iceberg.config.table_defaults()
                ).items()
                if key != FORMAT_VERSION_PROPERTY
            },
        )

    def resume_audit(
        self, invocation: str, relation: BaseRelation, node: Any
    ) -> StagedBuild | None:
        """A build of `node` an earlier invocation staged and did not publish, taken up when
        a test of it that has not passed on its staged data runs now (`dbt retry`, `dbt
        test`): the test reads the staged data again, and once every such test has passed,
        the build publishes, so a retry never passes on `main` while the build it failed
        stays unpublished. Nothing is looked up unless the reader is a test (the thread's
        connection is named after the node it runs) of a model with
        `audit_before_publish`."""
        reader_id = self.connection_name()
        config: Any = getattr(node, "config", None)
        audited = config.get("audit_before_publish") if hasattr(config, "get") else None
        if not reader_id.startswith("test.") or str(audited).lower() != "true":
            return None
        try:
            branches = self.warehouse_for(relation).iceberg.branches(
                str(relation.schema), str(relation.identifier)
            )
        except (NoSuchTableError, NoSuchNamespaceError):
            return None  # not built yet, or a view
        unique_id, name = str(node.unique_id), str(node.name)
        records = [
            r
            for r in audit_records(branches.properties).values()
            if r.model_id == unique_id and r.state == UNPUBLISHED and r.branch in branches.heads
        ]
        if not records:
            return None
        record = max(records, key=lambda r: r.staged_at)
        tests = record.tests_to_pass
        if reader_id not in tests:
            return None
        if record.branch not in branches.ahead_of_main:
            logger.warning(
                f"{name}: the build staged on branch {record.branch} was not published and "
                "no longer can be (main has moved since it was staged); its tests read main. "
                "Fix: rebuild the model (`dbt build -s <model>+`)"
            )
            return None
        logger.info(
            f"{name}: the build staged on branch {record.branch} was not published; its "
            f"tests that have not passed on it ({len(tests)}) audit it again in this run, and "
            "it is published when they pass"
        )
        audited_build = AuditedBuild(
            name=name,
            model_id=unique_id,
            invocation_id=invocation,
            target=relation,
            branch=record.branch,
            warehouse=self.warehouse_for(relation),
            gating_tests=tests,
            waiting_on=set(),
            properties=dict(record.set_properties),
            removed_properties=set(record.remove_properties),
            dropped_columns=list(record.drop_columns),
            record=record,
            resumed=True,
        )
        return StagedBuild(unique_id, name, record.branch, set(tests), set(), payload=audited_build)

    def reading_main(self, sql: str) -> str:
        """A view's query reading its parents' main even where a parent is still staged
        on a branch: a view stores its query, and the branch goes away at the publish
        (from then on the view shows the published data)."""
        for build in LEDGER.staged_builds(get_invocation_id()):
            audited: AuditedBuild = build.payload
            sql = sql.replace(str(audited.relation), str(audited.target))
        return sql

    def audit_test_done(self, test: Any, result: Any) -> None:
        """A test finished (its result table: failures, should_warn, should_error): the
        staged builds it gates publish, or stay staged, as it settles."""
        rows = list(result["table"].rows) if result and result.get("table") else []
        severity = str((test.get("config") or {}).get("severity") or "error")
        failed = is_failing_test(severity, rows[0] if len(rows) == 1 else None)
        invocation = get_invocation_id()
        depends_on = (test.get("depends_on") or {}).get("nodes") or []
        settle(invocation, LEDGER.test_done(invocation, test["unique_id"], depends_on, failed))
