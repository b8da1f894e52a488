"""A table's history through PyIceberg (`TableHistory`): its snapshot log and lineage,
branches, health, when it last changed, and what one commit's files hold.

Reads only: nothing here commits (see `table_changes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

from dbt.adapters.s3tables.catalogs.access import CatalogAccess
from dbt.adapters.s3tables.catalogs.snapshots import (
    INVOCATION_KEY,
    Ancestor,
    Lineage,
    SnapshotEntry,
    TableHealth,
)
from dbt.adapters.s3tables.errors import CatalogError

if TYPE_CHECKING:
    from pyiceberg.table.snapshots import Snapshot

# The snapshot summary's counts of files a commit added or removed.
FILE_CHANGE_KEYS = (
    "added-data-files",
    "deleted-data-files",
    "added-delete-files",
    "removed-delete-files",
)
# Format v3's row lineage columns, as the data files hold them.
ROW_ID_COLUMN = "_row_id"
LAST_UPDATED_COLUMN = "_last_updated_sequence_number"


@dataclass(frozen=True)
class Branches:
    """One metadata read of a table's branches (other than main) and properties."""

    # Branch name to its head snapshot.
    heads: dict[str, int]
    properties: dict[str, str]
    # The branches whose history holds main's current snapshot: main can be
    # fast-forwarded to them.
    ahead_of_main: frozenset[str]


def holds_rows(snapshot: Snapshot | None) -> bool:
    """Whether a table at `snapshot` holds rows: its summary's total says (a summary
    without one, as some writers leave, is taken to hold some)."""
    if snapshot is None:
        return False
    total = (
        snapshot.summary.additional_properties.get("total-records") if snapshot.summary else None
    )
    return total is None or int(total) > 0


