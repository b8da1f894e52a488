"""Catalog metadata through PyIceberg: namespaces, relations, columns, table statistics;
one `IcebergCatalog` per catalog and process (`iceberg_catalog_for`).

dbt's metadata calls land here instead of Spark (`SHOW TABLE EXTENDED` does not work
for Iceberg tables on Spark 3.5 and `DESCRIBE EXTENDED` costs a Spark job per table).
"""

from __future__ import annotations

import errno
import gzip
import importlib
import json
import random
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cache, partial
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from dbt.adapters.events.logging import AdapterLogger
from pyiceberg.exceptions import (
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
)

from dbt.adapters.s3tables.catalogs.base import file_io_module
from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.embedded.files import is_lock_error
from dbt.adapters.s3tables.catalogs.metadata_changes import (
    ColumnChange,
    MetadataChange,
    UnsupportedThroughSql,
    apply_with_pyiceberg,
    pyiceberg_writes,
    spark_sql,
    upgrade_sql,
)
from dbt.adapters.s3tables.catalogs.snapshots import (
    INVOCATION_KEY,
    Ancestor,
    Lineage,
    SnapshotEntry,
    TableHealth,
)
from dbt.adapters.s3tables.errors import CatalogError
from dbt.adapters.s3tables.sql.like_patterns import ilike
from dbt.adapters.s3tables.sql.partitioning import partition_spec_text
from dbt.adapters.s3tables.sql.text import table_identifier
from dbt.adapters.s3tables.sql.types import spark_type_name

# PyIceberg's catalog, table and type modules (pydantic, SQLAlchemy, pyarrow: a third of a
# second) are imported where first used, so `dbt parse` and `dbt ls` never load them.
if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.table import Table
    from pyiceberg.transforms import Transform
    from pyiceberg.types import IcebergType

logger = AdapterLogger("s3tables")
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

T = TypeVar("T")
RelationKind = Literal["table", "view"]

LOCK_RETRY_ATTEMPTS = 8
LOCK_RETRY_BASE_SECONDS = 0.05


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
class Branches:
    """One metadata read of a table's branches (other than main) and properties."""

    # Branch name to its head snapshot.
    heads: dict[str, int]
    properties: dict[str, str]
    # The branches whose history holds main's current snapshot: main can be
    # fast-forwarded to them.
    ahead_of_main: frozenset[str]


@dataclass(frozen=True)
class TableState:
    """One metadata read of a table: what an incremental run needs before and after."""

    schema: Schema
    properties: dict[str, str]
    snapshot_id: int | None
    summary: dict[str, str]
    spec: PartitionSpec
    format_version: int

    @property
    def columns(self) -> list[ColumnInfo]:
        return schema_columns(self.schema)


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


def is_retryable(error: BaseException) -> bool:
    """A lock; two processes creating the same thing at once (a new catalog's tables, a
    namespace: the loser's retry finds it there); or a PyIceberg commit that lost to
    another writer (each operation reloads the table, so it is re-run against the new
    state)."""
    if isinstance(error, CommitFailedException):
        return True
    from sqlalchemy.exc import IntegrityError, OperationalError

    if isinstance(error, IntegrityError):
        return "unique constraint" in str(error).lower()
    return isinstance(error, OperationalError) and (
        is_lock_error(error) or "already exists" in str(error).lower()
    )


def retry_on_lock(operation: Callable[[], T], what: str, budget_seconds: float | None = None) -> T:
    """Run `operation`, retrying a bounded number of times on a retryable error, and not
    after `budget_seconds` have passed (the wait a lock is allowed in all).

    The busy timeout already waits for a lock; a retry covers the case SQLite refuses to
    wait for (a read transaction that must upgrade to a write while another writer won).
    """
    started = time.monotonic()
    for attempt in range(LOCK_RETRY_ATTEMPTS):
        try:
            return operation()
        except Exception as error:
            out_of_time = budget_seconds is not None and (
                time.monotonic() - started >= budget_seconds
            )
            if not is_retryable(error) or attempt == LOCK_RETRY_ATTEMPTS - 1 or out_of_time:
                raise
            delay = LOCK_RETRY_BASE_SECONDS * (2**attempt) * (1 + random.random())
            logger.debug(f"catalog busy ({what}): {error}; retry {attempt + 1} in {delay:.2f} s")
            time.sleep(delay)
    raise AssertionError("unreachable")


