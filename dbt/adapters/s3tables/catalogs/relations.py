"""Namespaces and relations through PyIceberg: what exists, its columns, and what `dbt docs`
shows of it (`CatalogRelations`), with the values these reads return.

Views go through the catalog's type (`CatalogType.list_views` and the rest): a catalog
without PyIceberg's view support answers them its own way.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from pyiceberg.exceptions import (
    NamespaceAlreadyExistsError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
)

from dbt.adapters.s3tables.catalogs.access import CatalogAccess
from dbt.adapters.s3tables.sql.like_patterns import ilike
from dbt.adapters.s3tables.sql.partitioning import partition_spec_text
from dbt.adapters.s3tables.sql.types import spark_type_name

if TYPE_CHECKING:
    from pyiceberg.schema import Schema

RelationKind = Literal["table", "view"]


@dataclass(frozen=True)
class CatalogRelation:
    namespace: str
    name: str
    kind: RelationKind


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    data_type: str
    comment: str | None = None


@dataclass(frozen=True)
class TableFacts:
    """What a table is, beside its figures: for `dbt docs`."""

    # When the current snapshot was committed (ms since the epoch; None: no snapshot yet).
    last_change_ms: int | None
    snapshots: int
    format_version: int
    # The partition spec as `partition_by` spells it: `day(ordered_at), bucket(4, id)`.
    partitioning: str
    # `write.merge.mode` as set on the table (None: unset, Iceberg's copy-on-write).
    merge_mode: str | None


@dataclass(frozen=True)
class RelationDetails:
    """What `dbt docs` shows of a relation: its columns, and statistics for tables."""

    relation: CatalogRelation
    columns: list[ColumnInfo]
    stats: TableStats | None
    comment: str | None = None
    facts: TableFacts | None = None
    # The relation's `owner` property (Spark records the user who created it).
    owner: str | None = None


@dataclass(frozen=True)
class TableStats:
    """Figures of the current snapshot's summary (None before the first snapshot)."""

    # The table's rows when `unapplied_deletes` is 0; else the rows of its data files.
    row_count: int | None
    file_count: int | None
    size_bytes: int | None
    snapshot_id: int | None
    # Delete records `row_count` does not subtract: equality deletes, and a v2 table's
    # position deletes (one may point at a row compaction already removed).
    unapplied_deletes: int = 0


def schema_columns(schema: Schema) -> list[ColumnInfo]:
    return [ColumnInfo(f.name, spark_type_name(f.field_type), f.doc) for f in schema.fields]


def view_schema_from_metadata(metadata: dict[str, Any]) -> Schema:
    """Current schema of an Iceberg view metadata document."""
    from pyiceberg.schema import Schema

    current = metadata["current-version-id"]
    version = next(v for v in metadata["versions"] if v["version-id"] == current)
    schema = next(s for s in metadata["schemas"] if s["schema-id"] == version["schema-id"])
    return Schema.model_validate(schema)


def stats_from_summary(
    summary: dict[str, str] | None, snapshot_id: int | None, format_version: int = 2
) -> TableStats:
    """The summary's figures. Its `total-records` counts the rows of the data files, deleted
    ones too: a v3 table's position deletes are deletion vectors, one per live data file and
    dropped with it, so they are subtracted exactly; other deletes are counted apart."""

    def number(key: str) -> int | None:
        value = (summary or {}).get(key)
        return int(value) if value is not None else None

    records = number("total-records")
    position_deletes = number("total-position-deletes") or 0
    equality_deletes = number("total-equality-deletes") or 0
    exact_positions = format_version >= 3
    if records is not None and exact_positions:
        records -= position_deletes
    return TableStats(
        row_count=records,
        file_count=number("total-data-files"),
        size_bytes=number("total-files-size"),
        snapshot_id=snapshot_id,
        unapplied_deletes=equality_deletes + (0 if exact_positions else position_deletes),
    )


