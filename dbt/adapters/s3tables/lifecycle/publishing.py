"""Write-audit-publish as dbt's macros and the adapter reach it: whether a build is staged
on an audit branch (`audit_build`), a staged build taken up again by a later invocation's
tests (`resume_audit`, for `dbt retry`: resumption.py), views reading their parents' main
while a parent is staged (`reading_main`), a finished test settling the builds it gates
(`audit_test_done`), and the end of the invocation settling the builds still staged
(`invocation_ended`). The protocol itself is in audit.py (the ledger, records, branches)
and audited_build.py (one staged build and its publish)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.events.logging import AdapterLogger
from dbt_common.invocation import get_invocation_id

from dbt.adapters.s3tables.incremental.warehouse import Warehouse
from dbt.adapters.s3tables.keys.format_version import FORMAT_VERSION_PROPERTY
from dbt.adapters.s3tables.lifecycle.audit import (
    LEDGER,
    StagedBuild,
    audit_branch,
    gating_tests,
    is_failing_test,
)
from dbt.adapters.s3tables.lifecycle.audited_build import AuditedBuild, settle, settle_ended
from dbt.adapters.s3tables.lifecycle.build_config import LifecycleConfig
from dbt.adapters.s3tables.lifecycle.resumption import TakeUp
from dbt.adapters.s3tables.lifecycle.staged_family import read_parents

logger = AdapterLogger("s3tables")


class WriteAuditPublish:
    """Decides and settles the audited builds of one dbt invocation."""

    def __init__(
        self,
        warehouse_for: Callable[[BaseRelation], Warehouse],
        connection_name: Callable[[], str],
        graph_nodes: Callable[[], Mapping[str, Mapping[str, Any]] | None],
        relation_for: Callable[[Mapping[str, Any]], BaseRelation],
    ) -> None:
        # What a build writes through; the name of the calling thread's connection (dbt
        # names it after the node it runs: a test's starts with `test.`); the project's
        # nodes and a node's table, for the builds a later invocation takes up.
        self.warehouse_for = warehouse_for
        self.take_up = TakeUp(warehouse_for, connection_name, graph_nodes, relation_for)
        # A ref read by a test asks the ledger, which asks this adapter to take up builds.
        LEDGER.resume_with(self.resume_audit, settle)

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
        # A parent read through an ephemeral model is read all the same.
        waiting_on = LEDGER.unpublished(invocation, read_parents(model, nodes))
        if not model_config.audit_before_publish and not waiting_on:
            LEDGER.built_on_main(invocation, model_id)
            return None
        tests = gating_tests(nodes.values(), model_id, set(selected or ()))
        if not tests and not waiting_on:
            logger.info(
                f"{model['name']}: audit_before_publish: no test of it runs in this "
                "invocation, so it is written to main directly (`dbt build` audits it)"
            )
            LEDGER.built_on_main(invocation, model_id)
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

    def resume_audit(self, invocation: str, relation: BaseRelation, node: Any) -> list[StagedBuild]:
        """The builds an earlier invocation staged and did not publish that this
        invocation's test reading `node` takes up (`dbt retry`, `dbt test`): the test reads
        the staged data again, and once every such test has passed, the build publishes
        (with the builds staged behind it on its branch), so a retry never passes on
        `main` while the build it failed stays unpublished (see resumption.py)."""
        return self.take_up(invocation, relation, node)

    def invocation_ended(self) -> None:
        """dbt's invocation ends: every build still staged (a gating test errored and
        never reported, or did not run; or a parent did not publish) ends unpublished, each
        said in one line naming the model, its branch and the fix; its record says so, so
        that `dbt retry` (or `dbt test`) audits it again."""
        settle_ended(LEDGER.finish())

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