def explain_catalog_error(config: CatalogConfig, error: BaseException, what: str) -> str | None:
    """One sentence for a catalog failure a person can act on (None: not one of these)."""
    text = str(getattr(error, "orig", None) or error)
    if is_disk_full(error):
        return (
            f"The disk is full: {what} failed ({text}); nothing was changed, the table is at "
            "its last commit. Fix: free space on the disk holding the warehouse, then rerun"
        )
    explained = config.kind.explain_error(config, error, what)
    if explained is not None:
        return explained
    if isinstance(error, CommitFailedException):
        return (
            f"{what}: other writers kept committing to the table ({text}); nothing was changed. "
            "Fix: rerun when the other job has finished"
        )
    if _is_connection_error(error):
        return (
            f"Cannot reach the Iceberg catalog at {config.catalog_uri} during {what} ({text}). "
            "Fix: check `catalog_uri` (or `region`) in the profile and that the catalog "
            "service is up and reachable from this machine"
        )
    return None


def is_disk_full(error: BaseException) -> bool:
    return (isinstance(error, OSError) and error.errno == errno.ENOSPC) or (
        "No space left on device" in str(error)
    )


def _is_connection_error(error: BaseException) -> bool:
    import requests

    return isinstance(error, (requests.ConnectionError, requests.Timeout, ConnectionError))


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


