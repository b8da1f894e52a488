"""dbt's Column predicates on Spark's type names."""

from __future__ import annotations

import pytest

from dbt.adapters.s3tables.column import S3TablesColumn


@pytest.mark.parametrize(
    ("dtype", "string", "integer", "numeric", "floating"),
    [
        ("int", False, True, False, False),
        ("bigint", False, True, False, False),
        ("TINYINT", False, True, False, False),
        ("decimal(10,2)", False, False, True, False),
        ("decimal", False, False, True, False),
        ("double", False, False, False, True),
        ("float", False, False, False, True),
        ("string", True, False, False, False),
        ("varchar(20)", True, False, False, False),
        ("timestamp", False, False, False, False),
        ("array<int>", False, False, False, False),
        ("struct<a:int>", False, False, False, False),
    ],
)
def test_type_predicates(
    dtype: str, string: bool, integer: bool, numeric: bool, floating: bool
) -> None:
    column = S3TablesColumn("c", dtype)
    assert column.is_string() is string
    assert column.is_integer() is integer
    assert column.is_numeric() is numeric
    assert column.is_float() is floating
    assert column.is_number() is (integer or numeric or floating)


def test_string_size_and_quoting() -> None:
    assert S3TablesColumn("c", "varchar(20)").string_size() == 20
    assert S3TablesColumn("c", "string").string_size() == 256
    assert S3TablesColumn("we`ird", "int").quoted == "`we``ird`"
