"""`IncrementalTable`: what the macros ask about one incremental model's table.

The adapter returns one per call (`adapter.incremental(this)`); it starts the model's run
(`IncrementalRun`), renders the model as on a first build, and reads or drops the state
the model's runs keep as table properties (`model_state`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from dbt.adapters.s3tables.errors import fixes_dbt_honours
from dbt.adapters.s3tables.incremental.model_state import LAST_PROCESSED_VALUE, state_keys
from dbt.adapters.s3tables.incremental.run import (
    IncrementalRun,
    render_as_first_build,
    renders_as_first_build,
)
from dbt.adapters.s3tables.incremental.run_bases import RunBases, run_key
from dbt.adapters.s3tables.incremental.warehouse import Warehouse

if TYPE_CHECKING:
    from dbt.adapters.base.relation import BaseRelation

    from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
    from dbt.adapters.s3tables.incremental.config import ModelBuildConfig
    from dbt.adapters.s3tables.incremental.strategy_traits import StrategyMacro


class AuditBranch(Protocol):
    """An audited build (lifecycle's `AuditedBuild`), as a run writing under it sees it."""

    @property
    def relation(self) -> BaseRelation: ...

    def keep_properties(self, wanted: dict[str, str], remove: tuple[str, ...] = ()) -> None: ...


class IncrementalTable:
    """One incremental model's table (`target`) in its catalog (`iceberg`). `warehouse`
    opens what its writes go through (the thread's connection: started on first use);
    `find_relation` is dbt's lookup (through its relation cache); `reads_upstream_changes`
    says whether a model (by node id) reads only its upstreams' changes this run."""

    def __init__(
        self,
        target: BaseRelation,
        iceberg: IcebergCatalog,
        warehouse: Callable[[], Warehouse],
        find_relation: Callable[[Any, str, str], BaseRelation | None],
        reads_upstream_changes: Callable[[str], bool] = lambda model_id: False,
        bases: RunBases | None = None,
        read_records: Callable[[str, int | None], dict[str, str]] = lambda model_id, on: {},
    ) -> None:
        self.target = target
        self.iceberg = iceberg
        self.warehouse = warehouse
        self.find_relation = find_relation
        self.reads_upstream_changes = reads_upstream_changes
        self.bases = bases
        self.read_records = read_records
        self.namespace, self.name = str(target.schema), str(target.identifier)

    def run(
        self,
        model_config: ModelBuildConfig,
        model_sql: str,
        existing: BaseRelation | None,
        full_refresh: bool,
        batch_start: str | None = None,
        batch_end: str | None = None,
        audit: AuditBranch | None = None,
        model_node: Mapping[str, Any] | None = None,
        strategy_macro: StrategyMacro | None = None,
        records_state: bool = True,
    ) -> IncrementalRun:
        """This run of the model, decided and checked (nothing written yet); the
        materialization executes it (see run.py). Under an `audit`, it writes to the
        audit branch and keeps its recorded state for the publish. `strategy_macro`: a
        custom strategy's macro, which renders its statement. `records_state`: false in
        dbt's `--empty` and `--sample` runs, which record no state."""
        model_id = str((model_node or {}).get("unique_id") or "")
        with fixes_dbt_honours(model_node):
            return IncrementalRun(
                model_config,
                audit.relation if audit else self.target,
                model_sql,
                self.warehouse(),
                keep_state=audit.keep_properties if audit else None,
                table_exists=existing is not None and not existing.is_view,
                full_refresh=bool(full_refresh),
                batch_start=batch_start,
                batch_end=batch_end,
                model_node=model_node,
                strategy_macro=strategy_macro,
                reads_upstream_changes=self.reads_upstream_changes(model_id),
                bases=self.bases,
                read_records=lambda on: self.read_records(model_id, on),
                records_state=records_state,
            )

    def render_as_first_build(self, render: Callable[[str], str], raw_code: str) -> str:
        """The model's SQL rendered with is_incremental() false: its whole-history query."""
        return render_as_first_build(str(self.target), lambda: render(raw_code))

    def renders_as_first_build(self) -> bool:
        return renders_as_first_build(str(self.target))

    def forget_state(self) -> None:
        """A `table` build replaces the table but keeps its properties (Iceberg's REPLACE
        does): drop the incremental state, so a later incremental run starts afresh."""
        keys = state_keys(self.iceberg.table_state(self.namespace, self.name).properties)
        if keys:
            self.iceberg.set_properties_if_changed(self.namespace, self.name, {}, keys)

    def last_processed_value(self, model: Mapping[str, Any] | None = None) -> str | None:
        """The greatest `watermark_column` value of the last successful run, or None. The
        run of `model` reads its table's state (its base is noted, see run_bases.py)."""
        if self.find_relation(self.target.database, self.namespace, self.name) is None:
            return None
        state = self.iceberg.table_state(self.namespace, self.name)
        if model is not None and self.bases is not None:
            self.bases.note(run_key(model), "last_processed_value()", lambda: state.snapshot_id)
        return state.properties.get(LAST_PROCESSED_VALUE)

    def reads_its_state(self, model: Mapping[str, Any]) -> None:
        """is_incremental() said true while `model`'s SQL rendered: its incremental filter
        may read the table, so its run's base is the table's snapshot now."""
        if self.bases is not None:
            self.bases.note(
                run_key(model),
                "is_incremental()",
                lambda: self.iceberg.table_state(self.namespace, self.name).snapshot_id,
            )