class CatalogRelations:
    """The catalog's namespaces and relations: listed, created, dropped, described."""

    def __init__(self, access: CatalogAccess) -> None:
        self.access = access

    def list_namespaces(self) -> list[str]:
        rows = self.access.call(self.access.catalog.list_namespaces, "list namespaces")
        return [".".join(row) for row in rows]

    def namespace_exists(self, namespace: str) -> bool:
        return self.access.call(
            lambda: self.access.catalog.namespace_exists(namespace), "namespace check"
        )

    def create_namespace(self, namespace: str) -> None:
        """Create the namespace unless it exists; one another process creates meanwhile is
        created (two first runs at once: the SQL catalog's check and insert are not one
        step, and the later insert fails on its unique key)."""

        def create() -> None:
            catalog = self.access.catalog
            try:
                catalog.create_namespace(namespace)
            except NamespaceAlreadyExistsError:
                pass
            except Exception:
                if not catalog.namespace_exists(namespace):
                    raise

        self.access.call(create, f"create namespace {namespace}")

    def drop_namespace(self, namespace: str) -> None:
        """Drop a namespace with every table (purged) and view in it."""
        access = self.access
        for relation in self.list_relations(namespace):
            identifier = (namespace, relation.name)
            if relation.kind == "view":
                kind = access.config.kind
                drop_view = partial(kind.drop_view, access.config, access.catalog, identifier)
                access.call(drop_view, f"drop view {identifier}")
            else:
                access.call(
                    partial(access.catalog.purge_table, identifier), f"drop table {identifier}"
                )

        def drop() -> None:
            try:
                access.catalog.drop_namespace(namespace)
            except NoSuchNamespaceError:
                pass

        access.call(drop, f"drop namespace {namespace}")

    def relations_matching(
        self, schema_pattern: str, table_pattern: str, exclude: str = ""
    ) -> list[CatalogRelation]:
        """Relations whose namespace and name match SQL ILIKE patterns, and whose name does
        not match `exclude` (dbt_utils' get_relations_by_pattern / _by_prefix)."""
        return [
            entry
            for namespace in self.list_namespaces()
            if ilike(namespace, schema_pattern)
            for entry in self.list_relations(namespace)
            if ilike(entry.name, table_pattern) and not ilike(entry.name, exclude or "")
        ]

    def list_relations(self, namespace: str) -> list[CatalogRelation]:
        access = self.access

        def load() -> list[CatalogRelation]:
            catalog = access.catalog
            try:
                tables = catalog.list_tables(namespace)
                views = access.config.kind.list_views(access.config, catalog, namespace)
            except NoSuchNamespaceError:
                return []
            relations = [CatalogRelation(namespace, t[-1], "table") for t in tables]
            relations += [CatalogRelation(namespace, name, "view") for name in views]
            return relations

        return access.call(load, f"list relations in {namespace}")

    def columns(self, namespace: str, name: str, kind: RelationKind) -> list[ColumnInfo]:
        def load() -> list[ColumnInfo]:
            if kind == "view":
                metadata = self._view_metadata(namespace, name)
                return schema_columns(view_schema_from_metadata(metadata))
            return schema_columns(self.access.load_table(namespace, name).schema())

        return self.access.call(load, f"columns of {namespace}.{name}")

    def find_columns(self, namespace: str, name: str) -> list[ColumnInfo]:
        """Columns of a table or view, or [] when neither exists (as dbt expects)."""
        try:
            return self.columns(namespace, name, "table")
        except (NoSuchTableError, NoSuchNamespaceError):
            pass
        try:
            return self.columns(namespace, name, "view")
        except (NoSuchViewError, NoSuchNamespaceError, LookupError):
            return []

    def details(self, relation: CatalogRelation) -> RelationDetails:
        """Columns and (for tables) snapshot statistics, from one metadata load."""

        def load() -> RelationDetails:
            if relation.kind == "view":
                metadata = self._view_metadata(relation.namespace, relation.name)
                columns = schema_columns(view_schema_from_metadata(metadata))
                properties = metadata.get("properties") or {}
                return RelationDetails(
                    relation,
                    columns,
                    None,
                    properties.get("comment"),
                    owner=properties.get("owner"),
                )
            table = self.access.load_table(relation.namespace, relation.name)
            snapshot = table.current_snapshot()
            if snapshot is None:
                stats = stats_from_summary(None, None)
            else:
                summary = snapshot.summary.additional_properties if snapshot.summary else None
                stats = stats_from_summary(summary, snapshot.snapshot_id, table.format_version)
            schema = table.schema()
            facts = TableFacts(
                last_change_ms=snapshot.timestamp_ms if snapshot is not None else None,
                snapshots=len(table.snapshots()),
                format_version=table.format_version,
                partitioning=partition_spec_text(table.spec(), schema),
                merge_mode=table.properties.get("write.merge.mode"),
            )
            return RelationDetails(
                relation,
                schema_columns(schema),
                stats,
                table.properties.get("comment"),
                facts,
                owner=table.properties.get("owner"),
            )

        return self.access.call(load, f"details of {relation.namespace}.{relation.name}")

    def _view_metadata(self, namespace: str, name: str) -> dict[str, Any]:
        access = self.access
        return access.config.kind.view_metadata(access.config, access.catalog, namespace, name)
