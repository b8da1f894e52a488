"""The Arrow seed reader against dbt's own agate loader (`agate_helper.from_csv`, what
`load_agate_table()` runs): the same column types, the same Spark types, the same value
for every cell (as the text Spark casts), on dbt's seed test fixtures and edge cases."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from dbt.adapters.spark.impl import SparkAdapter
from dbt.tests.adapter.simple_seed import seeds as dbt_seed_fixtures
from dbt_common.clients.agate_helper import from_csv
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.s3tables.seeds import csv as seed_csv
from dbt.adapters.s3tables.seeds.csv import read_seed_csv
from dbt.adapters.s3tables.seeds.values import seed_value_as_text

DBT_FIXTURES = {
    name: text.lstrip("\n")
    for name, text in inspect.getmembers(dbt_seed_fixtures)
    if name.endswith("_csv") and isinstance(text, str) and name != "seeds__wont_parse_csv"
}
BOM_FILE = Path(inspect.getfile(dbt_seed_fixtures)).parent / "seed_bom.csv"

EDGE_CASES = {
    "empty_values": "a,b,c\n1,,x\n,2.5,\n3,4,z\n",
    "all_empty_column": "a,b\n1,\n2,\n",
    "null_spellings": "a,b,c\nnull,NULL, Null \n1,x,2024-01-01\n,y,\n",
    "header_only": "id,name,created_at\n",
    "integers_vs_decimals": "i,d,z,big\n1,1.5,1.0,12345678901234567890\n-2,0.25,2.000,1\n",
    "leading_zeros": "zip,code\n00123,007\n04567,010\n",
    "numbers_agate_style": 'a,b,c,d\n"$1,000",12%,-5,1e3\n" 7 ",-$3,+4,.5\n',
    "number_specials": "a,b\nNaN,1\nInfinity,2\n1.25,3\n",
    "dates": "d,bad_day,d2\n2024-02-29,2023-02-29,2024-1-5\n2000-01-01,2023-01-01,0001-01-01\n",
    "datetimes_space": "t,u\n2024-01-15 10:30:00,2024-01-15 23:59:60\n2023-12-31 23:59:59,x\n",
    "datetimes_t": "t\n2024-01-15T10:30:00\n2023-12-31T23:59:59\n",
    "datetimes_zones": "t,u\n2024-01-15T10:30:00Z,2024-01-15T10:30:00.123\n"
    "2024-01-15T10:30:00+02:00,2024-01-15T10:30:00.5\n",
    "datetimes_mixed": "t\n2024-01-15T10:30:00\n2024-01-15 10:30:00\n",
    "date_and_datetime": "t\n2024-01-15\n2024-01-15 10:30:00\n",
    "booleans": 'a,b,c,d\ntrue,True,TRUE,yes\nfalse,False,FALSE,no\n," true ",null,y\n',
    "boolean_comma": 'a\n"tr,ue"\nfalse\n',
    "zero_one": "a,b\n1,0\n0,1\n",
    "unicode": "name,v\nZoë,1\n日本,2\n🎉,3\n",
    "quoted_delimiters": 'a,b\n"x, y",1\n"say ""hi""",2\n"line\nbreak",3\n',
    "whitespace_text": 'a,b\n  x  ," 1"\n\t,2 \n',
    "duplicate_headers": "a,a,b\n1,2,3\n",
    "blank_line": "a,b\n1,2\n\n3,4\n",
    "short_row": "a,b,c\n1,2\n3,4,5\n",
    "crlf": "a,b\r\n1,x\r\n2,y\r\n",
    "no_trailing_newline": "a,b\n1,2",
    "mostly_numbers_then_text": "a\n" + "1\n" * 50 + "n/a\n",
}


def agate_view(path: Path, delimiter: str, text_columns: list[str]):
    table = from_csv(str(path), text_columns=text_columns, delimiter=delimiter)
    types = [type(t) for t in table.column_types]
    spark_types = [SparkAdapter.convert_type(table, i) for i in range(len(types))]
    rows = [[seed_value_as_text(v) for v in row] for row in table.rows]
    return list(table.column_names), types, spark_types, rows


