"""dbt's Column predicates on Spark's type names."""

from __future__ import annotations

import pytest

from dbt.adapters.s3tables.catalogs.relations import ColumnInfo
from dbt.adapters.s3tables.column import S3TablesColumn
from dbt.adapters.s3tables.relation import S3TablesRelation


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


def test_columns_from_the_catalog_keep_their_order_and_relation() -> None:
    relation = S3TablesRelation.create(schema="shop", identifier="orders", type="table")
    columns = [ColumnInfo("id", "bigint"), ColumnInfo("amount", "decimal(12,2)")]
    described = S3TablesColumn.from_catalog(relation, "lake", columns)
    assert [(c.column, c.dtype, c.column_index) for c in described] == [
        ("id", "bigint", 0),
        ("amount", "decimal(12,2)", 1),
    ]
    assert {(c.table_database, c.table_schema, c.table_name) for c in described} == {
        ("lake", "shop", "orders")
    }
