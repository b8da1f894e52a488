"""What every action of one incremental run works with (`RunContext`): the model's
config, its analysed query, the table it writes; and what several actions share: the
queries a table is created from, and the count of the model's rows per key.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.s3tables.incremental.key_uniqueness import (
    KeyCounts,
    collected_key_columns,
    collected_keys_sql,
    counted_keys,
    key_counts,
    key_counts_sql,
)
from dbt.adapters.s3tables.incremental.plan import table_diff
from dbt.adapters.s3tables.sql.text import quote
from dbt.adapters.s3tables.sql.types import spark_type_name, typed_query

if TYPE_CHECKING:
    from pyiceberg.schema import Schema
    from pyspark.sql.types import StructType

    from dbt.adapters.s3tables.incremental.config import IncrementalConfig, ModelBuildConfig
    from dbt.adapters.s3tables.incremental.run_branch import RunBranch
    from dbt.adapters.s3tables.incremental.strategy_traits import StrategyMacro
    from dbt.adapters.s3tables.incremental.warehouse import AnalysedQuery, RunTable

logger = AdapterLogger("s3tables")

# Where a write-audit-publish build keeps the state a run records, for the publish:
# properties to set, and properties to remove.
KeepState = Callable[[dict[str, str], tuple[str, ...]], None]
# What the run read of its upstreams, as table properties bound to the model's snapshot
# given (upstream_changes.py); asked once, by the commit that records them.
ReadRecords = Callable[[int | None], dict[str, str]]


def no_reads(on: int | None) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class RunContext:
    """One run's model and table."""

    config: ModelBuildConfig
    settings: IncrementalConfig
    table: RunTable
    # The model's SQL, as analysed once.
    model: AnalysedQuery
    # Write-audit-publish: the state the run records is handed here for the publish
    # (properties are table-wide: main must not say it holds data it does not have yet).
    keep_state: KeepState | None = None
    # A microbatch run's window.
    batch_start: str | None = None
    batch_end: str | None = None
    # A custom strategy's macro, from dbt's context (dbt's custom-strategy hook).
    strategy_macro: StrategyMacro | None = None
    # The branch the run writes through when its rows depend on the table's state
    # (run_branch.py), and what the run read of its upstreams, recorded with its publish.
    run_branch: RunBranch | None = None
    read_records: ReadRecords = no_reads
    # The model's node id (its own commits, a pre-hook's, carry it).
    node: str = ""
    # False in dbt's `--empty` and `--sample` runs: their rows are not what a run of every
    # row writes, so the run records no state (last_processed_value() stays) and no read.
    records_state: bool = True
    # The statements the run's own writes executed, in order: what dbt's target/run file
    # of the model shows (a create statement writes its own, as dbt's `main` statement).
    written_statements: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.settings.model_name

    def execute_write(self, sql: str, data_write: bool = True) -> None:
        """Run one of the run's writing statements, recorded for target/run. A data write
        (not a cache) commits the model's rows: its commit carries the node's tags (what
        the build read of its upstreams, see upstream_changes.py)."""
        self.written_statements.append(sql)
        if data_write:
            self.table.warehouse.engine.tag_next_write()
        self.table.warehouse.execute(sql)

    def count_keys(
        self,
        rows_sql: str,
        schema: StructType,
        first_build: bool,
        also: tuple[str, str] | None = None,
        span: Sequence[str] = (),
    ) -> KeyCounts:
        """How the rows (of `schema`) spread over `unique_key` values (only the key
        columns are read, and `also`'s column, whose aggregate comes in the same pass, as
        do the `span` aggregates of key columns); keys that repeat are said, with what
        the run does about them."""
        settings = self.settings
        # A first build's rows are not cached: a collection would evaluate the model's
        # query once more whenever they are too many to be counted from it.
        counts = None if first_build else self._counted_in_process(rows_sql, schema, also, span)
        if counts is None:
            sql = key_counts_sql(rows_sql, settings.unique_key, also, span)
            counts = key_counts(self.table.warehouse.fetch(sql)[0], len(span))
        if counts.repeated_keys:
            logger.warning(
                counts.warning(
                    self.name, settings.strategy.name, settings.watermark_column, first_build
                )
            )
        return counts

    def _counted_in_process(
        self,
        rows_sql: str,
        schema: StructType,
        also: tuple[str, str] | None,
        span: Sequence[str],
    ) -> KeyCounts | None:
        """The counts (and `also`'s aggregate) from the rows' key values collected in one
        Spark job and counted here, or None where Spark counts them (key_uniqueness.py
        says when)."""
        warehouse, unique_key = self.table.warehouse, self.settings.unique_key
        columns = collected_key_columns(schema, unique_key)
        if columns is None:
            return None
        sql = collected_keys_sql(rows_sql, unique_key, columns, also, span)
        return counted_keys(warehouse.fetch_rows(sql)[0], len(span))

    def typed(self, query: AnalysedQuery) -> str:
        """The query with its untyped (NULL) columns cast to string. A contract's query
        arrives already cast to the contract's types."""
        if self.config.contract_enforced:
            return query.sql
        return typed_query(self.name, query.sql, list(query.schema.fields))

    def build_sql(self, sql: str) -> str:
        """The query a new table is created from (scd2 adds its history columns)."""
        settings = self.settings
        if not settings.strategy.keeps_history:
            return sql
        return (
            f"SELECT *, current_timestamp() AS {quote(settings.valid_from)}, "
            f"CAST(NULL AS TIMESTAMP) AS {quote(settings.valid_to)}"
            f" FROM (\n{sql}\n) AS dbt_scd2_source"
        )

    def replacement_sql(self, query: AnalysedQuery, table: Schema, empty: bool = False) -> str:
        """The query a replacing `on_schema_change` mode rebuilds the table (of schema
        `table`) from: the query's rows (none if `empty`) plus, NULL-filled, every column
        the model no longer returns, so that no mode ever drops a column."""
        kept = table_diff(self.settings, table, query.schema).removed
        if kept:
            logger.warning(
                f"{self.name}: column(s) {', '.join(kept)} no longer returned by the model "
                "are kept in the new table (this adapter never drops a column), NULL-filled"
            )
        nulls = "".join(
            f", CAST(NULL AS {spark_type_name(table.find_field(c).field_type)}) AS {quote(c)}"
            for c in kept
        )
        where = " WHERE false" if empty else ""
        built = self.build_sql(self.typed(query))
        return f"SELECT *{nulls} FROM (\n{built}\n) AS dbt_model_rows{where}"