def arrow_view(path: Path, delimiter: str, text_columns: list[str]):
    text = read_seed_csv(str(path), delimiter, text_columns)
    try:
        types = [type(t) for t in text.column_types]
        probe = text.type_probe()
        spark_types = [SparkAdapter.convert_type(probe, i) for i in range(text.width)]
        rows = [
            list(row)[: text.width]
            for batch in text.batches()
            for row in zip(*(c.to_pylist() for c in batch.columns), strict=True)
        ]
        numbers = [n for batch in text.batches() for n in batch.column(text.width).to_pylist()]
        assert numbers == list(range(1, text.row_count + 1))
        assert text.row_count == len(rows)
        preview = [[seed_value_as_text(v) for v in r] for r in text.preview.rows]
        return text.column_names, types, spark_types, rows, preview
    finally:
        text.remove()


def assert_equivalent(path: Path, delimiter: str = ",", text_columns: list[str] = ()) -> None:
    names, types, spark_types, rows = agate_view(path, delimiter, list(text_columns))
    got_names, got_types, got_spark, got_rows, preview = arrow_view(
        path, delimiter, list(text_columns)
    )
    assert got_names == names
    assert got_types == types
    assert got_spark == spark_types
    assert got_rows == rows
    assert preview == rows[: seed_csv.PREVIEW_ROWS]


@pytest.mark.parametrize("name", sorted(DBT_FIXTURES))
def test_dbt_seed_fixtures(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.csv"
    path.write_text(DBT_FIXTURES[name], encoding="utf-8")
    assert_equivalent(path, "|" if "pipe" in name else ",")


def test_dbt_bom_fixture() -> None:
    assert_equivalent(BOM_FILE)


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_cases(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.csv"
    path.write_text(EDGE_CASES[name], encoding="utf-8", newline="")
    assert_equivalent(path)


@pytest.mark.parametrize("name", ["empty_values", "booleans", "dates", "leading_zeros"])
def test_column_types_keep_columns_text(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.csv"
    path.write_text(EDGE_CASES[name], encoding="utf-8")
    first = EDGE_CASES[name].split("\n", 1)[0].split(",")
    assert_equivalent(path, text_columns=[first[0], first[-1]])


@pytest.mark.parametrize("delimiter", [";", "|", "\t"])
def test_delimiters(tmp_path: Path, delimiter: str) -> None:
    path = tmp_path / "delimited.csv"
    path.write_text(
        f'a{delimiter}b{delimiter}c\n1{delimiter}"x{delimiter} y"{delimiter}2024-01-01\n'
        f"2{delimiter}z{delimiter}\n",
        encoding="utf-8",
    )
    assert_equivalent(path, delimiter)


def test_many_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Types decided over every batch: a text value in the last batch makes the column text."""
    monkeypatch.setattr(seed_csv, "_BLOCK_BYTES", 4096)
    lines = [
        f"{i},{i / 8},2024-01-{i % 28 + 1:02d},{'true' if i % 2 else 'false'}"
        for i in range(20_000)
    ]
    path = tmp_path / "batches.csv"
    path.write_text("a,b,c,d\n" + "\n".join(lines) + "\nx,1.5,2024-01-01,\n", encoding="utf-8")
    assert_equivalent(path)


def test_long_row_fails_naming_file_and_row(tmp_path: Path) -> None:
    path = tmp_path / "long.csv"
    path.write_text("a,b\n1,2\n3,4,5\n", encoding="utf-8")
    with pytest.raises(DbtRuntimeError, match=r"long.csv, row 2 has 3 values"):
        read_seed_csv(str(path), ",", [])


def test_delimiter_must_be_one_character(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_text("a|b\n1|2\n", encoding="utf-8")
    with pytest.raises(CompilationError, match=r"a.csv: delimiter '' is not one character"):
        read_seed_csv(str(path), "", [])
