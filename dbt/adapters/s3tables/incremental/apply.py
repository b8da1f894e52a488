"""The APPLY action: a run into an existing table. Schema and partition evolution and the
table's write properties are committed through PyIceberg as the plan says, then the
strategy's one statement (one commit), reported with the exact row counts of that commit;
a run whose rows are none commits nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtInternalError, DbtRuntimeError

from dbt.adapters.s3tables.errors import cleaned_up_after
from dbt.adapters.s3tables.incremental.commit_counts import (
    CommitCounts,
    IncrementalResponse,
    RowLineage,
    commit_counts,
    lineage_counts,
)
from dbt.adapters.s3tables.incremental.config import merge_update_columns, resolve_use_merge
from dbt.adapters.s3tables.incremental.custom_statement import custom_statements
from dbt.adapters.s3tables.incremental.key_span import (
    SpanColumn,
    span_aggregates,
    span_columns,
    span_condition,
    span_pass_sql,
)
from dbt.adapters.s3tables.incremental.key_uniqueness import CONFIG_KEY as UNIQUENESS_KEY
from dbt.adapters.s3tables.incremental.key_uniqueness import is_cardinality_violation
from dbt.adapters.s3tables.incremental.model_state import LAST_PROCESSED_VALUE
from dbt.adapters.s3tables.incremental.state_record import (
    ProcessedRows,
    greatest_processed_sql,
    record_state,
)
from dbt.adapters.s3tables.incremental.statement_parts import TARGET_ALIAS, IncrementalWrite
from dbt.adapters.s3tables.incremental.strategies import affected_partitions_sql
from dbt.adapters.s3tables.incremental.strategy_traits import Counting
from dbt.adapters.s3tables.incremental.warehouse import AnalysedQuery
from dbt.adapters.s3tables.keys.format_version import FORMAT_VERSION_PROPERTY
from dbt.adapters.s3tables.sql.text import quote

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from dbt.adapters.s3tables.catalogs.table_changes import TableState
    from dbt.adapters.s3tables.incremental.context import RunContext
    from dbt.adapters.s3tables.incremental.plan import RunPlan

logger = AdapterLogger("s3tables")


@dataclass(frozen=True)
class Statement:
    """The statement a run commits with (a custom strategy's macro may render several),
    and how it runs and is counted."""

    sql: tuple[str, ...]
    # How a snapshot summary gives this statement's counts.
    counted_as: Counting
    # Spark settings for this statement only.
    settings: dict[str, str]
    # A whole-table INSERT OVERWRITE removes and re-adds every row: no logical counts.
    rewrites_table: bool = False


@dataclass(frozen=True)
class Apply:
    """The executor of APPLY: `before` is the table's state the plan was made from."""

    run: RunContext
    plan: RunPlan
    before: TableState
    # The model's whole-history query (a plan that rebuilds the partitions upstream
    # changes reach).
    whole_history: AnalysedQuery | None = None

    def create_sql(self) -> str:
        raise DbtInternalError(f"{self.run.name}: an incremental write creates no table")

    def write(self) -> IncrementalResponse:
        """Schema evolution, the table's write properties, then the strategy's one
        statement (one commit), reported with the exact row counts of that commit."""
        run, settings = self.run, self.run.settings
        self._evolve_schema()
        self._evolve_partitioning()
        self._apply_write_mode()
        self._say_format_version_kept()
        target_columns = list(self.plan.target_columns)
        source_unique, reason = self._declared_unique()
        source = self._source()
        write = IncrementalWrite(
            target=str(run.table),
            source_sql=source.sql,
            target_columns=target_columns,
            source_columns=source.columns,
            unique_key=settings.unique_key,
            predicates=settings.predicates,
            update_columns=merge_update_columns(settings, target_columns),
            watermark_column=settings.watermark_column,
            delete_when=settings.delete_when,
            source_unique=source_unique,
            check_columns=settings.check_columns,
            valid_from=settings.valid_from,
            valid_to=settings.valid_to,
            event_time=settings.event_time,
            window_start=run.batch_start,
            window_end=run.batch_end,
        )
        if not settings.strategy.skipped_when_empty:
            return self._commit(write, reason)
        spanned = self._span_columns(source.schema, write)
        with self._cached_source(source.sql) as rows:
            recorded = self.before.properties.get(LAST_PROCESSED_VALUE)
            span: tuple[Any, ...] = ()
            if self.plan.counts_keys:
                empty, source_unique, reason, greatest, span = self._count_keys(
                    rows, source.schema, recorded, span_aggregates(spanned)
                )
                processed = ProcessedRows(rows, recorded, greatest)
            elif spanned:
                empty, span = self._span(rows, spanned)
                processed = ProcessedRows(rows, recorded)
            else:
                empty = self._is_empty(rows)
                processed = ProcessedRows(rows, recorded)
            if empty:
                # Iceberg would commit an empty snapshot: an hourly job would pile up
                # thousands a year. The run is a no-op; the table stays at its snapshot.
                logger.info(f"{run.name}: the model returned no rows; nothing committed")
                record_state(run, run.model.sql, self.before.properties, processed)
                if run.run_branch is not None:
                    run.run_branch.record_without_commit(run.read_records(self.before.snapshot_id))
                strategy = settings.strategy.name.upper()
                return IncrementalResponse(
                    _message=f"{strategy} 0 inserted, 0 updated, 0 deleted "
                    "(no rows, nothing committed)",
                    code=strategy,
                    rows_affected=0,
                    rows_inserted=0,
                    rows_updated=0,
                    rows_deleted=0,
                    snapshot_id=None,
                )
            key_span = span_condition(run.name, spanned, span, TARGET_ALIAS)
            if key_span:
                logger.debug(f"{run.name}: the statement reads the table's rows where {key_span}")
            write = replace(write, source_sql=rows, source_unique=source_unique, key_span=key_span)
            return self._commit(write, reason, processed)

    def _source(self) -> AnalysedQuery:
        """The rows the statement writes: the model's; or, when the plan rebuilds the
        partitions the upstream changes reach, the whole-history rows of those partitions
        (both queries read each upstream up to the snapshot pinned for the run)."""
        if not self.plan.rebuilds_changed_partitions:
            return self.run.model
        assert self.whole_history is not None, "use_whole_history() comes first"
        run = self.run
        logger.info(
            f"{run.name}: {run.settings.strategy.name} replaces whole partitions: those the "
            "upstream changes reach are written from the whole upstream (the model's query "
            "as on a first build), up to the same snapshot"
        )
        sql = affected_partitions_sql(
            self.whole_history.sql,
            run.model.sql,
            run.settings.partitioning,
            quote(run.table.warehouse.iceberg.config.name),
        )
        return AnalysedQuery(sql, self.whole_history.schema)

    def _evolve_schema(self) -> None:
        """Commit the planned schema changes with PyIceberg, before the data commit."""
        evolution, table = self.plan.evolution, self.run.table
        if evolution.empty:
            return
        widened = [(c.path, c.new) for c in evolution.changed]
        table.warehouse.iceberg.evolve_schema(table.namespace, table.name, evolution.added, widened)
        for line in evolution.describe():
            logger.info(f"{self.run.name}: schema evolved: {line}")

    def _evolve_partitioning(self) -> None:
        """Commit the partition spec change with PyIceberg (one metadata commit, after the
        schema's: a new field may read a column just added), so the data commit uses it."""
        change, table = self.plan.spec_change, self.run.table
        if change.empty:
            return
        table.warehouse.iceberg.evolve_partition_spec(
            table.namespace,
            table.name,
            list(change.removed),
            [(term.source, term.transform) for term in change.added],
        )
        logger.info(f"{self.run.name}: partition spec evolved: {change.describe()}")

    def _apply_write_mode(self) -> None:
        """Bring the table's row-level write properties in line with `write_mode` (and the
        catalog's table defaults the model does not set itself); a change is one metadata
        commit, made only when a setting changed."""
        run = self.run
        defaults = run.table.warehouse.iceberg.config.table_defaults()
        wanted = run.config.write_properties_to_apply(defaults)
        if run.table.set_properties(self.before.properties, wanted):
            logger.info(f"{run.name}: table write properties set: {wanted}")

    def _lineage_counts(self, after: TableState, counts: CommitCounts) -> CommitCounts:
        """On a format v3 table, the exact counts the summary could not give (copy-on-write
        rewrites), from the row lineage of the files the commit added."""
        if self.before.format_version < 3 or after.snapshot_id is None:
            return counts
        table = self.run.table
        lineage = table.warehouse.iceberg.added_rows_lineage(
            table.namespace, table.name, after.snapshot_id
        )
        if lineage is None:
            return counts
        return lineage_counts(RowLineage(*lineage), after.summary)

    def _say_format_version_kept(self) -> None:
        """A format version is set when a table is created: a table at another version
        than the model's `format_version` stays at its own, said with how to upgrade it
        (or, above it, with the model's fix)."""
        run = self.run
        defaults = run.table.warehouse.iceberg.config.table_defaults()
        wanted = run.config.table_properties(defaults).get(FORMAT_VERSION_PROPERTY)
        if wanted is not None and int(wanted) < self.before.format_version:
            logger.warning(
                f"{run.name}: its table stays at Iceberg format v{self.before.format_version},"
                f" above format_version {wanted} (Iceberg never lowers a table's format "
                f"version). Fix: set format_version {self.before.format_version} on the "
                "model, or drop the table to recreate it"
            )
        if wanted is not None and int(wanted) > self.before.format_version:
            logger.warning(
                f"{run.name}: its table stays at Iceberg format v{self.before.format_version}"
                f" (format_version {wanted} applies when a table is created). Upgrade it in "
                f"place, one metadata commit: dbt run-operation "
                f"s3tables_upgrade_format_version --args '{{table: "
                f"{run.table.namespace}.{run.table.name}, version: {wanted}}}'"
            )

    def _declared_unique(self) -> tuple[bool, str]:
        """Whether merge and delete+insert may use the model's rows without dedup because
        the key is declared unique, and why (empty: the strategy has no dedup)."""
        decision = self.plan.declared_uniqueness
        if decision is None:
            return False, ""
        if decision.source_unique or not self.plan.counts_keys:
            path = "used as they are" if decision.source_unique else "deduplicated per key"
            logger.debug(f"{self.run.name}: the model's rows are {path} ({decision.reason})")
        return decision.source_unique, decision.reason

    def _span_columns(self, schema: StructType, write: IncrementalWrite) -> list[SpanColumn]:
        """The key columns whose span bounds the target rows the statement reads (none
        for a strategy that matches no rows by key)."""
        if not self.run.settings.strategy.prunes_by_key_span:
            return []
        keys = self.run.settings.unique_key
        targets = {key: write.target_column(key) for key in keys}
        return span_columns(schema, self.before.schema, keys, targets)

    def _span(self, rows: str, spanned: list[SpanColumn]) -> tuple[bool, tuple[Any, ...]]:
        """Whether the run's (cached) rows are none, and their key span's values: one pass."""
        row = self.run.table.warehouse.fetch(span_pass_sql(rows, spanned))[0]
        return int(row[0]) == 0, tuple(row[1:])

    def _count_keys(
        self, rows: str, schema: StructType, recorded: str | None, span: list[str]
    ) -> tuple[bool, bool, str, str | None, tuple[Any, ...]]:
        """For a model whose rows (of `schema`) are counted per key: whether the run's
        (cached) rows are none, whether its statement may use them as they are (no key
        repeats; a key repeating is said, and the rows are deduplicated), why, with a
        `watermark_column` recorded before, the value to record next, and the values of
        the `span` aggregates (the same pass)."""
        run = self.run
        column = run.settings.watermark_column
        aggregate = greatest_processed_sql(run, column, recorded) if column else None
        also = (column, aggregate) if column and aggregate else None
        counts = run.count_keys(rows, schema, first_build=False, also=also, span=span)
        if counts.repeated_keys:
            reason = f"{counts.repeated_keys} key(s) repeat in this run's rows"
        else:
            reason = "no key repeats in this run's rows, counted"
        path = "deduplicated per key" if counts.repeated_keys else "used as they are"
        logger.debug(f"{self.run.name}: the model's rows are {path} ({reason})")
        return counts.rows == 0, not counts.repeated_keys, reason, counts.also, counts.span

    @contextmanager
    def _cached_source(self, source_sql: str) -> Iterator[str]:
        """The rows `source_sql` gives, computed once into Spark's cache (memory, spilling to
        disk) by the first query that reads them, as a query over the cached view: the
        pass that counts their keys (or looks for one row) fills it, and the statement
        reads it, so the model is evaluated once. Dropping the view drops its cache too
        (over thrift, with the server session when no statement follows)."""
        name = f"dbt_source_{uuid.uuid4().hex}"
        self.run.execute_write(f"CACHE LAZY TABLE {quote(name)} AS {source_sql}", data_write=False)
        engine = self.run.table.warehouse.engine
        with cleaned_up_after(lambda: engine.drop_temp_view(name), f"Dropping the view {name}"):
            yield f"SELECT * FROM {quote(name)}"

    def _is_empty(self, rows_sql: str) -> bool:
        return not self.run.table.warehouse.fetch(f"SELECT 1 FROM ({rows_sql}) LIMIT 1")

    def _statement(self, write: IncrementalWrite) -> Statement:
        """The strategy's one statement: its MERGE or, without MERGE, its fallback; on a
        table holding files of an earlier partition spec, its statement across specs
        (insert_overwrite's dynamic overwrite would leave their rows beside the new ones)."""
        run, warehouse = self.run, self.run.table.warehouse
        strategy = run.settings.strategy
        builder, fallback = strategy.statement, strategy.fallback
        counted_as, settings = strategy.counted_as, dict(strategy.statement_settings)
        if strategy.across_specs is not None and warehouse.iceberg.holds_files_of_other_specs(
            run.table.namespace, run.table.name
        ):
            logger.info(
                f"{run.name}: the table holds files written under an earlier partition "
                "spec, which Iceberg's dynamic overwrite would leave in place: the new "
                "rows' partitions are replaced by their partition values instead"
            )
            builder, fallback = strategy.across_specs
            write = replace(
                write,
                partitioning=run.settings.partitioning,
                function_catalog=quote(warehouse.iceberg.config.name),
            )
            counted_as, settings = Counting.ROWS_REPLACED, {}
        assert builder is not None, "a built-in strategy has its statement"
        if fallback is not None:
            use_merge, reason = resolve_use_merge(
                run.name, run.settings.use_merge, warehouse.engine.has_iceberg_extensions()
            )
            path = "MERGE INTO" if use_merge else "INSERT OVERWRITE of the whole table"
            logger.info(f"{run.name}: {strategy.name} writes with {path} ({reason})")
            if not use_merge:
                return Statement((fallback(write),), counted_as, settings, rewrites_table=True)
        return Statement((builder(write),), counted_as, settings)

    def _commit(
        self, write: IncrementalWrite, reason: str, processed: ProcessedRows | None = None
    ) -> IncrementalResponse:
        """The strategy's one statement (one commit) and the exact counts of that commit.
        `reason`: why the rows were taken as unique per key; `processed`: the rows the
        statement read (the cached source)."""
        strategy = self.run.settings.strategy
        if strategy.custom_macro is None:
            return self._committed(self._statement(write), write, reason, processed)
        with custom_statements(self.run, write) as rendered:
            custom = Statement(
                tuple(rendered), strategy.counted_as, dict(strategy.statement_settings)
            )
            return self._committed(custom, write, reason, processed)

    def _committed(
        self,
        statement: Statement,
        write: IncrementalWrite,
        reason: str,
        processed: ProcessedRows | None,
    ) -> IncrementalResponse:
        """Run `statement`, record the run's state with its commit, and report that
        commit's exact counts (unknown after several commits). Through a run branch
        (run_branch.py), the commit reaches main only while main is at the run's base."""
        run = self.run
        strategy = run.settings.strategy.name
        last = len(statement.sql) - 1
        after = self._write_and_record(statement, write, reason, processed)
        committed = after.snapshot_id != self.before.snapshot_id
        counts = (
            CommitCounts(None, None, None)
            if statement.rewrites_table or last > 0
            else commit_counts(
                statement.counted_as,
                after.summary if committed else None,
                deletes_rows=run.settings.delete_when is not None,
            )
        )
        unknown = None in (counts.inserted, counts.updated, counts.deleted)
        if committed and not statement.rewrites_table and last == 0 and unknown:
            counts = self._lineage_counts(after, counts)
        logger.debug(f"{run.name}: {strategy} committed {after.snapshot_id}")
        return IncrementalResponse(
            _message=f"{strategy.upper()} {counts.inserted} inserted, "
            f"{counts.updated} updated, {counts.deleted} deleted",
            code=strategy.upper(),
            rows_affected=sum(n or 0 for n in (counts.inserted, counts.updated, counts.deleted)),
            rows_inserted=counts.inserted,
            rows_updated=counts.updated,
            rows_deleted=counts.deleted,
            snapshot_id=after.snapshot_id if committed else None,
        )

    def _write_and_record(
        self,
        statement: Statement,
        write: IncrementalWrite,
        reason: str,
        processed: ProcessedRows | None,
    ) -> TableState:
        """The statement's commit and the run's state, on main, or through the run's
        branch published from its base (written again from main's new snapshot after
        commits that changed no row; refused as a conflict after any other). The table's
        state after the commit."""
        run, branch = self.run, self.run.run_branch

        def write_and_record() -> TableState:
            self._execute(statement, write, reason)
            after = run.table.state()
            record_state(run, run.model.sql, after.properties, processed)
            return after

        if branch is None:
            return write_and_record()
        return branch.written_through(
            write_and_record,
            lambda after: run.read_records(after.snapshot_id),
            lambda after: after.loaded,
        )

    def _execute(self, statement: Statement, write: IncrementalWrite, reason: str) -> None:
        """The statement's SQL, the last one the data write (with the node's read tags)."""
        run = self.run
        last = len(statement.sql) - 1
        with run.table.warehouse.engine.settings(statement.settings):
            try:
                for index, sql in enumerate(statement.sql):
                    # Only the last commits the model's rows with the node's read tags.
                    run.execute_write(sql, data_write=index == last)
            except Exception as error:
                if write.source_unique and is_cardinality_violation(error):
                    raise DbtRuntimeError(
                        f"{run.name}: the model's rows hold a `unique_key` value more than "
                        "once, matching one table row several times, though the key was "
                        f"taken as unique ({reason}); nothing was committed. "
                        f"Fix: make the rows unique per key, or set `{UNIQUENESS_KEY}: "
                        "false` (the rows are then deduplicated per key)"
                    ) from error
                raise