class IcebergCatalog:
    """Thread-safe PyIceberg access to the catalog a profile names."""

    def __init__(self, config: CatalogConfig, *, recovering: bool = False) -> None:
        self.config = config
        # Recovery opens a new catalog over a warehouse that holds tables, on purpose.
        self.recovering = recovering
        # Set by the connection: removes what a failed write left, says what it did.
        self.after_failed_write: Callable[[float], str | None] | None = None
        # Entered around every catalog operation: the connection manager counts them as
        # running, so a failed write's cleanup never removes the files of one in flight.
        self.operations: AbstractContextManager[object] = nullcontext()
        # Set by the connection: runs a Spark SQL statement (changes to format-v3 tables
        # where PyIceberg cannot write their metadata, see `commit`).
        self.run_sql: Callable[[str], None] | None = None
        self._catalog: Catalog | None = None
        self._lock = threading.Lock()

    @property
    def catalog(self) -> Catalog:
        with self._lock:
            if self._catalog is None:
                from pyiceberg.catalog import load_catalog

                properties = self.config.pyiceberg_properties()
                # PyIceberg imports a table's FileIO at its first load, which can land
                # anywhere in a run (pyarrow's takes half a second); import it here.
                importlib.import_module(file_io_module(properties))

                def load() -> Catalog:
                    return self.call(
                        lambda: load_catalog(self.config.name, **properties), "catalog open"
                    )

                self._catalog = self.config.kind.open_catalog(
                    self.config, load, recovering=self.recovering
                )
            return self._catalog

    def call(self, operation: Callable[[], T], what: str) -> T:
        """Run a catalog operation, retried while the catalog is busy; a failure a person
        can act on (locked, unreachable, damaged) becomes one sentence saying what to do."""
        started = time.time()
        try:
            with self.operations:
                return retry_on_lock(operation, what, self.config.lock_timeout_seconds)
        except Exception as error:
            explained = explain_catalog_error(self.config, error, what)
            if explained is None:
                raise
            logger.debug(f"catalog error during {what}: {error!r}")
            if is_disk_full(error) and self.after_failed_write:
                note = self.after_failed_write(started)
                explained += f"\n  {note}" if note else ""
            raise CatalogError(explained) from None

    def ensure_initialized(self) -> None:
        """Open the catalog now (for SQLite: create its tables if the file is new)."""
        _ = self.catalog

    def load_table(self, namespace: str, name: str) -> Table:
        """The table, its name matched case-insensitively as Spark resolves names (dbt
        searches lower-cased; a JDBC catalog keeps `MODEL` as written)."""
        try:
            return self.catalog.load_table((namespace, name))
        except NoSuchTableError:
            wanted = name.lower()
            listed = [t[-1] for t in self.catalog.list_tables(namespace)]
            actual = next((t for t in listed if t.lower() == wanted and t != name), None)
            if actual is None:
                raise
            return self.catalog.load_table((namespace, actual))

    def list_namespaces(self) -> list[str]:
        rows = self.call(self.catalog.list_namespaces, "list namespaces")
        return [".".join(row) for row in rows]

    def namespace_exists(self, namespace: str) -> bool:
        return self.call(lambda: self.catalog.namespace_exists(namespace), "namespace check")

    def create_namespace(self, namespace: str) -> None:
        """Create the namespace unless it exists; one another process creates meanwhile is
        created (two first runs at once: the SQL catalog's check and insert are not one
        step, and the later insert fails on its unique key)."""

        def create() -> None:
            try:
                self.catalog.create_namespace(namespace)
            except NamespaceAlreadyExistsError:
                pass
            except Exception:
                if not self.catalog.namespace_exists(namespace):
                    raise

        self.call(create, f"create namespace {namespace}")

    def drop_namespace(self, namespace: str) -> None:
        """Drop a namespace with every table (purged) and view in it."""
        for relation in self.list_relations(namespace):
            identifier = (namespace, relation.name)
            if relation.kind == "view":
                self.call(partial(self._drop_view, identifier), f"drop view {identifier}")
            else:
                self.call(partial(self.catalog.purge_table, identifier), f"drop table {identifier}")

        def drop() -> None:
            try:
                self.catalog.drop_namespace(namespace)
            except NoSuchNamespaceError:
                pass

        self.call(drop, f"drop namespace {namespace}")

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
        def load() -> list[CatalogRelation]:
            try:
                tables = self.catalog.list_tables(namespace)
                views = self._list_view_names(namespace)
            except NoSuchNamespaceError:
                return []
            relations = [CatalogRelation(namespace, t[-1], "table") for t in tables]
            relations += [CatalogRelation(namespace, name, "view") for name in views]
            return relations

        return self.call(load, f"list relations in {namespace}")

    def columns(self, namespace: str, name: str, kind: RelationKind) -> list[ColumnInfo]:
        def load() -> list[ColumnInfo]:
            if kind == "view":
                return schema_columns(self._view_schema(namespace, name))
            return schema_columns(self.load_table(namespace, name).schema())

        return self.call(load, f"columns of {namespace}.{name}")

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

    def table_state(self, namespace: str, name: str, branch: str | None = None) -> TableState:
        """Columns, properties and current snapshot (id and summary) from one load; the
        snapshot of `branch` when given and the table has it (else main's)."""

        def load() -> TableState:
            table = self.load_table(namespace, name)
            snapshot = (branch and table.snapshot_by_name(branch)) or table.current_snapshot()
            summary = (
                snapshot.summary.additional_properties if snapshot and snapshot.summary else {}
            )
            return TableState(
                schema=table.schema(),
                properties=dict(table.properties),
                snapshot_id=snapshot.snapshot_id if snapshot else None,
                summary=dict(summary),
                spec=table.spec(),
                format_version=table.format_version,
            )

        return self.call(load, f"state of {namespace}.{name}")

    def writes_metadata_through_sql(self, format_version: int) -> bool:
        """Whether a table at `format_version` has its metadata changes made through Spark
        SQL: PyIceberg writes this catalog's metadata files itself (the embedded catalog)
        and cannot write that version's (v3, PyIceberg 0.12). A REST catalog's server
        writes the metadata: PyIceberg's commits work there on every version."""
        return self.config.kind.client_writes_metadata and not pyiceberg_writes(format_version)

    def commit(self, namespace: str, name: str, table: Table, change: MetadataChange) -> None:
        """Commit `change` to the loaded `table`: one PyIceberg transaction, or, for a
        format-v3 table of a catalog whose metadata files PyIceberg writes (which PyIceberg
        0.12 cannot do on v3), Iceberg Spark SQL statements, one commit each."""
        if not change:
            return
        if not self.writes_metadata_through_sql(table.format_version):
            apply_with_pyiceberg(table, change)
            return
        label = f"`{namespace}.{name}` (Iceberg format v{table.format_version})"
        try:
            statements = spark_sql(table_identifier(self.config.name, namespace, name), change)
        except UnsupportedThroughSql as error:
            raise CatalogError(
                f"{label}: {error}, and PyIceberg 0.12 cannot write this table's metadata. "
                "Fix: rebuild the table with `--full-refresh` to make this change"
            ) from None
        if self.run_sql is None:
            raise CatalogError(
                f"{label}: PyIceberg 0.12 cannot write this table's metadata and no Spark "
                "connection is open to change it through Spark SQL"
            )
        for statement in statements:
            logger.debug(f"{label}: through Spark SQL: {statement}")
            self.run_sql(statement)

    def upgrade_format_version(self, namespace: str, name: str, version: int) -> int:
        """Raise the table's format version to `version` in place: one metadata commit
        through Spark SQL (PyIceberg 0.12 upgrades to v2 at most), no data file rewritten.
        Returns the version it had; the same version is no change."""
        table = self.call(lambda: self.load_table(namespace, name), f"load {namespace}.{name}")
        current = table.format_version
        if current > version:
            raise CatalogError(
                f"`{namespace}.{name}` is at Iceberg format v{current}: a table's format "
                f"version never goes down (to v{version}). Fix: keep it at v{current}"
            )
        if current < version:
            if self.run_sql is None:
                raise CatalogError(
                    f"`{namespace}.{name}`: no Spark connection is open to upgrade it"
                )
            self.run_sql(upgrade_sql(table_identifier(self.config.name, namespace, name), version))
        return current

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
            table = self.load_table(namespace, name)
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

        return self.call(read, f"row lineage of {namespace}.{name}")

    def set_properties_if_changed(
        self,
        namespace: str,
        name: str,
        properties: dict[str, str],
        remove: tuple[str, ...] = (),
    ) -> bool:
        """Set the table properties that differ from `properties` and remove those in
        `remove`, in one commit (two through Spark SQL, see `commit`); True if a commit was
        made."""

        def update() -> bool:
            table = self.load_table(namespace, name)
            change = MetadataChange(
                set_properties={
                    k: v for k, v in properties.items() if table.properties.get(k) != v
                },
                remove_properties=[k for k in remove if k in table.properties],
            )
            self.commit(namespace, name, table, change)
            return bool(change)

        return self.call(update, f"properties of {namespace}.{name}")

    def evolve_schema(
        self,
        namespace: str,
        name: str,
        added: list[tuple[tuple[str, ...], IcebergType]],
        widened: list[tuple[tuple[str, ...], IcebergType]],
    ) -> None:
        """Add columns (top-level or inside structs) and widen types in one schema commit.
        Never drops a column."""

        def commit() -> None:
            table = self.load_table(namespace, name)
            change = MetadataChange(
                add_columns=[ColumnChange(path, field_type) for path, field_type in added],
                update_columns=[ColumnChange(path, field_type) for path, field_type in widened],
            )
            self.commit(namespace, name, table, change)

        self.call(commit, f"schema of {namespace}.{name}")

    def drop_columns(self, namespace: str, name: str, columns: list[str]) -> None:
        """Remove top-level columns (names compare case-insensitively) in one schema
        commit; those the table does not have are skipped."""

        def commit() -> None:
            table = self.load_table(namespace, name)
            fields = {f.name.lower(): f.name for f in table.schema().fields}
            present = [fields[c.lower()] for c in columns if c.lower() in fields]
            self.commit(namespace, name, table, MetadataChange(delete_columns=present))

        self.call(commit, f"schema of {namespace}.{name}")

    def branches(self, namespace: str, name: str) -> Branches:
        """The table's branches other than main, with its properties, from one load."""
        from pyiceberg.table.refs import MAIN_BRANCH, SnapshotRefType

        def load() -> Branches:
            table = self.load_table(namespace, name)
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

        return self.call(load, f"branches of {namespace}.{name}")

    def evolve_partition_spec(
        self,
        namespace: str,
        name: str,
        removed: list[str],
        added: list[tuple[str, Transform[Any, Any]]],
    ) -> None:
        """Remove partition fields (by name) and add fields (source column, transform) in
        one metadata commit. Data files keep the spec they were written with; new writes
        use the new one."""

        def commit() -> None:
            table = self.load_table(namespace, name)
            change = MetadataChange(remove_partition_fields=removed, add_partition_fields=added)
            self.commit(namespace, name, table, change)

        self.call(commit, f"partition spec of {namespace}.{name}")

    def holds_files_of_other_specs(self, namespace: str, name: str) -> bool:
        """Whether the table's current snapshot has live data files written under a
        partition spec other than the current one; from its manifest list alone."""
        from pyiceberg.manifest import ManifestContent

        def read() -> bool:
            table = self.load_table(namespace, name)
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

        return self.call(read, f"partition specs of {namespace}.{name}'s files")

    def source_last_modified(self, namespace: str, name: str) -> datetime | None:
        """`last_modified` of a source (`dbt source freshness` without `loaded_at_field`),
        or one sentence saying the table does not exist and what to fix."""
        try:
            return self.last_modified(namespace, name)
        except (NoSuchTableError, NoSuchNamespaceError):
            raise CatalogError(
                f"Source table {namespace}.{name} does not exist in catalog "
                f"`{self.config.name}`: metadata-based freshness reads its last snapshot. Fix "
                "the source's schema or identifier, or set `loaded_at_field`"
            ) from None

    def last_modified(self, namespace: str, name: str) -> datetime | None:
        """When the table's current snapshot was committed (None before the first one);
        raises NoSuchTableError when there is no such table."""

        def load() -> datetime | None:
            snapshot = self.load_table(namespace, name).current_snapshot()
            if snapshot is None:
                return None
            return datetime.fromtimestamp(snapshot.timestamp_ms / 1000, tz=timezone.utc)

        return self.call(load, f"last snapshot of {namespace}.{name}")

    def snapshot_log(self, namespace: str, name: str) -> tuple[list[SnapshotEntry], int | None]:
        """The table's snapshot log (oldest first, each entry with the dbt run that made
        it and its operation) and its current snapshot id."""

        def read() -> tuple[list[SnapshotEntry], int | None]:
            table = self.load_table(namespace, name)
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
                    )
                )
            current = table.current_snapshot()
            return entries, current.snapshot_id if current else None

        return self.call(read, f"snapshot log of {namespace}.{name}")

    def lineage(
        self, namespace: str, name: str, tag_prefix: str, branch: str | None = None
    ) -> Lineage:
        """The table's uuid, history and head's columns from one load: main's ancestors
        (or `branch`'s), each with its summary entries under `tag_prefix`."""

        def read() -> Lineage:
            table = self.load_table(namespace, name)
            head = table.snapshot_by_name(branch) if branch else table.current_snapshot()
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
            )

        return self.call(read, f"history of {namespace}.{name}")

    def table_health(self, namespace: str, name: str) -> TableHealth:
        """Live data and delete files, their bytes and the snapshots kept, from the current
        snapshot's summary totals (what maintenance changes)."""

        def read() -> TableHealth:
            table = self.load_table(namespace, name)
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

        return self.call(read, f"health of {namespace}.{name}")

    def require_columns(self, namespace: str, name: str, columns: list[str]) -> list[str]:
        """Make these columns required fields (NOT NULL) in one schema commit, unless they
        already are; returns those it changed. The caller has checked the rows: Iceberg
        calls optional-to-required an incompatible change because it cannot."""

        def commit() -> list[str]:
            table = self.load_table(namespace, name)
            fields = {f.name.lower(): f for f in table.schema().fields}
            changed = [
                fields[c.lower()].name
                for c in columns
                if c.lower() in fields and not fields[c.lower()].required
            ]
            required = [ColumnChange((column,), required=True) for column in changed]
            self.commit(namespace, name, table, MetadataChange(update_columns=required))
            return changed

        return self.call(commit, f"required columns of {namespace}.{name}")

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
            table = self.load_table(relation.namespace, relation.name)
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

        return self.call(load, f"details of {relation.namespace}.{relation.name}")

    # PyIceberg's SqlCatalog has no view support (list_views raises NotImplementedError),
    # but the JDBC catalog schema V1 keeps views as rows with iceberg_type = 'VIEW'.
    def _embedded(self) -> SqlCatalog | None:
        """The catalog, when it is the embedded (SQL) catalog."""
        from pyiceberg.catalog.sql import SqlCatalog

        return self.catalog if isinstance(self.catalog, SqlCatalog) else None

    def _list_view_names(self, namespace: str) -> list[str]:
        if self._embedded() is None:
            return [v[-1] for v in self.catalog.list_views(namespace)]
        return [row[0] for row in self._sql_view_rows(namespace)]

    def _sql_view_rows(self, namespace: str, name: str | None = None) -> list[Any]:
        from sqlalchemy import text

        embedded = self._embedded()
        assert embedded is not None
        query = (
            "SELECT table_name, metadata_location FROM iceberg_tables "
            "WHERE catalog_name = :catalog AND table_namespace = :namespace "
            "AND iceberg_type = 'VIEW'"
        )
        params = {"catalog": self.config.name, "namespace": namespace}
        if name is not None:
            query += " AND table_name = :name"
            params["name"] = name
        with embedded.engine.connect() as connection:
            return list(connection.execute(text(query), params))

    def _view_metadata(self, namespace: str, name: str) -> dict[str, Any]:
        """The view's Iceberg metadata document."""
        if self._embedded() is None:
            return self.catalog.load_view((namespace, name)).metadata.model_dump(by_alias=True)
        rows = self._sql_view_rows(namespace, name)
        if not rows:
            raise LookupError(f"view {namespace}.{name} not found in the catalog")
        from pyiceberg.io import load_file_io

        location = rows[0][1]
        io = load_file_io(self.catalog.properties, location)
        with io.new_input(location).open() as stream:
            raw = stream.read()
        if location.endswith(".gz.metadata.json"):
            raw = gzip.decompress(raw)
        document: dict[str, Any] = json.loads(raw)
        return document

    def _view_schema(self, namespace: str, name: str) -> Schema:
        return view_schema_from_metadata(self._view_metadata(namespace, name))

    def _drop_view(self, identifier: tuple[str, str]) -> None:
        embedded = self._embedded()
        if embedded is None:
            self.catalog.drop_view(identifier)
            return
        from sqlalchemy import text

        with embedded.engine.begin() as connection:
            connection.execute(
                text(
                    "DELETE FROM iceberg_tables WHERE catalog_name = :catalog "
                    "AND table_namespace = :namespace AND table_name = :name "
                    "AND iceberg_type = 'VIEW'"
                ),
                {"catalog": self.config.name, "namespace": identifier[0], "name": identifier[1]},
            )


@cache
def iceberg_catalog_for(config: CatalogConfig) -> IcebergCatalog:
    """One PyIceberg catalog per catalog description and process, shared by all threads."""
    return IcebergCatalog(config)
