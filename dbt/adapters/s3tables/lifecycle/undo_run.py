"""Run-level undo as it runs (`s3tables_undo_run`): every table of the project's schemas
that a run changed goes back to its state before the run, or the whole undo is refused,
naming each table and why. What to do per table is planned in undo.py (pure)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.relations import CatalogRelation
from dbt.adapters.s3tables.lifecycle.undo import (
    UndoStep,
    is_run_state,
    plan_undo,
    restored_state,
    undo_sql,
)

logger = AdapterLogger("s3tables")


class RunUndo:
    """Undoes one dbt run across the catalogs of the project's schemas."""

    def __init__(
        self,
        catalog_database: Callable[[object], str | None],
        iceberg_for_database: Callable[[str | None], IcebergCatalog],
        relation_from_catalog: Callable[[CatalogRelation, str | None], BaseRelation],
        execute: Callable[[str], Any],
        cache_dropped: Callable[[BaseRelation], None],
    ) -> None:
        self.catalog_database = catalog_database
        self.iceberg_for_database = iceberg_for_database
        self.relation_from_catalog = relation_from_catalog
        self.execute = execute
        self.cache_dropped = cache_dropped

    def undo_run(
        self, invocation_id: str, schemas: list[list[Any]], dry_run: bool = False
    ) -> list[str]:
        """Every table in `schemas` (`[database, schema]` pairs) that run `invocation_id`
        changed, back to its state before the run (see undo.py); all refused, naming
        each table, if any changed since. The lines logged, one per table."""
        steps = []
        for database, schema in {(self.catalog_database(d), str(s)) for d, s in schemas}:
            iceberg = self.iceberg_for_database(database)
            if not iceberg.namespace_exists(schema):
                continue
            for entry in iceberg.list_relations(schema):
                if entry.kind != "table":
                    continue
                relation = self.relation_from_catalog(entry, database)
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
        states = {
            str(relation): self._state_before(relation, step)
            for _, relation, step in steps
            if step.action == "restore"
        }
        refused = [step for _, _, step in steps if step.action == "refuse"]
        refused += [
            replace(
                step,
                action="refuse",
                reason="its state before the run (last_processed_value(), its records of "
                "what it read) is no longer in its metadata log",
                fix="rebuild the model (`--full-refresh`) instead; a table keeps "
                "`write.metadata.previous-versions-max` (100 by default) earlier metadata files",
            )
            for _, relation, step in steps
            if step.action == "restore" and states[str(relation)] is None
        ]
        if refused:
            # Nothing is done: the other tables' steps are only what the undo would do.
            for _, _, step in steps:
                if step.action != "refuse" and step not in refused:
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
                state = states.get(str(relation))
                if step.action == "restore" and state is not None:
                    line += self._restore_state(relation, state)
            logger.info(("would undo: " if dry_run else "undone: ") + line)
            lines.append(line)
        return lines

    def _iceberg(self, relation: BaseRelation) -> IcebergCatalog:
        return self.iceberg_for_database(self.catalog_database(relation.database))

    def _state_before(self, relation: BaseRelation, step: UndoStep) -> dict[str, str] | None:
        """The table's properties just before the run's first commit to it (None: its
        metadata log no longer reaches back, and it keeps run state that may be the
        run's). A table that keeps no run state has none to set back."""
        iceberg = self._iceberg(relation)
        namespace, name = str(relation.schema), str(relation.identifier)
        before = iceberg.properties_before(namespace, name, step.run_started_ms)
        if before is not None:
            return before
        current = iceberg.table_state(namespace, name).properties
        return None if any(is_run_state(k) for k in current) else {}

    def _restore_state(self, relation: BaseRelation, before: dict[str, str]) -> str:
        """After a restore: the table's run state set back to `before` the run (what the
        undone run recorded, and its reads, are gone: the next run reads those ranges
        again); what the line says of it."""
        iceberg = self._iceberg(relation)
        namespace, name = str(relation.schema), str(relation.identifier)
        current = iceberg.table_state(namespace, name).properties
        wanted, remove = restored_state(current, before)
        if not wanted and not remove:
            return ""
        iceberg.set_properties_if_changed(namespace, name, wanted, remove)
        keys = sorted({*wanted, *remove})
        return f"; its state as before the run ({', '.join(keys)}) set back"
