"""A seed value that does not fit its column type fails the load instead of becoming NULL
(the checked casts), and the text views carry each row's number for the message."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from dbt.adapters.s3tables.seeds.csv import read_seed_csv
from dbt.adapters.s3tables.seeds.values import (
    ROW_COLUMN,
    SeedColumn,
    checked_cast_sql,
    seed_select_sql,
)


def test_typed_columns_fail_on_a_value_the_cast_would_lose() -> None:
    sql = checked_cast_sql(1, SeedColumn("amount", "`amount`", "int"), "seeds/pay.csv")
    assert sql.startswith("CASE WHEN c1 IS NOT NULL AND CAST(c1 AS int) IS NULL THEN raise_error(")
    assert sql.endswith("ELSE CAST(c1 AS int) END AS `amount`")
    assert "'Seed seeds/pay.csv, row '" in sql and ROW_COLUMN in sql
    assert "of column amount does not fit its type int" in sql


def test_text_columns_need_no_check() -> None:
    for data_type in ("string", "STRING", "varchar(10)"):
        sql = checked_cast_sql(0, SeedColumn("name", "`name`", data_type), "seeds/a.csv")
        assert sql == f"CAST(c0 AS {data_type}) AS `name`"


def test_a_quote_in_a_path_or_header_cannot_end_the_literal() -> None:
    sql = checked_cast_sql(0, SeedColumn("it's", "`it's`", "date"), "seeds/o'neil.csv")
    assert "'Seed seeds/o\\'neil.csv, row '" in sql
    assert "of column it\\'s does not fit" in sql


def test_the_load_query_reads_the_view_and_honours_empty() -> None:
    columns = [SeedColumn("id", "`id`", "bigint"), SeedColumn("name", "`name`", "string")]
    sql = seed_select_sql("dbt_seed_rows_1", columns, "seeds/a.csv")
    assert sql.endswith("FROM `dbt_seed_rows_1`")
    assert seed_select_sql("v", columns, "seeds/a.csv", empty=True).endswith("WHERE false")


def test_the_text_rows_are_numbered_from_one(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_text("id,name\n1,a\n2,\n", encoding="utf-8")
    seed = read_seed_csv(str(path), ",", [])
    try:
        table = pq.read_table(seed.parquet_path)
    finally:
        seed.remove()
    assert table.column_names == ["c0", "c1", ROW_COLUMN]
    assert table.column(ROW_COLUMN).to_pylist() == [1, 2]
