"""What an incremental run reads and writes through: the `Warehouse` (engine, dbt's
statement path, Iceberg catalog), the queries the engine analysed (`AnalysedQuery`), and
the `RunTable`, the one table a run writes (possibly its audit branch) with the metadata
reads and property commits every action makes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dbt.adapters.base.relation import BaseRelation
    from pyspark.sql.types import StructType

    from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
    from dbt.adapters.s3tables.catalogs.table_changes import TableState
    from dbt.adapters.s3tables.engines.base import Engine


def on_branch(relation: BaseRelation, branch: str) -> BaseRelation:
    """`relation` on its table's Iceberg branch `branch` (what its SQL then reads and
    writes, see relation.py)."""
    branched: BaseRelation = relation.incorporate(audit_branch=branch)  # type: ignore[no-untyped-call]  # dbt's incorporate is untyped
    return branched


@dataclass(frozen=True)
class Warehouse:
    """What a run reads and writes through: the engine (analysis, scoped settings), dbt's
    statement path (every statement logged and its errors explained) and the Iceberg
    catalog (metadata reads, schema and property commits). `fetch` gives a query's rows
    as dbt's tables hold them; `fetch_rows` as the engine gives them (a list stays a
    list, which dbt's tables turn into its JSON text)."""

    engine: Engine
    execute: Callable[[str], object]
    fetch: Callable[[str], list[Any]]
    fetch_rows: Callable[[str], list[Any]]
    iceberg: IcebergCatalog


@dataclass(frozen=True)
class AnalysedQuery:
    """A query and its output schema as the engine analysed it."""

    sql: str
    schema: StructType

    @property
    def columns(self) -> list[str]:
        return self.schema.names


def analyse(engine: Engine, sql: str) -> AnalysedQuery:
    """The query's output schema from one analysis by the engine (nothing runs)."""
    return AnalysedQuery(sql, engine.query_schema(sql))


@dataclass(frozen=True)
class RunTable:
    """The table a run writes: `relation` (the table's audit branch under write-audit-
    publish) through `warehouse`."""

    relation: BaseRelation
    warehouse: Warehouse

    def __str__(self) -> str:
        return str(self.relation)

    @property
    def namespace(self) -> str:
        return str(self.relation.schema)

    @property
    def name(self) -> str:
        return str(self.relation.identifier)

    @property
    def branch(self) -> str | None:
        """The audit branch written to (None: the table's main branch)."""
        branch: str | None = getattr(self.relation, "audit_branch", None)
        return branch

    def state(self) -> TableState:
        """One metadata read of the table (of its branch, when writing one)."""
        return self.warehouse.iceberg.table_state(self.namespace, self.name, self.branch)

    def set_properties(
        self,
        current: Mapping[str, str] | None,
        wanted: dict[str, str],
        remove: tuple[str, ...] = (),
    ) -> bool:
        """Commit `wanted` table properties (and remove `remove`) unless the table already
        is that way: known from `current` without a catalog call, else compared on load."""
        if current is not None and (
            all(current.get(k) == v for k, v in wanted.items()) and not set(remove) & set(current)
        ):
            return False
        return self.warehouse.iceberg.set_properties_if_changed(
            self.namespace, self.name, wanted, remove
        )