class TableHistory:
    """What a table's snapshots say about it, each read from one metadata load."""

    def __init__(self, access: CatalogAccess) -> None:
        self.access = access

    def branches(self, namespace: str, name: str) -> Branches:
        """The table's branches other than main, with its properties, from one load."""
        from pyiceberg.table.refs import MAIN_BRANCH, SnapshotRefType

        def load() -> Branches:
            table = self.access.load_table(namespace, name)
            main = table.current_snapshot()
            heads = {
                n: ref.snapshot_id
                for n, ref in table.metadata.refs.items()
                if n != MAIN_BRANCH and ref.snapshot_ref_type == SnapshotRefType.BRANCH
            }
            ahead = set()
            for branch, head in heads.items():
                snapshot = table.snapshot_by_id(head)
                while snapshot is not None and main is not None:
                    if snapshot.snapshot_id == main.snapshot_id:
                        ahead.add(branch)
                        break
                    parent = snapshot.parent_snapshot_id
                    snapshot = table.snapshot_by_id(parent) if parent is not None else None
            return Branches(heads, dict(table.properties), frozenset(ahead))

        return self.access.call(load, f"branches of {namespace}.{name}")

    def holds_files_of_other_specs(self, namespace: str, name: str) -> bool:
        """Whether the table's current snapshot has live data files written under a
        partition spec other than the current one; from its manifest list alone."""
        from pyiceberg.manifest import ManifestContent

        def read() -> bool:
            table = self.access.load_table(namespace, name)
            snapshot = table.current_snapshot()
            if snapshot is None:
                return False
            current = table.spec().spec_id
            return any(
                manifest.content == ManifestContent.DATA
                and manifest.partition_spec_id != current
                and (manifest.has_added_files() or manifest.has_existing_files())
                for manifest in snapshot.manifests(table.io)
            )

        return self.access.call(read, f"partition specs of {namespace}.{name}'s files")

    def source_last_modified(self, namespace: str, name: str) -> datetime | None:
        """`last_modified` of a source (`dbt source freshness` without `loaded_at_field`),
        or one sentence saying the table does not exist and what to fix."""
        try:
            return self.last_modified(namespace, name)
        except (NoSuchTableError, NoSuchNamespaceError):
            raise CatalogError(
                f"Source table {namespace}.{name} does not exist in catalog "
                f"`{self.access.config.name}`: metadata-based freshness reads its last "
                "snapshot. Fix the source's schema or identifier, or set `loaded_at_field`"
            ) from None

    def last_modified(self, namespace: str, name: str) -> datetime | None:
        """When the table's current snapshot was committed (None before the first one);
        raises NoSuchTableError when there is no such table."""

        def load() -> datetime | None:
            snapshot = self.access.load_table(namespace, name).current_snapshot()
            if snapshot is None:
                return None
            return datetime.fromtimestamp(snapshot.timestamp_ms / 1000, tz=timezone.utc)

        return self.access.call(load, f"last snapshot of {namespace}.{name}")

    def last_data_tag(self, namespace: str, name: str, key: str) -> tuple[int, str | None] | None:
        """Main's latest commit that changed rows (a compaction's `replace` keeps them, so
        it is passed over) and its summary's `key`; None when the table or that commit is
        missing."""

        def read() -> tuple[int, str | None] | None:
            try:
                table = self.access.load_table(namespace, name)
            except (NoSuchTableError, NoSuchNamespaceError):
                return None
            snapshot = table.current_snapshot()
            while snapshot is not None and snapshot.summary is not None:
                if snapshot.summary.operation.value != "replace":
                    return snapshot.snapshot_id, snapshot.summary.get(key)
                parent = snapshot.parent_snapshot_id
                snapshot = table.snapshot_by_id(parent) if parent is not None else None
            return None

        return self.access.call(read, f"last commit of {namespace}.{name}")

    def snapshot_log(self, namespace: str, name: str) -> tuple[list[SnapshotEntry], int | None]:
        """The table's snapshot log (oldest first, each entry with the dbt run that made
        it and its operation) and its current snapshot id."""

        def read() -> tuple[list[SnapshotEntry], int | None]:
            table = self.access.load_table(namespace, name)
            entries = []
            for logged in table.metadata.snapshot_log:
                snapshot = table.snapshot_by_id(logged.snapshot_id)
                if snapshot is None:
                    entries.append(SnapshotEntry(logged.snapshot_id, None, exists=False))
                    continue
                summary = snapshot.summary
                entries.append(
                    SnapshotEntry(
                        snapshot.snapshot_id,
                        summary.get(INVOCATION_KEY) if summary is not None else None,
                        snapshot.parent_snapshot_id,
                        summary.operation.value if summary is not None else None,
                        snapshot.sequence_number or 0,
                        timestamp_ms=snapshot.timestamp_ms,
                    )
                )
            current = table.current_snapshot()
            return entries, current.snapshot_id if current else None

        return self.access.call(read, f"snapshot log of {namespace}.{name}")

    def properties_before(
        self, namespace: str, name: str, timestamp_ms: int
    ) -> dict[str, str] | None:
        """The table's properties as they were just before `timestamp_ms` (a commit made
        then), from its metadata log: the newest earlier metadata file. None when the log
        no longer reaches back that far (Iceberg keeps `write.metadata.previous-versions-max`
        of them, 100 by default)."""
        from pyiceberg.serializers import FromInputFile

        def read() -> dict[str, str] | None:
            table = self.access.load_table(namespace, name)
            earlier = [e for e in table.metadata.metadata_log if e.timestamp_ms < timestamp_ms]
            if not earlier:
                return None
            entry = max(earlier, key=lambda e: e.timestamp_ms)
            metadata = FromInputFile.table_metadata(table.io.new_input(entry.metadata_file))
            return dict(metadata.properties)

        return self.access.call(read, f"metadata log of {namespace}.{name}")

    def lineage(
        self, namespace: str, name: str, tag_prefix: str, branch: str | None = None
    ) -> Lineage:
        """The table's uuid, history and head's columns from one load: main's ancestors
        (or `branch`'s), each with its summary entries under `tag_prefix`."""

        def read() -> Lineage:
            table = self.access.load_table(namespace, name)
            head = table.snapshot_by_name(branch) if branch else table.current_snapshot()
            head_snapshot = head
            ancestors = []
            while head is not None:
                summary = head.summary
                counts = summary.additional_properties if summary is not None else {}
                ancestors.append(
                    Ancestor(
                        head.snapshot_id,
                        head.parent_snapshot_id,
                        summary.operation.value if summary is not None else None,
                        any(int(counts.get(key) or 0) for key in FILE_CHANGE_KEYS),
                        int(counts.get("added-records") or 0),
                        {
                            key: value
                            for key, value in (
                                summary.additional_properties if summary else {}
                            ).items()
                            if key.startswith(tag_prefix)
                        },
                        head.schema_id,
                    )
                )
                parent = head.parent_snapshot_id
                head = table.snapshot_by_id(parent) if parent is not None else None
            # The head's columns, as a read `VERSION AS OF` it has them (a column added
            # since, with no commit after, is not in them).
            schemas = table.schemas()
            head_schema = ancestors[0].schema_id if ancestors else None
            schema = schemas.get(head_schema) if head_schema is not None else None
            columns = {
                schema_id: tuple(f"{f.name} {f.field_type}" for f in each.fields)
                for schema_id, each in schemas.items()
            }
            return Lineage(
                str(table.metadata.table_uuid),
                tuple(ancestors),
                frozenset(s.snapshot_id for s in table.metadata.snapshots),
                dict(table.properties),
                tuple(field.name for field in (schema or table.schema()).fields),
                {
                    s.snapshot_id: columns.get(s.schema_id, ())
                    for s in table.metadata.snapshots
                    if s.schema_id is not None
                },
                holds_rows(head_snapshot),
            )

        return self.access.call(read, f"history of {namespace}.{name}")

    def table_health(self, namespace: str, name: str) -> TableHealth:
        """Live data and delete files, their bytes and the snapshots kept, from the current
        snapshot's summary totals (what maintenance changes)."""

        def read() -> TableHealth:
            table = self.access.load_table(namespace, name)
            snapshot = table.current_snapshot()
            summary = snapshot.summary if snapshot is not None and snapshot.summary else {}

            def total(key: str) -> int:
                return int(summary.get(key) or 0)

            return TableHealth(
                data_files=total("total-data-files"),
                delete_files=total("total-delete-files"),
                bytes=total("total-files-size"),
                snapshots=len(table.snapshots()),
            )

        return self.access.call(read, f"health of {namespace}.{name}")

    def added_rows_lineage(
        self, namespace: str, name: str, snapshot_id: int
    ) -> tuple[int, int, int] | None:
        """(inserted, updated, copied) rows of the data files `snapshot_id` added, from
        their row lineage columns (format v3; see `commit_counts.RowLineage`): two columns
        of the commit's own files are read, not the table. None when a file was written
        without them (by a writer that does not keep row lineage)."""

        import pyarrow.parquet as pq
        from pyiceberg.manifest import ManifestContent, ManifestEntryStatus

        def read() -> tuple[int, int, int] | None:
            table = self.access.load_table(namespace, name)
            snapshot = table.snapshot_by_id(snapshot_id)
            if snapshot is None:
                raise CatalogError(f"`{namespace}.{name}` has no snapshot {snapshot_id}")
            inserted = updated = copied = 0
            for manifest in snapshot.manifests(table.io):
                if (
                    manifest.added_snapshot_id != snapshot_id
                    or manifest.content != ManifestContent.DATA
                ):
                    continue
                for entry in manifest.fetch_manifest_entry(table.io):
                    if entry.status != ManifestEntryStatus.ADDED:
                        continue
                    with table.io.new_input(entry.data_file.file_path).open() as stream:
                        parquet = pq.ParquetFile(stream)
                        lineage = [ROW_ID_COLUMN, LAST_UPDATED_COLUMN]
                        if not set(lineage) <= set(parquet.schema_arrow.names):
                            return None
                        columns = parquet.read(columns=lineage)
                    row_ids = columns.column(ROW_ID_COLUMN)
                    sequence = columns.column(LAST_UPDATED_COLUMN)
                    inserted += row_ids.null_count
                    copied += len(sequence) - sequence.null_count
                    updated += (
                        len(row_ids) - row_ids.null_count - (len(sequence) - sequence.null_count)
                    )
            return inserted, updated, copied

        return self.access.call(read, f"row lineage of {namespace}.{name}")
