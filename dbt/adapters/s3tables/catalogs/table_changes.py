"""Changes to a table's metadata through PyIceberg (`TableChanges`): the state an
incremental run reads before changing a table, then schema and partition evolution,
properties and format upgrades, each one commit.

A commit goes through PyIceberg, or through Spark SQL where PyIceberg cannot write the
table's metadata (format v3 on a catalog whose metadata files PyIceberg writes itself).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.s3tables.catalogs.access import CatalogAccess
from dbt.adapters.s3tables.catalogs.metadata_changes import (
    ColumnChange,
    MetadataChange,
    UnsupportedThroughSql,
    apply_with_pyiceberg,
    pyiceberg_writes,
    spark_sql,
    upgrade_sql,
)
from dbt.adapters.s3tables.catalogs.relations import ColumnInfo, schema_columns
from dbt.adapters.s3tables.catalogs.snapshots import INVOCATION_KEY, NODE_KEY
from dbt.adapters.s3tables.errors import CatalogError
from dbt.adapters.s3tables.sql.text import procedure_call, table_identifier

if TYPE_CHECKING:
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.table import Table
    from pyiceberg.transforms import Transform
    from pyiceberg.types import IcebergType

logger = AdapterLogger("s3tables")


@dataclass(frozen=True)
class Commit:
    """One commit of a table's history: its Iceberg operation, and the dbt invocation and
    node that made it (None: untagged, by a writer outside dbt or an engine that cannot
    tag its commits)."""

    operation: str
    invocation_id: str | None = None
    node: str | None = None


class MainMoved(Exception):
    """A branch's publish (or creation) found main no longer at the snapshot it was to
    start from: `current` is main's snapshot now, `since` the commits after the base in
    main's history, oldest first (None: the base is not in it: the table was rolled back
    or replaced)."""

    def __init__(self, current: int | None, since: list[Commit] | None) -> None:
        super().__init__(f"main is at snapshot {current}")
        self.current = current
        self.since = since


def check_main_at(table: Table, base: int | None) -> None:
    """Raise MainMoved unless the loaded `table`'s main is at snapshot `base`."""
    current = table.current_snapshot()
    current_id = current.snapshot_id if current else None
    if current_id == base:
        return
    since: list[Commit] = []
    snapshot = current
    while snapshot is not None and snapshot.snapshot_id != base:
        summary = snapshot.summary
        tags = summary.additional_properties if summary is not None else {}
        operation = summary.operation.value if summary is not None else "unknown"
        since.insert(0, Commit(operation, tags.get(INVOCATION_KEY), tags.get(NODE_KEY)))
        parent = snapshot.parent_snapshot_id
        snapshot = table.snapshot_by_id(parent) if parent is not None else None
    raise MainMoved(current_id, since if snapshot is not None else None)


def property_change(
    table: Table, properties: dict[str, str], remove: tuple[str, ...]
) -> MetadataChange:
    """The loaded `table`'s properties that differ from `properties` set, and those of
    `remove` it has removed."""
    return MetadataChange(
        set_properties={k: v for k, v in properties.items() if table.properties.get(k) != v},
        remove_properties=[k for k in remove if k in table.properties],
    )


@dataclass(frozen=True)
class TableState:
    """One metadata read of a table: what an incremental run needs before and after."""

    schema: Schema
    properties: dict[str, str]
    snapshot_id: int | None
    summary: dict[str, str]
    spec: PartitionSpec
    format_version: int
    # The table as loaded for this state: the next commit of the same step may start from
    # it instead of loading it again (`_commit_to`).
    loaded: Table | None = field(default=None, compare=False, repr=False)

    @property
    def columns(self) -> list[ColumnInfo]:
        return schema_columns(self.schema)


