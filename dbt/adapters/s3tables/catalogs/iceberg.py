"""`IcebergCatalog`: the adapter's catalog metadata through PyIceberg, one per catalog and
process (`iceberg_catalog_for`).

dbt's metadata calls land here instead of Spark (`SHOW TABLE EXTENDED` does not work
for Iceberg tables on Spark 3.5 and `DESCRIBE EXTENDED` costs a Spark job per table).
It is a façade over the objects that own each concern, all on one `CatalogAccess`:
`relations` (namespaces, relations, columns, docs details), `changes` (a table's state
and its metadata commits) and `history` (snapshot log, lineage, branches, health).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from dbt.adapters.s3tables.catalogs.access import CatalogAccess
from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.history import Branches, TableHistory
from dbt.adapters.s3tables.catalogs.relations import (
    CatalogRelation,
    CatalogRelations,
    ColumnInfo,
    RelationDetails,
    RelationKind,
)
from dbt.adapters.s3tables.catalogs.table_changes import TableChanges, TableState

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table
    from pyiceberg.transforms import Transform
    from pyiceberg.types import IcebergType

    from dbt.adapters.s3tables.catalogs.metadata_changes import MetadataChange
    from dbt.adapters.s3tables.catalogs.snapshots import Lineage, SnapshotEntry, TableHealth

T = TypeVar("T")


class IcebergCatalog:
    """Thread-safe PyIceberg access to the catalog a profile names. The connection sets
    `access`'s hooks (`after_failed_write`, `operations`) and `changes.run_sql`."""

    def __init__(self, config: CatalogConfig, *, recovering: bool = False) -> None:
        self.config = config
        self.access = CatalogAccess(config, recovering=recovering)
        self.relations = CatalogRelations(self.access)
        self.changes = TableChanges(self.access)
        self.history = TableHistory(self.access)

    # --- the catalog ---

    @property
    def catalog(self) -> Catalog:
        return self.access.catalog

    def call(self, operation: Callable[[], T], what: str) -> T:
        return self.access.call(operation, what)

    def ensure_initialized(self) -> None:
        self.access.ensure_initialized()

    def load_table(self, namespace: str, name: str) -> Table:
        return self.access.load_table(namespace, name)

    # --- namespaces and relations ---

    def list_namespaces(self) -> list[str]:
        return self.relations.list_namespaces()

    def namespace_exists(self, namespace: str) -> bool:
        return self.relations.namespace_exists(namespace)

    def create_namespace(self, namespace: str) -> None:
        self.relations.create_namespace(namespace)

    def drop_namespace(self, namespace: str) -> None:
        self.relations.drop_namespace(namespace)

    def relations_matching(
        self, schema_pattern: str, table_pattern: str, exclude: str = ""
    ) -> list[CatalogRelation]:
        return self.relations.relations_matching(schema_pattern, table_pattern, exclude)

    def list_relations(self, namespace: str) -> list[CatalogRelation]:
        return self.relations.list_relations(namespace)

    def columns(self, namespace: str, name: str, kind: RelationKind) -> list[ColumnInfo]:
        return self.relations.columns(namespace, name, kind)

    def find_columns(self, namespace: str, name: str) -> list[ColumnInfo]:
        return self.relations.find_columns(namespace, name)

    def details(self, relation: CatalogRelation) -> RelationDetails:
        return self.relations.details(relation)

    # --- a table's state and changes ---

    def table_state(self, namespace: str, name: str, branch: str | None = None) -> TableState:
        return self.changes.table_state(namespace, name, branch)

    def writes_metadata_through_sql(self, format_version: int) -> bool:
        return self.changes.writes_metadata_through_sql(format_version)

    def commit(self, namespace: str, name: str, table: Table, change: MetadataChange) -> None:
        self.changes.commit(namespace, name, table, change)

    def upgrade_format_version(self, namespace: str, name: str, version: int) -> int:
        return self.changes.upgrade_format_version(namespace, name, version)

    def set_properties_if_changed(
        self,
        namespace: str,
        name: str,
        properties: dict[str, str],
        remove: tuple[str, ...] = (),
    ) -> bool:
        return self.changes.set_properties_if_changed(namespace, name, properties, remove)

    def set_properties_at(
        self,
        namespace: str,
        name: str,
        base: int | None,
        properties: dict[str, str],
        remove: tuple[str, ...] = (),
    ) -> bool:
        return self.changes.set_properties_at(namespace, name, base, properties, remove)

    def create_branch(
        self,
        namespace: str,
        name: str,
        branch: str,
        base: int,
        stale: Callable[[list[str]], list[str]] = lambda names: [],
        loaded: Table | None = None,
    ) -> None:
        self.changes.create_branch(namespace, name, branch, base, stale, loaded)

    def remove_branch(self, namespace: str, name: str, branch: str) -> None:
        self.changes.remove_branch(namespace, name, branch)

    def publish_branch(
        self,
        namespace: str,
        name: str,
        branch: str,
        base: int,
        properties: dict[str, str],
        remove: tuple[str, ...] = (),
        loaded: Table | None = None,
    ) -> None:
        self.changes.publish_branch(namespace, name, branch, base, properties, remove, loaded)

    def evolve_schema(
        self,
        namespace: str,
        name: str,
        added: list[tuple[tuple[str, ...], IcebergType]],
        widened: list[tuple[tuple[str, ...], IcebergType]],
    ) -> None:
        self.changes.evolve_schema(namespace, name, added, widened)

    def drop_columns(self, namespace: str, name: str, columns: list[str]) -> None:
        self.changes.drop_columns(namespace, name, columns)

    def evolve_partition_spec(
        self,
        namespace: str,
        name: str,
        removed: list[str],
        added: list[tuple[str, Transform[Any, Any]]],
    ) -> None:
        self.changes.evolve_partition_spec(namespace, name, removed, added)

    def require_columns(self, namespace: str, name: str, columns: list[str]) -> list[str]:
        return self.changes.require_columns(namespace, name, columns)

    # --- a table's history ---

    def branches(self, namespace: str, name: str) -> Branches:
        return self.history.branches(namespace, name)

    def holds_files_of_other_specs(self, namespace: str, name: str) -> bool:
        return self.history.holds_files_of_other_specs(namespace, name)

    def source_last_modified(self, namespace: str, name: str) -> datetime | None:
        return self.history.source_last_modified(namespace, name)

    def snapshot_log(self, namespace: str, name: str) -> tuple[list[SnapshotEntry], int | None]:
        return self.history.snapshot_log(namespace, name)

    def last_data_tag(self, namespace: str, name: str, key: str) -> tuple[int, str | None] | None:
        return self.history.last_data_tag(namespace, name, key)

    def properties_before(
        self, namespace: str, name: str, timestamp_ms: int
    ) -> dict[str, str] | None:
        return self.history.properties_before(namespace, name, timestamp_ms)

    def lineage(
        self, namespace: str, name: str, tag_prefix: str, branch: str | None = None
    ) -> Lineage:
        return self.history.lineage(namespace, name, tag_prefix, branch)

    def table_health(self, namespace: str, name: str) -> TableHealth:
        return self.history.table_health(namespace, name)

    def added_rows_lineage(
        self, namespace: str, name: str, snapshot_id: int
    ) -> tuple[int, int, int] | None:
        return self.history.added_rows_lineage(namespace, name, snapshot_id)


@cache
def iceberg_catalog_for(config: CatalogConfig) -> IcebergCatalog:
    """One PyIceberg catalog per catalog description and process, shared by all threads."""
    return IcebergCatalog(config)
