"""Table maintenance as it runs: asked by `s3tables_maintain` (a run-operation), or after a
successful build whose table crossed a threshold of its `maintenance` config, or after the
publish of an audited build. What to run is decided in maintenance.py and
maintenance_config.py; this runs it and logs the table's health before and after."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.snapshots import TableHealth
from dbt.adapters.s3tables.incremental.warehouse import Warehouse
from dbt.adapters.s3tables.lifecycle.audited_build import AuditedBuild
from dbt.adapters.s3tables.lifecycle.build_config import LifecycleConfig
from dbt.adapters.s3tables.lifecycle.maintenance import (
    MaintenanceOptions,
    describe_change,
    operations_in_order,
    parse_maintenance_options,
    procedure_calls,
)

logger = AdapterLogger("s3tables")


class TableMaintainer:
    """Runs maintenance procedures on tables through dbt's statement path."""

    def __init__(
        self,
        warehouse_for: Callable[[BaseRelation], Warehouse],
        query: Callable[[str], list[dict[str, Any]]],
    ) -> None:
        # The table's catalog (health reads); a statement's result rows by column name.
        self.warehouse_for = warehouse_for
        self.query = query

    def maintain_table(self, relation: BaseRelation, arguments: dict[str, Any]) -> str:
        """Run the maintenance `arguments` ask for on the table (see maintenance.py); the
        line logged: its health before and after, or why nothing was done."""
        options = parse_maintenance_options(arguments)
        iceberg = self.warehouse_for(relation).iceberg
        left_to_catalog = self._left_to_catalog(relation, iceberg, options)
        if left_to_catalog:
            return left_to_catalog
        before = iceberg.table_health(str(relation.schema), str(relation.identifier))
        return self._run_maintenance(relation, iceberg, options, before)

    def maintain_after_build(
        self, relation: BaseRelation, model_config: LifecycleConfig
    ) -> str | None:
        """After a successful build of a table or incremental model, a seed or a snapshot:
        run the maintenance of its `maintenance` config (see maintenance_config.py) when
        the table's health crosses one of its thresholds. Returns the line logged at info
        level, if any."""
        settings = model_config.maintenance
        if settings is None:
            return None
        iceberg = self.warehouse_for(relation).iceberg
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
                rows = self.query(sql)
                logger.debug(f"{relation} {operation}: {rows}")
                if operation == "remove_orphan_files":
                    orphans += len(rows)
        after = iceberg.table_health(namespace, name)
        removed = orphans if "remove_orphan_files" in options.operations else None
        message = describe_change(str(relation), before, after, removed, because)
        logger.info(message)
        return message

    def after_build(
        self, relation: BaseRelation, model_config: LifecycleConfig, audit: AuditedBuild | None
    ) -> None:
        """The end of a successful build: a staged (audited) build waits for its tests,
        and the table's maintenance (see maintain_after_build) follows its publish, since
        a maintenance commit on main before it would stop main's fast-forward."""
        if audit is None:
            self.maintain_after_build(relation, model_config)
            return
        audit.after_publish = lambda: self.maintain_after_build(relation, model_config)
        audit.staged()
