"""The `dbt docs generate` catalog from Iceberg metadata: a relation's columns, comment,
owner, snapshot statistics and what the table is (last change, snapshots, format version,
partitioning, merge mode) as dbt's catalog rows and CatalogTable (pure functions), read
from one catalog."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.contracts.relation import RelationType
from dbt_common.contracts.metadata import CatalogTable, ColumnMetadata, StatsItem, TableMetadata

from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.relations import RelationDetails, TableFacts, TableStats


def fact_items(facts: TableFacts | None) -> list[tuple[str, str, str | int | None, str]]:
    """What the table is, as (id, label, value, description) statistics."""
    if facts is None:
        return []
    last_change = None
    if facts.last_change_ms is not None:
        moment = datetime.fromtimestamp(facts.last_change_ms / 1000, tz=timezone.utc)
        last_change = moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    merge_mode = facts.merge_mode or "copy-on-write (Iceberg's default)"
    return [
        ("last_modified", "Last Modified", last_change, "When the current snapshot was committed"),
        ("snapshots", "Snapshots", facts.snapshots, "Snapshots kept in the table's history"),
        ("format_version", "Iceberg format version", facts.format_version, "The table's format"),
        (
            "partitioning",
            "Partitioned by",
            facts.partitioning,
            "The current partition spec",
        ),
        ("merge_mode", "Merge mode", merge_mode, "How merges write (`write.merge.mode`)"),
    ]


def stats_items(stats: TableStats | None, facts: TableFacts | None = None) -> dict[str, StatsItem]:
    """Snapshot-summary figures and the table's facts as dbt catalog statistics (views
    have none)."""
    if stats is None:
        return {}
    rows = "Rows in the current snapshot"
    if stats.unapplied_deletes:
        rows = (
            f"Rows in the current snapshot's data files, {stats.unapplied_deletes} of them "
            "deleted by delete files (exact on format v3 without equality deletes)"
        )
    figures = [
        # `rows` and `bytes`: dbt-spark's keys for the same figures (from Spark's statistics,
        # which Spark has none of for Iceberg tables). dbt docs shows `bytes` as a size
        # ("10 KB"), hence its label.
        ("rows", "Rows", stats.row_count, rows),
        ("num_files", "Data files", stats.file_count, "Data files in the current snapshot"),
        ("bytes", "Size", stats.size_bytes, "Bytes of the current snapshot's files"),
        *fact_items(facts),
    ]
    items = {
        key: StatsItem(id=key, label=label, value=value, include=True, description=text)
        for key, label, value, text in figures
        if value is not None
    }
    items["has_stats"] = StatsItem(
        id="has_stats", label="Has Stats?", value=bool(items), include=False
    )
    return items


def catalog_rows(details: RelationDetails, database: str | None = None) -> Iterable[dict[str, Any]]:
    """One row per column, as dbt's catalog query returns them (`database`: the catalog of
    catalogs.yml the relation is in; none for the profile's)."""
    flat_stats: dict[str, Any] = {}
    for item in stats_items(details.stats, details.facts).values():
        for field_name in ("label", "value", "description", "include"):
            flat_stats[f"stats:{item.id}:{field_name}"] = getattr(item, field_name)
    entry = details.relation
    for index, column in enumerate(details.columns, start=1):
        yield {
            "table_database": database,
            "table_schema": entry.namespace,
            "table_name": entry.name,
            "table_type": entry.kind,
            "table_comment": details.comment,
            "table_owner": details.owner,
            "column_name": column.name,
            "column_index": index,
            "column_type": column.data_type,
            "column_comment": column.comment,
            **flat_stats,
        }


def catalog_table(details: RelationDetails, database: str | None = None) -> CatalogTable:
    """The relation's entry of a single-relation catalog."""
    entry = details.relation
    return CatalogTable(
        metadata=TableMetadata(
            type=RelationType.View.value if entry.kind == "view" else "table",
            database=database,
            schema=entry.namespace,
            name=entry.name,
            comment=details.comment,
            owner=details.owner,
        ),
        columns={
            c.name: ColumnMetadata(type=c.data_type, index=i, name=c.name, comment=c.comment)
            for i, c in enumerate(details.columns, start=1)
        },
        stats=stats_items(details.stats, details.facts),
    )


def schema_rows(
    iceberg: IcebergCatalog, schemas: Iterable[str], database: str | None
) -> list[dict[str, Any]]:
    """The catalog rows of every relation in `schemas` of one catalog."""
    return [
        row
        for schema in schemas
        for entry in iceberg.list_relations(schema)
        for row in catalog_rows(iceberg.details(entry), database)
    ]


def relation_table(
    iceberg: IcebergCatalog, relation: BaseRelation, database: str | None
) -> CatalogTable | None:
    """The single-relation catalog entry of `relation` (None: no such relation)."""
    entries = {e.name: e for e in iceberg.list_relations(str(relation.schema))}
    entry = entries.get(str(relation.identifier))
    return None if entry is None else catalog_table(iceberg.details(entry), database)
