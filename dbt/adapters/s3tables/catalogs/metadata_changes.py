"""A table metadata change as data, applied by PyIceberg in one transaction or, where
PyIceberg cannot write the table's metadata, as Iceberg Spark SQL statements.

PyIceberg 0.12 reads format-v3 tables but refuses to write their metadata ("Writing V3 is
not yet supported"). Where PyIceberg writes the metadata file itself (the embedded catalog,
Glue), a change to a v3 table is rendered as Spark SQL instead (`spark_sql`), which Java
Iceberg commits: one commit per statement, where PyIceberg makes one per change. A REST
catalog (S3 Tables) writes metadata on the server, so PyIceberg's commit works there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dbt.adapters.s3tables.keys.format_version import FORMAT_VERSION_PROPERTY
from dbt.adapters.s3tables.sql.text import quote, sql_string
from dbt.adapters.s3tables.sql.types import spark_type_name

if TYPE_CHECKING:
    from pyiceberg.table import Table
    from pyiceberg.transforms import Transform
    from pyiceberg.types import IcebergType

# The first format version whose metadata PyIceberg 0.12 cannot write.
FIRST_UNWRITABLE_FORMAT_VERSION = 3


class UnsupportedThroughSql(Exception):
    """A change Spark SQL cannot make on a table whose metadata PyIceberg cannot write."""


@dataclass(frozen=True)
class ColumnChange:
    """A column, by its path (`("point", "x")` is a struct's field), added or changed."""

    path: tuple[str, ...]
    # Added: the column's type. Changed: the widened type, or None to keep it.
    field_type: IcebergType | None = None
    doc: str | None = None
    required: bool = False


@dataclass
class MetadataChange:
    """What one commit changes; empty parts change nothing."""

    set_properties: dict[str, str] = field(default_factory=dict)
    remove_properties: list[str] = field(default_factory=list)
    add_columns: list[ColumnChange] = field(default_factory=list)
    update_columns: list[ColumnChange] = field(default_factory=list)
    delete_columns: list[str] = field(default_factory=list)
    remove_partition_fields: list[str] = field(default_factory=list)
    add_partition_fields: list[tuple[str, Transform[Any, Any]]] = field(default_factory=list)
    # Branches created at a snapshot (name to snapshot id).
    create_branches: dict[str, int] = field(default_factory=dict)
    # The branch whose head main takes (a fast-forward: the caller checked main is at the
    # branch's base; the commit asserts main is still where the table was loaded).
    fast_forward_to: str | None = None
    remove_branches: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return any(
            (
                self.create_branches,
                self.fast_forward_to,
                self.remove_branches,
                self.set_properties,
                self.remove_properties,
                self.add_columns,
                self.update_columns,
                self.delete_columns,
                self.remove_partition_fields,
                self.add_partition_fields,
            )
        )

    @property
    def changes_schema(self) -> bool:
        return bool(self.add_columns or self.update_columns or self.delete_columns)

    @property
    def changes_spec(self) -> bool:
        return bool(self.remove_partition_fields or self.add_partition_fields)

    @property
    def changes_refs(self) -> bool:
        return bool(self.create_branches or self.fast_forward_to or self.remove_branches)


def apply_with_pyiceberg(table: Table, change: MetadataChange) -> None:
    """The change as one PyIceberg transaction (one commit)."""
    from pyiceberg.table.update.snapshot import ManageSnapshots
    from pyiceberg.table.update.spec import UpdateSpec

    with table.transaction() as transaction:
        if change.changes_refs:
            # The fast-forward goes first: its requirement, main still at the snapshot the
            # table was loaded with, is the one the commit asserts (PyIceberg keeps one
            # requirement of each kind, the first).
            with ManageSnapshots(transaction) as refs:
                if change.fast_forward_to:
                    refs.set_current_snapshot(ref_name=change.fast_forward_to)
                for branch, snapshot_id in change.create_branches.items():
                    refs.create_branch(snapshot_id, branch)
                for branch in change.remove_branches:
                    refs.remove_branch(branch)
        if change.set_properties:
            transaction.set_properties(change.set_properties)
        if change.remove_properties:
            transaction.remove_properties(*change.remove_properties)
        if change.changes_schema:
            # Optional to required is what Iceberg calls incompatible: the caller checked
            # the rows.
            requires = any(c.required for c in change.update_columns)
            with transaction.update_schema(allow_incompatible_changes=requires) as update:
                for column in change.add_columns:
                    assert column.field_type is not None, column
                    update.add_column(column.path, column.field_type, doc=column.doc)
                for column in change.update_columns:
                    update.update_column(
                        column.path,
                        field_type=column.field_type,
                        required=True if column.required else None,
                        doc=column.doc,
                    )
                for name in change.delete_columns:
                    update.delete_column(name)
        if change.changes_spec:
            # Spark resolves column names case-insensitively; so must the spec's sources.
            with UpdateSpec(transaction, case_sensitive=False) as spec:
                for name in change.remove_partition_fields:
                    spec.remove_field(name)
                for source, transform in change.add_partition_fields:
                    spec.add_field(source, transform)


def column_path(path: tuple[str, ...]) -> str:
    return ".".join(quote(part) for part in path)


def transform_sql(source: str, transform: Transform[Any, Any]) -> str:
    """A partition field in Spark SQL's spelling (`bucket(16, id)`, `days(ts)`)."""
    from pyiceberg.transforms import (
        BucketTransform,
        DayTransform,
        HourTransform,
        IdentityTransform,
        MonthTransform,
        TruncateTransform,
        YearTransform,
    )

    column = quote(source)
    if isinstance(transform, IdentityTransform):
        return column
    if isinstance(transform, BucketTransform):
        return f"bucket({transform.num_buckets}, {column})"
    if isinstance(transform, TruncateTransform):
        return f"truncate({transform.width}, {column})"
    named = {
        YearTransform: "years",
        MonthTransform: "months",
        DayTransform: "days",
        HourTransform: "hours",
    }
    for kind, function in named.items():
        if isinstance(transform, kind):
            return f"{function}({column})"
    raise UnsupportedThroughSql(f"the partition transform `{transform}` has no Spark SQL form")


def spark_sql(identifier: str, change: MetadataChange, fast_forward: str = "") -> list[str]:
    """The change as Iceberg Spark SQL statements, each one commit, in an order that keeps
    each statement valid (columns exist before a partition field reads them; main takes a
    branch's head before the branch goes). `fast_forward`: the `CALL` of Iceberg's
    fast_forward procedure on the table, `{branch}` in place of the branch main takes,
    which fails unless main is an ancestor of the branch's head."""
    if any(c.required for c in change.update_columns):
        raise UnsupportedThroughSql(
            "Spark refuses `ALTER COLUMN ... SET NOT NULL` on Iceberg tables, so a column "
            "cannot become NOT NULL in place"
        )
    statements: list[str] = [
        f"ALTER TABLE {identifier} CREATE BRANCH {quote(branch)} AS OF VERSION {snapshot_id}"
        for branch, snapshot_id in change.create_branches.items()
    ]
    if change.fast_forward_to:
        if not fast_forward:
            raise UnsupportedThroughSql("main cannot be fast-forwarded without the procedure")
        statements.append(fast_forward.replace("{branch}", sql_string(change.fast_forward_to)))
    if change.set_properties:
        pairs = ", ".join(
            f"{sql_string(key)} = {sql_string(value)}"
            for key, value in change.set_properties.items()
        )
        statements.append(f"ALTER TABLE {identifier} SET TBLPROPERTIES ({pairs})")
    if change.remove_properties:
        keys = ", ".join(sql_string(key) for key in change.remove_properties)
        statements.append(f"ALTER TABLE {identifier} UNSET TBLPROPERTIES IF EXISTS ({keys})")
    if change.add_columns:
        columns = []
        for column in change.add_columns:
            assert column.field_type is not None, column
            text = f"{column_path(column.path)} {spark_type_name(column.field_type)}"
            if column.doc is not None:
                text += f" COMMENT {sql_string(column.doc)}"
            columns.append(text)
        statements.append(f"ALTER TABLE {identifier} ADD COLUMNS ({', '.join(columns)})")
    for column in change.update_columns:
        path = column_path(column.path)
        if column.field_type is not None:
            type_name = spark_type_name(column.field_type)
            statements.append(f"ALTER TABLE {identifier} ALTER COLUMN {path} TYPE {type_name}")
        if column.doc is not None:
            doc = sql_string(column.doc)
            statements.append(f"ALTER TABLE {identifier} ALTER COLUMN {path} COMMENT {doc}")
    if change.delete_columns:
        names = ", ".join(quote(name) for name in change.delete_columns)
        statements.append(f"ALTER TABLE {identifier} DROP COLUMNS ({names})")
    for name in change.remove_partition_fields:
        statements.append(f"ALTER TABLE {identifier} DROP PARTITION FIELD {quote(name)}")
    for source, transform in change.add_partition_fields:
        statements.append(
            f"ALTER TABLE {identifier} ADD PARTITION FIELD {transform_sql(source, transform)}"
        )
    statements += [
        f"ALTER TABLE {identifier} DROP BRANCH IF EXISTS {quote(branch)}"
        for branch in change.remove_branches
    ]
    return statements


def upgrade_sql(identifier: str, version: int) -> str:
    """Raise a table's format version in place: one metadata commit, no data rewritten."""
    return (
        f"ALTER TABLE {identifier} SET TBLPROPERTIES "
        f"({sql_string(FORMAT_VERSION_PROPERTY)} = {sql_string(str(version))})"
    )


def pyiceberg_writes(format_version: int) -> bool:
    """Whether PyIceberg can write the metadata of a table at `format_version`."""
    return format_version < FIRST_UNWRITABLE_FORMAT_VERSION