class TableChanges:
    """A table's state, and the metadata commits that change it."""

    def __init__(self, access: CatalogAccess) -> None:
        self.access = access
        # Set by the connection: runs a Spark SQL statement (changes to format-v3 tables
        # where PyIceberg cannot write their metadata, see `commit`).
        self.run_sql: Callable[[str], None] | None = None

    def table_state(self, namespace: str, name: str, branch: str | None = None) -> TableState:
        """Columns, properties and current snapshot (id and summary) from one load; the
        snapshot of `branch` when given and the table has it (else main's)."""

        def load() -> TableState:
            table = self.access.load_table(namespace, name)
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
                loaded=table,
            )

        return self.access.call(load, f"state of {namespace}.{name}")

    def writes_metadata_through_sql(self, format_version: int) -> bool:
        """Whether a table at `format_version` has its metadata changes made through Spark
        SQL: PyIceberg writes this catalog's metadata files itself (the embedded catalog)
        and cannot write that version's (v3, PyIceberg 0.12). A REST catalog's server
        writes the metadata: PyIceberg's commits work there on every version."""
        return self.access.config.kind.client_writes_metadata and not pyiceberg_writes(
            format_version
        )

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
        identifier = table_identifier(self.access.config.name, namespace, name)
        fast_forward = procedure_call(
            self.access.config.name,
            namespace,
            name,
            "fast_forward",
            "branch => 'main'",
            "to => {branch}",
        )
        try:
            statements = spark_sql(identifier, change, fast_forward)
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

    def _commit_to(
        self,
        namespace: str,
        name: str,
        what: str,
        make: Callable[[Table], MetadataChange],
        loaded: Table | None = None,
    ) -> MetadataChange:
        """Load the table (or start from `loaded`, the table as loaded moments before),
        commit the change `make` derives from it (see `commit`), in one catalog operation;
        returns the change. The commit asserts what the change was derived from (main's
        snapshot for a fast-forward): when another commit landed since the load, the
        catalog refuses it, and the retry loads the table again."""
        first = [loaded] if loaded is not None else []

        def commit() -> MetadataChange:
            table = first.pop() if first else self.access.load_table(namespace, name)
            change = make(table)
            self.commit(namespace, name, table, change)
            return change

        return self.access.call(commit, f"{what} of {namespace}.{name}")

    def upgrade_format_version(self, namespace: str, name: str, version: int) -> int:
        """Raise the table's format version to `version` in place: one metadata commit
        through Spark SQL (PyIceberg 0.12 upgrades to v2 at most), no data file rewritten.
        Returns the version it had; the same version is no change."""
        table = self.access.call(
            lambda: self.access.load_table(namespace, name), f"load {namespace}.{name}"
        )
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
            identifier = table_identifier(self.access.config.name, namespace, name)
            self.run_sql(upgrade_sql(identifier, version))
        return current

    def create_branch(
        self,
        namespace: str,
        name: str,
        branch: str,
        base: int,
        stale: Callable[[list[str]], list[str]] = lambda names: [],
        loaded: Table | None = None,
    ) -> None:
        """Create `branch` at snapshot `base`, main's current one (else MainMoved), and
        remove the branches `stale` picks among the table's, in one commit. From `loaded`
        (see `_commit_to`), main is checked as that load saw it: the commit asserts only
        that the branch is new, so a main moved since is found by the branch's publish."""

        def change(table: Table) -> MetadataChange:
            check_main_at(table, base)
            return MetadataChange(
                create_branches={branch: base},
                remove_branches=stale([n for n in table.metadata.refs if n != "main"]),
            )

        self._commit_to(namespace, name, "branch", change, loaded)

    def remove_branch(self, namespace: str, name: str, branch: str) -> None:
        """Remove `branch` (one the table no longer has is removed already)."""

        def change(table: Table) -> MetadataChange:
            return MetadataChange(remove_branches=[branch] if branch in table.metadata.refs else [])

        self._commit_to(namespace, name, "branch", change)

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
        """Main fast-forwarded to `branch`'s head, only from snapshot `base` (else
        MainMoved, nothing changed), the branch removed and the table properties set and
        removed, in one commit (several through Spark SQL, see `commit`: the fast-forward
        first, which Iceberg refuses unless main is an ancestor of the branch's head), from
        `loaded` (see `_commit_to`)."""

        def change(table: Table) -> MetadataChange:
            check_main_at(table, base)
            change = property_change(table, properties, remove)
            change.fast_forward_to, change.remove_branches = branch, [branch]
            return change

        self._commit_to(namespace, name, "publish", change, loaded)

    def set_properties_at(
        self,
        namespace: str,
        name: str,
        base: int | None,
        properties: dict[str, str],
        remove: tuple[str, ...] = (),
    ) -> bool:
        """`set_properties_if_changed`, only while main is at snapshot `base` (else
        MainMoved, nothing changed); True if a commit was made."""

        def change(table: Table) -> MetadataChange:
            check_main_at(table, base)
            return property_change(table, properties, remove)

        return bool(self._commit_to(namespace, name, "properties", change))

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

        return bool(
            self._commit_to(
                namespace, name, "properties", lambda t: property_change(t, properties, remove)
            )
        )

    def evolve_schema(
        self,
        namespace: str,
        name: str,
        added: list[tuple[tuple[str, ...], IcebergType]],
        widened: list[tuple[tuple[str, ...], IcebergType]],
    ) -> None:
        """Add columns (top-level or inside structs) and widen types in one schema commit.
        Never drops a column."""
        change = MetadataChange(
            add_columns=[ColumnChange(path, field_type) for path, field_type in added],
            update_columns=[ColumnChange(path, field_type) for path, field_type in widened],
        )
        self._commit_to(namespace, name, "schema", lambda _: change)

    def drop_columns(self, namespace: str, name: str, columns: list[str]) -> None:
        """Remove top-level columns (names compare case-insensitively) in one schema
        commit; those the table does not have are skipped."""

        def change(table: Table) -> MetadataChange:
            fields = {f.name.lower(): f.name for f in table.schema().fields}
            present = [fields[c.lower()] for c in columns if c.lower() in fields]
            return MetadataChange(delete_columns=present)

        self._commit_to(namespace, name, "schema", change)

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
        change = MetadataChange(remove_partition_fields=removed, add_partition_fields=added)
        self._commit_to(namespace, name, "partition spec", lambda _: change)

    def require_columns(self, namespace: str, name: str, columns: list[str]) -> list[str]:
        """Make these columns required fields (NOT NULL) in one schema commit, unless they
        already are; returns those it changed. The caller has checked the rows: Iceberg
        calls optional-to-required an incompatible change because it cannot."""

        def change(table: Table) -> MetadataChange:
            fields = {f.name.lower(): f for f in table.schema().fields}
            changed = [
                fields[c.lower()].name
                for c in columns
                if c.lower() in fields and not fields[c.lower()].required
            ]
            return MetadataChange(
                update_columns=[ColumnChange((c,), required=True) for c in changed]
            )

        required = self._commit_to(namespace, name, "required columns", change)
        return [column.path[0] for column in required.update_columns]
