"""The adapter's Iceberg-native safety features, one mixin of `S3TablesAdapter`: table
maintenance (as a run-operation and after a build), write-audit-publish and run-level undo.
Each decides in its own module (maintenance.py, maintenance_config.py, audit.py,
audited_build.py, run_undo.py); here dbt's macros reach them, through the adapter's
catalogs (`iceberg_for`), statements (`execute`) and model configs.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from dbt.adapters.base.meta import AdapterMeta, available
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError
from dbt_common.invocation import get_invocation_id
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

from dbt.adapters.s3tables.catalogs.snapshots import TableHealth
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
from dbt.adapters.s3tables.lifecycle.maintenance import (
    MaintenanceOptions,
    describe_change,
    operations_in_order,
    parse_maintenance_options,
    procedure_calls,
)
from dbt.adapters.s3tables.lifecycle.undo import plan_undo, undo_sql

if TYPE_CHECKING:
    from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
    from dbt.adapters.s3tables.model_config import ModelConfig

logger = AdapterLogger("s3tables")


class IcebergSafety(metaclass=AdapterMeta):
    """Mixed into S3TablesAdapter, whose `iceberg_for`, `execute`,
    `catalog_database`, `cache_dropped`, `_relation_from_catalog` and `_warehouse` these
    use; dbt's adapter metaclass makes the `@available` methods reach its Jinja context."""

    # --- table maintenance ---

    @available
    def maintain_table(self, relation: BaseRelation, arguments: dict[str, Any]) -> str:
        """Run the maintenance `arguments` ask for on the table (see maintenance.py); the
        line logged: its health before and after, or why nothing was done."""
        options = parse_maintenance_options(arguments)
        iceberg = self.iceberg_for(relation)
        left_to_catalog = self._left_to_catalog(relation, iceberg, options)
        if left_to_catalog:
            return left_to_catalog
        before = iceberg.table_health(str(relation.schema), str(relation.identifier))
        return self._run_maintenance(relation, iceberg, options, before)

    @available
    def after_build(
        self, relation: BaseRelation, model_config: ModelConfig, audit: AuditedBuild | None
    ) -> None:
        """The end of a successful build: a staged (audited) build waits for its tests,
        and the table's maintenance (see maintain_after_build) follows its publish, since
        a maintenance commit on main before it would stop main's fast-forward."""
        if audit is None:
            self.maintain_after_build(relation, model_config)
            return
        audit.after_publish = lambda: self.maintain_after_build(relation, model_config)
        audit.staged()

    @available
    def maintain_after_build(self, relation: BaseRelation, model_config: ModelConfig) -> str | None:
        """After a successful build of a table or incremental model, a seed or a snapshot:
        run the maintenance of its `maintenance` config (see maintenance_config.py) when
        the table's health crosses one of its thresholds. Returns the line logged at info
        level, if any."""
        settings = model_config.maintenance
        if settings is None:
            return None
        iceberg = self.iceberg_for(relation)
        left_to_catalog = self._left_to_catalog(relation, iceberg, settings.options)
        if left_to_catalog:
            return left_to_catalog
        health = iceberg.table_health(str(relation.schema), str(relation.identifier))
        crossed = settings.crossed(health)
        if not crossed:
            logger.debug(f"{relation}: no maintenance threshold crossed ({health})")
            return None
        return self._run_maintenance(
            relation, iceberg, settings.options, health, because=", ".join(crossed)
        )

    def _left_to_catalog(
        self, relation: BaseRelation, iceberg: IcebergCatalog, options: MaintenanceOptions
    ) -> str | None:
        """The line logged when the table's catalog maintains its tables itself and
        `force` is not set (nothing is to be done), else None."""
        if not iceberg.config.kind.maintains_its_tables or options.force:
            return None
        message = (
            f"{relation}: catalog `{iceberg.config.name}` ({iceberg.config.catalog_type}) "
            "maintains its own tables (compaction, snapshot expiry, unreferenced file "
            "removal are settings of the bucket and table); nothing done. Pass "
            "`force: true` to run the maintenance all the same"
        )
        logger.info(message)
        return message

    def _run_maintenance(
        self,
        relation: BaseRelation,
        iceberg: IcebergCatalog,
        options: MaintenanceOptions,
        before: TableHealth,
        because: str | None = None,
    ) -> str:
        """Run the procedures of `options` on the table; logs and returns one line: its
        health `before` and after."""
        namespace, name = str(relation.schema), str(relation.identifier)
        orphans = 0
        for operation in operations_in_order(options):
            now = datetime.now(timezone.utc)
            for sql in procedure_calls(
                iceberg.config.name, namespace, name, operation, options, now
            ):
                _, result = self.execute(sql, fetch=True)
                rows = [dict(zip(result.column_names, row, strict=True)) for row in result.rows]
                logger.debug(f"{relation} {operation}: {rows}")
                if operation == "remove_orphan_files":
                    orphans += len(rows)
        after = iceberg.table_health(namespace, name)
        removed = orphans if "remove_orphan_files" in options.operations else None
        message = describe_change(str(relation), before, after, removed, because)
        logger.info(message)
        return message

    # --- write-audit-publish (see audit.py, audited_build.py) ---

    @available
    def audit_build(
        self,
        model: Any,
        model_config: ModelConfig,
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
            return staged.payload  # a later batch of the same microbatch build
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
            warehouse=self._warehouse(target),
            gating_tests=tests,
            waiting_on=waiting_on,
            # The model's table properties (a replace would set them), at the publish.
            properties=model_config.table_properties(
                self.iceberg_for(target).config.table_defaults()
            ),
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
        reader = self.connections.get_if_exists()
        reader_id = str(reader.name) if reader is not None and reader.name else ""
        config = getattr(node, "config", None)
        audited = config.get("audit_before_publish") if hasattr(config, "get") else None
        if not reader_id.startswith("test.") or str(audited).lower() != "true":
            return None
        try:
            branches = self.iceberg_for(relation).branches(
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
            warehouse=self._warehouse(relation),
            gating_tests=tests,
            waiting_on=set(),
            properties=dict(record.set_properties),
            removed_properties=set(record.remove_properties),
            dropped_columns=list(record.drop_columns),
            record=record,
            resumed=True,
        )
        return StagedBuild(unique_id, name, record.branch, set(tests), set(), payload=audited_build)

    @available
    def reading_main(self, sql: str) -> str:
        """A view's query reading its parents' main even where a parent is still staged
        on a branch: a view stores its query, and the branch goes away at the publish
        (from then on the view shows the published data)."""
        for build in LEDGER.staged_builds(get_invocation_id()):
            audited: AuditedBuild = build.payload
            sql = sql.replace(str(audited.relation), str(audited.target))
        return sql

    @available
    def audit_test_done(self, test: Any, result: Any) -> None:
        """A test finished (its result table: failures, should_warn, should_error): the
        staged builds it gates publish, or stay staged, as it settles."""
        rows = list(result["table"].rows) if result and result.get("table") else []
        severity = str((test.get("config") or {}).get("severity") or "error")
        failed = is_failing_test(severity, rows[0] if len(rows) == 1 else None)
        invocation = get_invocation_id()
        depends_on = (test.get("depends_on") or {}).get("nodes") or []
        settle(invocation, LEDGER.test_done(invocation, test["unique_id"], depends_on, failed))

    # --- run-level undo ---

    @available
    def undo_run(
        self, invocation_id: str, schemas: list[list[Any]], dry_run: bool = False
    ) -> list[str]:
        """Every table in `schemas` (`[database, schema]` pairs) that run `invocation_id`
        changed, back to its state before the run (see run_undo.py); all refused, naming
        each table, if any changed since. The lines logged, one per table."""
        steps = []
        for database, schema in {(self.catalog_database(d), str(s)) for d, s in schemas}:
            iceberg = self.iceberg_for(database=database)
            if not iceberg.namespace_exists(schema):
                continue
            for entry in iceberg.list_relations(schema):
                if entry.kind != "table":
                    continue
                relation = self._relation_from_catalog(entry, database)
                log, current = iceberg.snapshot_log(schema, entry.name)
                step = plan_undo(str(relation), log, current, invocation_id)
                if step is not None:
                    steps.append((iceberg.config.name, relation, step))
        if not steps:
            raise DbtRuntimeError(
                f"Run {invocation_id} changed no table of this project's schemas (or every "
                "snapshot it made has expired since). Fix: take "
                "the invocation_id from that run's target/run_results.json (metadata); runs "
                "over `method: thrift` or `method: connect` are not tagged"
            )
        refused = [step for _, _, step in steps if step.action == "refuse"]
        if refused:
            # Nothing is done: the other tables' steps are only what the undo would do.
            for _, _, step in steps:
                if step.action != "refuse":
                    logger.info(f"not done (the undo is refused): {step.describe()}")
            raise DbtRuntimeError(
                f"Undo of run {invocation_id} refused, nothing changed: "
                + "; ".join(f"{step.describe()}. Fix: {step.fix}" for step in refused)
            )
        lines = []
        for catalog, relation, step in steps:
            line = step.describe()
            if not dry_run:
                sql = undo_sql(catalog, str(relation.schema), str(relation.identifier), step)
                if sql is not None:
                    self.execute(sql)
                if step.action == "drop":
                    self.cache_dropped(relation)
            logger.info(("would undo: " if dry_run else "undone: ") + line)
            lines.append(line)
        return lines
