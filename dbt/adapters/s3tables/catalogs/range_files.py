"""The data files a range of an Iceberg table's commits changed, planned on dbt's host
with PyIceberg, for an engine that reads through SQL only (a Spark server: `method:
thrift` or `connect`), which cannot stage Iceberg's scan tasks as Spark in dbt's process
does (engines/file_changes.py). Between the range's start snapshot S and end E:

- a data file E has and S has not (added): its rows at E;
- a data file S has and E has not (removed): its rows at S;
- a data file both have whose position deletes changed (touched): its rows at the
  positions E deletes and S did not.

Each file comes with the position delete files that apply to it at its snapshot, and how
the table's columns now are named in it (a renamed or added column: its field id, read
from the file's Parquet footer only when the table has had more than one schema). Where
this cannot be exact, `fallback` says why, and the caller compares the two snapshots
whole: a format v3 table (PyIceberg 0.12 reads no deletion vectors), equality deletes,
nested columns whose fields changed, columns changed after the range.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dbt.adapters.s3tables.sql.types import spark_type_name

if TYPE_CHECKING:
    from pyiceberg.schema import Schema
    from pyiceberg.table import FileScanTask, Table


# Why a format v3 upstream is compared whole (PyIceberg 0.12 reads no deletion vectors).
V3_DELETION_VECTORS = (
    "a format v3 upstream's deletion vectors are read by no SQL reader of its files"
)


@dataclass(frozen=True)
class FileColumn:
    """A column of the table now: its name, its Spark type, and its name in the data file
    (None: the file predates it, and holds NULL)."""

    name: str
    spark_type: str
    in_file: str | None


@dataclass(frozen=True)
class FileAt:
    """A data file at one snapshot: its location, the position delete files that apply to
    it there, and the columns read from it."""

    path: str
    deletes: tuple[str, ...]
    columns: tuple[FileColumn, ...]


@dataclass(frozen=True)
class RangePlan:
    """What the range changed, file by file (or why it cannot be read so)."""

    # The table's columns read (their names in a file are each file's own).
    columns: tuple[FileColumn, ...] = ()
    added: tuple[FileAt, ...] = ()
    removed: tuple[FileAt, ...] = ()
    # (at the start, at the end)
    touched: tuple[tuple[FileAt, FileAt], ...] = ()
    fallback: str | None = None
    described: str = field(default="", compare=False)


def _tasks_at(table: Table, snapshot: int) -> dict[str, FileScanTask]:
    return {task.file.file_path: task for task in table.scan(snapshot_id=snapshot).plan_files()}


def _field_names(table: Table, path: str) -> dict[int, str]:
    """The data file's column names by Iceberg field id, from its Parquet footer."""
    import pyarrow.parquet as parquet

    with table.io.new_input(path).open() as stream:
        schema = parquet.read_schema(stream)
    names = {}
    for column in schema:
        identifier = (column.metadata or {}).get(b"PARQUET:field_id")
        if identifier is not None:
            names[int(identifier)] = column.name
    return names


def _file_at(
    table: Table,
    task: FileScanTask,
    schema: Schema,
    columns: Sequence[str],
    footers: dict[str, dict[int, str]],
) -> FileAt:
    """`task`'s file with the table's `columns` as it names them; `footers`: the field
    names of the files read so far (a touched file is planned at both ends)."""
    one_schema = len(table.metadata.schemas) == 1
    path = task.file.file_path
    if not one_schema and path not in footers:
        footers[path] = _field_names(table, path)
    names = {} if one_schema else footers[path]
    read = []
    for name in columns:
        column = schema.find_field(name, case_sensitive=False)
        in_file = column.name if one_schema else names.get(column.field_id)
        read.append(FileColumn(column.name, spark_type_name(column.field_type), in_file))
    deletes = tuple(sorted(d.file_path for d in task.delete_files))
    return FileAt(task.file.file_path, deletes, tuple(read))


def _unreadable(table: Table, tasks: Sequence[FileScanTask], columns: Sequence[str]) -> str | None:
    """Why these files cannot be read exactly through SQL, or None."""
    from pyiceberg.manifest import DataFileContent
    from pyiceberg.types import PrimitiveType

    for task in tasks:
        if any(d.content == DataFileContent.EQUALITY_DELETES for d in task.delete_files):
            return "the upstream has equality deletes (not written by Spark)"
    schema = table.schema()
    if len(table.metadata.schemas) > 1:
        for name in columns:
            column_type = schema.find_field(name, case_sensitive=False).field_type
            if not isinstance(column_type, PrimitiveType):
                return "a nested column of an upstream whose columns changed over its history"
    return None


def plan_range_files(table: Table, start: int, end: int, columns: Sequence[str]) -> RangePlan:
    """The files the commits after snapshot `start` up to `end` changed (see the module
    docstring), each with the table's `columns` (none: every column) as it holds them."""
    columns = columns or [f.name for f in table.schema().fields]
    if table.format_version >= 3:
        return RangePlan(fallback=V3_DELETION_VECTORS)
    end_snapshot = table.snapshot_by_id(end)
    if end_snapshot is None or end_snapshot.schema_id != table.schema().schema_id:
        return RangePlan(fallback="the upstream's columns changed after the range")
    at_start, at_end = _tasks_at(table, start), _tasks_at(table, end)
    added = [at_end[path] for path in sorted(at_end.keys() - at_start.keys())]
    removed = [at_start[path] for path in sorted(at_start.keys() - at_end.keys())]
    both = sorted(at_start.keys() & at_end.keys())
    touched = [
        (at_start[path], at_end[path])
        for path in both
        if {d.file_path for d in at_start[path].delete_files}
        != {d.file_path for d in at_end[path].delete_files}
    ]
    involved = [*added, *removed, *(task for pair in touched for task in pair)]
    problem = _unreadable(table, involved, columns)
    if problem is not None:
        return RangePlan(fallback=problem)
    schema = table.schema()
    footers: dict[str, dict[int, str]] = {}

    def at(task: FileScanTask) -> FileAt:
        return _file_at(table, task, schema, columns, footers)

    return RangePlan(
        columns=tuple(
            FileColumn(f.name, spark_type_name(f.field_type), f.name)
            for f in (schema.find_field(name, case_sensitive=False) for name in columns)
        ),
        added=tuple(at(task) for task in added),
        removed=tuple(at(task) for task in removed),
        touched=tuple((at(s), at(e)) for s, e in touched),
        described=(
            f"{len(added)} data files added, {len(removed)} removed, {len(touched)} with rows "
            "deleted"
        ),
    )
