"""Reading an Iceberg table's data files one by one through SQL (sql/file_reads.py): the
statements a Spark server runs for a range read file by file. Run for real over a Thrift
server and Spark Connect (test_engines.py, test_connect_engine.py)."""

from __future__ import annotations

from dbt.adapters.s3tables.catalogs.range_files import FileAt, FileColumn
from dbt.adapters.s3tables.sql.file_reads import (
    file_rows_sql,
    newly_deleted_rows_sql,
    positions_sql,
    projection,
    undone_positions_sql,
    union_sql,
)

COLUMNS = (
    FileColumn("id", "int", "id"),
    FileColumn("name", "string", "old_name"),
    FileColumn("tier", "string", None),
)
PLAIN = FileAt("s3://b/data/a.parquet", (), COLUMNS)
DELETED = FileAt(
    "s3://b/data/a.parquet", ("s3://b/data/d1.parquet", "s3://b/data/d2.parquet"), COLUMNS
)


def test_each_column_by_its_name_in_the_file_cast_to_its_type_now() -> None:
    assert projection(COLUMNS, "f") == (
        "CAST(f.`id` AS int) AS `id`, CAST(f.`old_name` AS string) AS `name`, "
        "CAST(NULL AS string) AS `tier`"
    )


def test_a_file_without_deletes_is_read_whole_with_positions() -> None:
    sql = file_rows_sql(PLAIN)
    assert "_metadata.row_index AS dbt_pos FROM parquet.`s3://b/data/a.parquet`" in sql
    assert "JOIN" not in sql


def test_a_files_deleted_positions_are_left_out() -> None:
    sql = file_rows_sql(DELETED)
    assert (
        "LEFT ANTI JOIN (SELECT pos FROM parquet.`s3://b/data/d1.parquet` WHERE file_path = 's3://b/data/a.parquet'"
        in sql
    )
    assert "UNION ALL\nSELECT pos FROM parquet.`s3://b/data/d2.parquet`" in sql
    assert sql.endswith("ON dbt_file.dbt_pos = dbt_deleted.pos")


def test_the_rows_the_range_deleted_are_the_ends_positions_less_the_starts() -> None:
    at_start = FileAt(PLAIN.path, ("s3://b/data/d1.parquet",), COLUMNS)
    at_end = FileAt(PLAIN.path, ("s3://b/data/d1.parquet", "s3://b/data/d2.parquet"), COLUMNS)
    sql = newly_deleted_rows_sql(at_start, at_end)
    assert "LEFT SEMI JOIN" in sql and "LEFT ANTI JOIN" in sql
    assert undone_positions_sql(at_start, at_end) is not None
    assert undone_positions_sql(PLAIN, at_end) is None
    assert positions_sql(PLAIN.path, ()) is None


def test_no_parts_are_no_rows_of_the_tables_columns() -> None:
    assert union_sql([], COLUMNS) == (
        "SELECT CAST(NULL AS int) AS `id`, CAST(NULL AS string) AS `name`, "
        "CAST(NULL AS string) AS `tier` WHERE false"
    )
    assert union_sql(["SELECT 1", "SELECT 2"], COLUMNS).count("UNION ALL") == 1
