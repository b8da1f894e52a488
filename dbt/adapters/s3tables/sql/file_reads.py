"""Spark SQL reading an Iceberg table's data files one by one, as Parquet, with the
position deletes that apply to them (pure functions; catalogs/range_files.py plans the
files): what a Spark server runs to read only the files a range of commits changed.

A file's rows are read with Spark's Parquet reader, each with its position in the file
(`_metadata.row_index`, the position Iceberg's position deletes name); the rows its
delete files name are left out. Each of the table's columns is read by its name in the
file (a column the file predates is NULL) and cast to the table's type now.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from dbt.adapters.s3tables.sql.text import quote, sql_string

POSITION = "dbt_pos"


class FileColumnLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def spark_type(self) -> str: ...

    @property
    def in_file(self) -> str | None: ...


class FileLike(Protocol):
    @property
    def path(self) -> str: ...

    @property
    def deletes(self) -> Sequence[str]: ...

    @property
    def columns(self) -> Sequence[FileColumnLike]: ...


def parquet_file(path: str) -> str:
    """Spark's name of one Parquet file as a table."""
    return "parquet." + quote(path)


def positions_sql(data_file: str, deletes: Sequence[str]) -> str | None:
    """The positions of `data_file` that the position delete files `deletes` remove, or
    None when there are none."""
    if not deletes:
        return None
    parts = [
        f"SELECT pos FROM {parquet_file(d)} WHERE file_path = {sql_string(data_file)}"
        for d in deletes
    ]
    return "\nUNION ALL\n".join(parts)


def projection(columns: Sequence[FileColumnLike], alias: str) -> str:
    """The table's columns from a file's rows (`alias`), by their names there, cast."""
    selected = []
    for column in columns:
        value = f"{alias}.{quote(column.in_file)}" if column.in_file is not None else "NULL"
        selected.append(f"CAST({value} AS {column.spark_type}) AS {quote(column.name)}")
    return ", ".join(selected)


def positioned_rows(file: FileLike) -> str:
    """The table's columns of every row of `file`, as `dbt_file`, with its position."""
    rows = f"(SELECT *, _metadata.row_index AS {POSITION} FROM {parquet_file(file.path)})"
    return f"SELECT {projection(file.columns, 'dbt_file')} FROM {rows} AS dbt_file"


def file_rows_sql(file: FileLike) -> str:
    """The rows `file` holds at its snapshot: its delete files' positions left out."""
    deleted = positions_sql(file.path, file.deletes)
    if deleted is None:
        return positioned_rows(file)
    on = f"dbt_file.{POSITION} = dbt_deleted.pos"
    return f"{positioned_rows(file)}\nLEFT ANTI JOIN ({deleted}) AS dbt_deleted ON {on}"


NO_POSITIONS = "SELECT CAST(NULL AS BIGINT) AS pos WHERE false"


def positions_without(positions: str, removed: str) -> str:
    """The positions of the query `positions` that the query `removed` does not hold."""
    return (
        f"SELECT pos FROM ({positions}) AS dbt_all "
        f"LEFT ANTI JOIN ({removed}) AS dbt_out USING (pos)"
    )


def newly_deleted_rows_sql(at_start: FileLike, at_end: FileLike) -> str:
    """The rows of a file both ends hold that the end's deletes remove and the start's
    did not: their values as at the start (a file never changes)."""
    gone = positions_sql(at_end.path, at_end.deletes) or NO_POSITIONS
    kept = positions_sql(at_start.path, at_start.deletes)
    if kept is not None:
        gone = (
            f"SELECT pos FROM ({gone}) AS dbt_gone LEFT ANTI JOIN ({kept}) AS dbt_kept USING (pos)"
        )
    on = f"dbt_file.{POSITION} = dbt_deleted.pos"
    return f"{positioned_rows(at_start)}\nLEFT SEMI JOIN ({gone}) AS dbt_deleted ON {on}"


def undone_positions_sql(at_start: FileLike, at_end: FileLike) -> str | None:
    """The positions of a file both ends hold that the start's deletes remove and the
    end's do not (a rollback within the range: no read of its files is exact), or None
    when the start deleted none."""
    was = positions_sql(at_start.path, at_start.deletes)
    if was is None:
        return None
    now = positions_sql(at_end.path, at_end.deletes)
    return was if now is None else positions_without(was, now)


def union_sql(parts: Sequence[str], columns: Sequence[FileColumnLike]) -> str:
    """The parts' rows together; no rows (of the table's `columns`) when there is none."""
    if parts:
        return "\nUNION ALL\n".join(f"SELECT * FROM ({part}) AS dbt_part" for part in parts)
    nothing = ", ".join(f"CAST(NULL AS {c.spark_type}) AS {quote(c.name)}" for c in columns)
    return f"SELECT {nothing} WHERE false"
