"""The catalog DDL API without Spark: Spark SQL type strings, argument checks, and
`CatalogDdl` against a real PyIceberg `SqlCatalog` on a temporary SQLite file.

Every effect is read back from the catalog through PyIceberg (a fresh `load_table`);
every failure is checked for its type, its message and for changing nothing.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
)
from pyspark.sql import types as spark

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.ddl import (
    CatalogDdl,
    column_definitions,
    column_type,
    split_table_name,
)
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.errors import (
    AlreadyExists,
    CatalogDdlError,
    InvalidArgument,
    NotFound,
    SchemaNotEmpty,
)
from dbt.adapters.s3tables.relation import S3TablesRelation
from dbt.adapters.s3tables.sql.types import parse_spark_type

# --- parse_spark_type: primitives and aliases ------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("boolean", spark.BooleanType()),
        ("tinyint", spark.ByteType()),
        ("byte", spark.ByteType()),
        ("smallint", spark.ShortType()),
        ("short", spark.ShortType()),
        ("int", spark.IntegerType()),
        ("integer", spark.IntegerType()),
        ("bigint", spark.LongType()),
        ("long", spark.LongType()),
        ("float", spark.FloatType()),
        ("real", spark.FloatType()),
        ("double", spark.DoubleType()),
        ("string", spark.StringType()),
        ("binary", spark.BinaryType()),
        ("date", spark.DateType()),
        ("timestamp", spark.TimestampType()),
        ("timestamp_ltz", spark.TimestampType()),
        ("timestamp_ntz", spark.TimestampNTZType()),
    ],
)
def test_primitive_types_and_aliases(text: str, expected: spark.DataType) -> None:
    assert parse_spark_type(text) == expected


@pytest.mark.parametrize("text", ["BIGINT", "BigInt", "  bigint  ", "\tbigint\n"])
def test_type_names_ignore_case_and_surrounding_space(text: str) -> None:
    assert parse_spark_type(text) == spark.LongType()


@pytest.mark.parametrize(
    ("text", "precision", "scale"),
    [
        ("decimal", 10, 0),
        ("dec", 10, 0),
        ("numeric", 10, 0),
        ("decimal(12)", 12, 0),
        ("decimal(12,2)", 12, 2),
        ("DECIMAL ( 38 , 6 )", 38, 6),
        ("numeric(5,5)", 5, 5),
        ("dec(1,0)", 1, 0),
    ],
)
def test_decimal_defaults_and_arguments(text: str, precision: int, scale: int) -> None:
    assert parse_spark_type(text) == spark.DecimalType(precision, scale)


def test_varchar_and_char_keep_their_length() -> None:
    assert parse_spark_type("varchar(20)") == spark.VarcharType(20)
    assert parse_spark_type("CHAR(3)") == spark.CharType(3)


# --- parse_spark_type: nested types ----------------------------------------------------


def test_array() -> None:
    assert parse_spark_type("array<int>") == spark.ArrayType(spark.IntegerType())


def test_map_of_arrays() -> None:
    assert parse_spark_type("map<string, array<bigint>>") == spark.MapType(
        spark.StringType(), spark.ArrayType(spark.LongType())
    )


def test_struct_with_colons_spaces_and_nesting() -> None:
    parsed = parse_spark_type("struct<id:bigint, tags array<string>, at:struct<ts:timestamp>>")
    assert parsed == spark.StructType(
        [
            spark.StructField("id", spark.LongType()),
            spark.StructField("tags", spark.ArrayType(spark.StringType())),
            spark.StructField(
                "at", spark.StructType([spark.StructField("ts", spark.TimestampType())])
            ),
        ]
    )


def test_struct_field_names_keep_their_case() -> None:
    parsed = parse_spark_type("STRUCT<OrderId:INT>")
    assert [f.name for f in parsed.fields] == ["OrderId"]


def test_backticked_struct_field_names() -> None:
    parsed = parse_spark_type("struct<`first name`:string,`a``b`:int,`x:y`:map<int,string>>")
    assert parsed == spark.StructType(
        [
            spark.StructField("first name", spark.StringType()),
            spark.StructField("a`b", spark.IntegerType()),
            spark.StructField("x:y", spark.MapType(spark.IntegerType(), spark.StringType())),
        ]
    )


def test_deeply_nested_type() -> None:
    parsed = parse_spark_type("array<map<string,struct<v:decimal(12,2),w:array<date>>>>")
    inner = spark.StructType(
        [
            spark.StructField("v", spark.DecimalType(12, 2)),
            spark.StructField("w", spark.ArrayType(spark.DateType())),
        ]
    )
    assert parsed == spark.ArrayType(spark.MapType(spark.StringType(), inner))


# --- parse_spark_type: errors ----------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", None])
def test_empty_type(text: str | None) -> None:
    with pytest.raises(ValueError, match="^the type is empty$"):
        parse_spark_type(text)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("foo", "unknown type `foo`"),
        ("interval", "unknown type `interval`"),
        ("array<interval>", "unknown type `interval`"),
        ("int int", "unexpected `int`"),
        ("bigint)", "unexpected `)`"),
        ("decimal(", "expected `a type`, found `the end`"),
        ("decimal(a)", "expected a number, found `a`"),
        ("decimal(10,)", "expected a number, found `)`"),
        ("decimal(10 2)", "expected `)`, found `2`"),
        ("varchar", "expected `(`, found `the end`"),
        ("char(x)", "expected a number, found `x`"),
        ("array<int", "expected `>`, found `the end`"),
        ("array(int)", "expected `<`, found `(`"),
        ("map<int>", "expected `,`, found `>`"),
        ("struct<a:int", "expected `,`, found `the end`"),
        ("struct<a:int;b:int>", "expected `,`, found `;`"),
    ],
)
def test_bad_type_strings_say_why(text: str, problem: str) -> None:
    with pytest.raises(ValueError) as error:
        parse_spark_type(text)
    assert str(error.value) == f"`{text}` is not a Spark SQL type: {problem}"


@pytest.mark.parametrize(
    "text",
    [
        # Spark: "Decimal precision 39 exceeds max precision 38".
        "decimal(39,0)",
        # Spark: "Decimal scale (10) cannot be greater than precision (5)".
        "decimal(5,10)",
    ],
)
def test_decimals_spark_rejects_are_not_spark_types(text: str) -> None:
    with pytest.raises(ValueError, match="is not a Spark SQL type"):
        parse_spark_type(text)


# --- split_table_name ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("analytics.orders", ("analytics", "orders")),
        (" analytics . orders ", ("analytics", "orders")),
        ("A.B", ("A", "B")),
    ],
)
def test_split_table_name(name: str, expected: tuple[str, str]) -> None:
    assert split_table_name(name) == expected


@pytest.mark.parametrize(
    "name", ["orders", "a.b.c", ".orders", "analytics.", " . ", "", None, "analytics..orders"]
)
def test_split_table_name_needs_namespace_and_table(name: str | None) -> None:
    with pytest.raises(InvalidArgument) as error:
        split_table_name(name)  # type: ignore[arg-type]
    message = str(error.value)
    assert f"table name `{name}` must be `<namespace>.<table>`" in message
    assert "analytics.orders" in message


# --- column_type -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("boolean", BooleanType()),
        ("tinyint", IntegerType()),
        ("smallint", IntegerType()),
        ("int", IntegerType()),
        ("bigint", LongType()),
        ("float", FloatType()),
        ("double", DoubleType()),
        ("string", StringType()),
        ("varchar(20)", StringType()),
        ("char(2)", StringType()),
        ("binary", BinaryType()),
        ("date", DateType()),
        ("timestamp", TimestamptzType()),
        ("timestamp_ntz", TimestampType()),
        ("decimal(12,2)", DecimalType(12, 2)),
        ("decimal", DecimalType(10, 0)),
    ],
)
def test_column_type_primitives(text: str, expected: object) -> None:
    assert column_type("c", text) == expected


def test_column_type_nested() -> None:
    array = column_type("tags", "array<string>")
    assert isinstance(array, ListType)
    assert array.element_type == StringType()
    mapping = column_type("attrs", "map<string,decimal(10,2)>")
    assert isinstance(mapping, MapType)
    assert (mapping.key_type, mapping.value_type) == (StringType(), DecimalType(10, 2))
    struct = column_type("address", "struct<street:string,`zip code`:int>")
    assert isinstance(struct, StructType)
    assert [(f.name, f.field_type) for f in struct.fields] == [
        ("street", StringType()),
        ("zip code", IntegerType()),
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("interval", "`interval` is not a Spark SQL type: unknown type `interval`"),
        ("", "the type is empty"),
        ("array<bigint", "`array<bigint` is not a Spark SQL type: expected `>`"),
    ],
)
def test_column_type_errors_name_the_column(text: str, problem: str) -> None:
    with pytest.raises(InvalidArgument) as error:
        column_type("amount", text)
    assert f"column `amount`: {problem}" in str(error.value)


@pytest.mark.parametrize("text", ["decimal(39,0)", "decimal(5,10)"])
def test_column_type_out_of_range_decimal_is_invalid_argument(text: str) -> None:
    """A typed error, as for every other bad type (not PyIceberg's own ValidationError)."""
    with pytest.raises(InvalidArgument, match="column `amount`"):
        column_type("amount", text)


# --- column_definitions ----------------------------------------------------------------


def test_column_definitions_keep_order_and_names() -> None:
    definitions = column_definitions(
        [{"id": "bigint"}, {"Name": "varchar(10)"}, {"amount": "decimal(12,2)"}]
    )
    assert definitions == [
        ("id", LongType()),
        ("Name", StringType()),
        ("amount", DecimalType(12, 2)),
    ]


def test_column_definitions_accept_a_tuple() -> None:
    assert column_definitions(({"id": "int"},)) == [("id", IntegerType())]


@pytest.mark.parametrize(
    "columns", [[], (), None, "id: bigint", b"id", {"id": "bigint"}, 3, {"id", "name"}]
)
def test_column_definitions_need_a_non_empty_list(columns: object) -> None:
    with pytest.raises(InvalidArgument) as error:
        column_definitions(columns)
    message = str(error.value)
    assert "columns must be a non-empty list of one-field mappings" in message
    assert "[{id: bigint}, {name: string}]" in message


@pytest.mark.parametrize(
    "definition", [{}, {"id": "bigint", "name": "string"}, "id bigint", ["id", "bigint"], None]
)
def test_column_definition_must_have_exactly_one_field(definition: object) -> None:
    with pytest.raises(InvalidArgument) as error:
        column_definitions([{"ok": "int"}, definition])
    assert f"column definition {definition!r} must have exactly one field" in str(error.value)


@pytest.mark.parametrize("name", ["", "  "])
def test_column_definition_with_empty_name(name: str) -> None:
    with pytest.raises(InvalidArgument, match="a column name is empty"):
        column_definitions([{name: "int"}])


@pytest.mark.parametrize("second", ["id", "ID", "Id"])
def test_duplicate_columns_compare_case_insensitively(second: str) -> None:
    with pytest.raises(InvalidArgument) as error:
        column_definitions([{"id": "bigint"}, {"name": "string"}, {second: "int"}])
    assert f"column `{second}` is declared twice" in str(error.value)


def test_unknown_column_type_names_the_column() -> None:
    with pytest.raises(InvalidArgument) as error:
        column_definitions([{"id": "bigint"}, {"price": "money"}])
    assert "column `price`: `money` is not a Spark SQL type: unknown type `money`" in str(
        error.value
    )


def test_catalog_ddl_errors_are_typed() -> None:
    for error in (AlreadyExists, NotFound, SchemaNotEmpty, InvalidArgument):
        assert issubclass(error, CatalogDdlError)


# --- CatalogDdl against a real SqlCatalog ----------------------------------------------


@pytest.fixture
def iceberg(tmp_path: Path) -> IcebergCatalog:
    warehouse = tmp_path / "warehouse"
    return IcebergCatalog(
        CatalogConfig(name="local", catalog_type="local", warehouse=str(warehouse))
    )


@pytest.fixture
def ddl(iceberg: IcebergCatalog) -> CatalogDdl:
    return CatalogDdl(iceberg, s3tables_rules=False)


@pytest.fixture
def strict(iceberg: IcebergCatalog) -> CatalogDdl:
    return CatalogDdl(iceberg, s3tables_rules=True)


def load(iceberg: IcebergCatalog, name: str):
    namespace, table = name.split(".")
    return iceberg.catalog.load_table((namespace, table))


def fields(iceberg: IcebergCatalog, name: str) -> list[tuple[str, object, bool, str | None]]:
    """(name, type, required, doc) of each top-level column, freshly loaded."""
    return [(f.name, f.field_type, f.required, f.doc) for f in load(iceberg, name).schema().fields]


def table_names(iceberg: IcebergCatalog, namespace: str) -> list[str]:
    return sorted(t[-1] for t in iceberg.catalog.list_tables(namespace))


def metadata_location(iceberg: IcebergCatalog, name: str) -> str:
    return load(iceberg, name).metadata_location


ORDERS = [{"id": "bigint"}, {"customer": "string"}, {"amount": "decimal(12,2)"}]


@pytest.fixture
def orders(ddl: CatalogDdl, iceberg: IcebergCatalog) -> str:
    ddl.create_namespace("shop")
    ddl.create_table("shop.orders", ORDERS)
    return "shop.orders"


# namespaces


def test_create_namespace_with_comment_and_properties(
    ddl: CatalogDdl, iceberg: IcebergCatalog
) -> None:
    ddl.create_namespace(
        "analytics", comment="Reporting tables", properties={"owner": "bi", "n": 3}
    )
    assert iceberg.catalog.namespace_exists("analytics")
    properties = iceberg.catalog.load_namespace_properties("analytics")
    assert properties["comment"] == "Reporting tables"
    assert properties["owner"] == "bi"
    assert properties["n"] == "3"


def test_create_namespace_twice_is_already_exists(ddl: CatalogDdl, iceberg: IcebergCatalog) -> None:
    ddl.create_namespace("analytics", comment="first")
    with pytest.raises(AlreadyExists, match="namespace `analytics` already exists"):
        ddl.create_namespace("analytics", comment="second")
    assert iceberg.catalog.load_namespace_properties("analytics")["comment"] == "first"


def test_create_namespace_with_empty_name(ddl: CatalogDdl, iceberg: IcebergCatalog) -> None:
    with pytest.raises(InvalidArgument, match="the namespace name is empty"):
        ddl.create_namespace("  ")
    assert iceberg.list_namespaces() == []


def test_drop_missing_namespace(ddl: CatalogDdl) -> None:
    with pytest.raises(NotFound, match="namespace `ghost` does not exist"):
        ddl.drop_namespace("ghost")


def test_drop_missing_namespace_ignored(ddl: CatalogDdl, iceberg: IcebergCatalog) -> None:
    ddl.create_namespace("kept")
    ddl.drop_namespace("ghost", ignore_not_found=True)
    assert iceberg.list_namespaces() == ["kept"]


def test_drop_namespace_holding_a_table_is_refused(
    ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str
) -> None:
    with pytest.raises(SchemaNotEmpty) as error:
        ddl.drop_namespace("shop")
    message = str(error.value)
    assert "namespace `shop` still holds 1 table(s) or view(s) (orders)" in message
    assert "drop them first" in message
    # ignore_not_found does not mean "drop whatever is in it"
    with pytest.raises(SchemaNotEmpty):
        ddl.drop_namespace("shop", ignore_not_found=True)
    assert iceberg.catalog.namespace_exists("shop")
    assert table_names(iceberg, "shop") == ["orders"]


def test_drop_empty_namespace(ddl: CatalogDdl, iceberg: IcebergCatalog) -> None:
    ddl.create_namespace("scratch")
    ddl.create_namespace("kept")
    ddl.drop_namespace("scratch")
    assert not iceberg.catalog.namespace_exists("scratch")
    assert iceberg.list_namespaces() == ["kept"]


def test_drop_namespace_after_its_last_table(
    ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str
) -> None:
    ddl.drop_table(orders)
    ddl.drop_namespace("shop")
    assert iceberg.list_namespaces() == []


# tables


def test_create_table(ddl: CatalogDdl, iceberg: IcebergCatalog) -> None:
    ddl.create_namespace("shop")
    ddl.create_table(
        "shop.events",
        [
            {"id": "bigint"},
            {"at": "timestamp"},
            {"tags": "array<string>"},
            {"price": "decimal(10,2)"},
        ],
    )
    columns = fields(iceberg, "shop.events")
    assert [(c[0], c[2], c[3]) for c in columns] == [
        ("id", False, None),
        ("at", False, None),
        ("tags", False, None),
        ("price", False, None),
    ]
    types = [c[1] for c in columns]
    assert types[0] == LongType()
    assert types[1] == TimestamptzType()
    assert isinstance(types[2], ListType) and types[2].element_type == StringType()
    assert types[3] == DecimalType(10, 2)
    assert "comment" not in load(iceberg, "shop.events").properties


def test_not_null_makes_required_fields_case_insensitively(
    ddl: CatalogDdl, iceberg: IcebergCatalog
) -> None:
    ddl.create_namespace("shop")
    ddl.create_table(
        "shop.t", [{"id": "bigint"}, {"Code": "string"}, {"x": "int"}], not_null=["ID", "code"]
    )
    assert [(c[0], c[2]) for c in fields(iceberg, "shop.t")] == [
        ("id", True),
        ("Code", True),
        ("x", False),
    ]


def test_not_null_naming_an_unknown_column(ddl: CatalogDdl, iceberg: IcebergCatalog) -> None:
    ddl.create_namespace("shop")
    with pytest.raises(InvalidArgument, match="not_null names unknown column\\(s\\): nope, zz"):
        ddl.create_table("shop.t", [{"id": "bigint"}], not_null=["zz", "id", "nope"])
    assert table_names(iceberg, "shop") == []


def test_create_table_comment_property(ddl: CatalogDdl, iceberg: IcebergCatalog) -> None:
    ddl.create_namespace("shop")
    ddl.create_table("shop.t", [{"id": "int"}], comment="One row per order")
    assert load(iceberg, "shop.t").properties["comment"] == "One row per order"


def test_create_table_on_conflict_error(
    ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str
) -> None:
    before = metadata_location(iceberg, orders)
    with pytest.raises(AlreadyExists, match="table `shop.orders` already exists"):
        ddl.create_table(orders, [{"other": "int"}], comment="new")
    assert metadata_location(iceberg, orders) == before
    assert [c[0] for c in fields(iceberg, orders)] == ["id", "customer", "amount"]


def test_create_table_on_conflict_ignore(
    ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str
) -> None:
    before = metadata_location(iceberg, orders)
    ddl.create_table(orders, [{"other": "int"}], on_conflict="ignore", comment="new")
    assert metadata_location(iceberg, orders) == before
    assert [c[0] for c in fields(iceberg, orders)] == ["id", "customer", "amount"]
    assert "comment" not in load(iceberg, orders).properties


def test_create_table_on_conflict_ignore_creates_a_missing_table(
    ddl: CatalogDdl, iceberg: IcebergCatalog
) -> None:
    ddl.create_namespace("shop")
    ddl.create_table("shop.t", [{"id": "int"}], on_conflict="ignore")
    assert [c[0] for c in fields(iceberg, "shop.t")] == ["id"]


def test_create_table_on_conflict_replace(
    ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str
) -> None:
    ddl.create_table(
        orders, [{"order_id": "bigint"}, {"total": "double"}], on_conflict="replace", comment="v2"
    )
    table = load(iceberg, orders)
    assert [(f.name, f.field_type) for f in table.schema().fields] == [
        ("order_id", LongType()),
        ("total", DoubleType()),
    ]
    assert table.properties["comment"] == "v2"


def test_create_table_on_conflict_replace_creates_a_missing_table(
    ddl: CatalogDdl, iceberg: IcebergCatalog
) -> None:
    ddl.create_namespace("shop")
    ddl.create_table("shop.t", [{"id": "int"}], on_conflict="replace")
    assert [c[0] for c in fields(iceberg, "shop.t")] == ["id"]


def test_create_table_unknown_on_conflict(ddl: CatalogDdl, iceberg: IcebergCatalog) -> None:
    ddl.create_namespace("shop")
    with pytest.raises(InvalidArgument) as error:
        ddl.create_table("shop.t", [{"id": "int"}], on_conflict="overwrite")
    assert "on_conflict `overwrite` is unknown; use one of: error, ignore, replace" in str(
        error.value
    )
    assert table_names(iceberg, "shop") == []


def test_create_table_in_a_missing_namespace(ddl: CatalogDdl, iceberg: IcebergCatalog) -> None:
    with pytest.raises(NotFound, match="namespace `ghost` does not exist"):
        ddl.create_table("ghost.t", [{"id": "int"}])
    assert iceberg.list_namespaces() == []


def test_create_table_replace_in_a_missing_namespace(
    ddl: CatalogDdl, iceberg: IcebergCatalog
) -> None:
    with pytest.raises(NotFound, match="namespace `ghost` does not exist"):
        ddl.create_table("ghost.t", [{"id": "int"}], on_conflict="replace")
    assert iceberg.list_namespaces() == []


def test_create_table_checks_arguments_before_any_call(
    ddl: CatalogDdl, iceberg: IcebergCatalog
) -> None:
    # The namespace is missing too: the argument error wins, so nothing was asked.
    with pytest.raises(InvalidArgument, match="column `b`: `nope` is not a Spark SQL type"):
        ddl.create_table("ghost.t", [{"a": "int"}, {"b": "nope"}])
    with pytest.raises(InvalidArgument, match="must be `<namespace>.<table>`"):
        ddl.create_table("t", [{"a": "int"}])
    with pytest.raises(InvalidArgument, match="column `A` is declared twice"):
        ddl.create_table("ghost.t", [{"a": "int"}, {"A": "int"}])


def test_s3tables_rules_refuse_uppercase_names(strict: CatalogDdl, iceberg: IcebergCatalog) -> None:
    strict.create_namespace("shop")
    with pytest.raises(InvalidArgument, match="table name `Orders` breaks the S3 Tables rules"):
        strict.create_table("shop.Orders", [{"id": "int"}])
    with pytest.raises(InvalidArgument, match="column name `Id` breaks the S3 Tables rules"):
        strict.create_table("shop.orders", [{"Id": "int"}])
    with pytest.raises(InvalidArgument, match="namespace name `Shop` breaks the S3 Tables rules"):
        strict.create_namespace("Shop")
    with pytest.raises(InvalidArgument, match="namespace `aws_data` starts with `aws`"):
        strict.create_namespace("aws_data")
    assert iceberg.list_namespaces() == ["shop"]
    assert table_names(iceberg, "shop") == []


def test_without_s3tables_rules_uppercase_names_are_accepted(
    ddl: CatalogDdl, iceberg: IcebergCatalog
) -> None:
    ddl.create_namespace("Shop")
    ddl.create_table("Shop.Orders", [{"Id": "int"}])
    assert iceberg.list_namespaces() == ["Shop"]
    assert [c[0] for c in fields(iceberg, "Shop.Orders")] == ["Id"]


def test_s3tables_rules_accept_valid_names(strict: CatalogDdl, iceberg: IcebergCatalog) -> None:
    strict.create_namespace("shop_2024")
    strict.create_table("shop_2024.orders_v2", [{"order_id": "bigint"}])
    assert [c[0] for c in fields(iceberg, "shop_2024.orders_v2")] == ["order_id"]


def test_drop_table(ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str) -> None:
    ddl.create_table("shop.kept", [{"id": "int"}])
    ddl.drop_table(orders)
    assert table_names(iceberg, "shop") == ["kept"]


def test_drop_missing_table(ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str) -> None:
    with pytest.raises(NotFound, match="table `shop.ghost` does not exist"):
        ddl.drop_table("shop.ghost")
    with pytest.raises(NotFound, match="table `nowhere.orders` does not exist"):
        ddl.drop_table("nowhere.orders")
    assert table_names(iceberg, "shop") == ["orders"]


def test_drop_missing_table_ignored(ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str) -> None:
    ddl.drop_table("shop.ghost", ignore_not_found=True)
    ddl.drop_table("nowhere.orders", ignore_not_found=True)
    assert table_names(iceberg, "shop") == ["orders"]


# columns


@pytest.mark.parametrize(
    ("type_text", "expected"),
    [
        ("varchar(40)", StringType()),
        ("timestamp_ntz", TimestampType()),
        ("decimal(20,4)", DecimalType(20, 4)),
        ("smallint", IntegerType()),
    ],
)
def test_add_column_maps_the_type(
    ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str, type_text: str, expected: object
) -> None:
    ddl.add_column(orders, "extra", type_text)
    assert fields(iceberg, orders)[-1] == ("extra", expected, False, None)


def test_add_nested_column_with_doc(ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str) -> None:
    ddl.add_column(orders, "address", "struct<street:string,zip:int>", comment="Ship-to")
    name, kind, required, doc = fields(iceberg, orders)[-1]
    assert (name, required, doc) == ("address", False, "Ship-to")
    assert isinstance(kind, StructType)
    assert [(f.name, f.field_type) for f in kind.fields] == [
        ("street", StringType()),
        ("zip", IntegerType()),
    ]


@pytest.mark.parametrize("name", ["customer", "CUSTOMER"])
def test_add_existing_column(
    ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str, name: str
) -> None:
    before = metadata_location(iceberg, orders)
    with pytest.raises(AlreadyExists, match=f"table `shop.orders` already has a column `{name}`"):
        ddl.add_column(orders, name, "int")
    ddl.add_column(orders, name, "int", if_not_exists=True)
    assert metadata_location(iceberg, orders) == before
    assert fields(iceberg, orders)[1] == ("customer", StringType(), False, None)


def test_add_column_to_missing_table(ddl: CatalogDdl, orders: str) -> None:
    with pytest.raises(NotFound, match="table `shop.ghost` does not exist"):
        ddl.add_column("shop.ghost", "x", "int")
    with pytest.raises(NotFound, match="table `nowhere.t` does not exist"):
        ddl.add_column("nowhere.t", "x", "int", if_not_exists=True)


def test_add_column_with_a_bad_type(ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str) -> None:
    before = metadata_location(iceberg, orders)
    with pytest.raises(InvalidArgument, match="column `x`: `array<` is not a Spark SQL type"):
        ddl.add_column(orders, "x", "array<")
    assert metadata_location(iceberg, orders) == before


def test_add_column_under_s3tables_rules(strict: CatalogDdl, iceberg: IcebergCatalog) -> None:
    strict.create_namespace("shop")
    strict.create_table("shop.orders", [{"id": "int"}])
    with pytest.raises(InvalidArgument, match="column name `Total` breaks the S3 Tables rules"):
        strict.add_column("shop.orders", "Total", "int")
    strict.add_column("shop.orders", "total", "int")
    assert [c[0] for c in fields(iceberg, "shop.orders")] == ["id", "total"]


def test_remove_column(ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str) -> None:
    ddl.remove_column(orders, "customer")
    assert [c[0] for c in fields(iceberg, orders)] == ["id", "amount"]


def test_remove_column_matches_case_insensitively(ddl: CatalogDdl, iceberg: IcebergCatalog) -> None:
    ddl.create_namespace("shop")
    ddl.create_table("shop.t", [{"id": "int"}, {"CamelCase": "string"}])
    ddl.remove_column("shop.t", "camelcase")
    assert [c[0] for c in fields(iceberg, "shop.t")] == ["id"]


def test_remove_missing_column(ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str) -> None:
    before = metadata_location(iceberg, orders)
    with pytest.raises(NotFound, match="table `shop.orders` has no column `ghost`"):
        ddl.remove_column(orders, "ghost")
    ddl.remove_column(orders, "ghost", if_exists=True)
    assert metadata_location(iceberg, orders) == before
    assert [c[0] for c in fields(iceberg, orders)] == ["id", "customer", "amount"]


def test_remove_column_of_missing_table(ddl: CatalogDdl, orders: str) -> None:
    with pytest.raises(NotFound, match="table `shop.ghost` does not exist"):
        ddl.remove_column("shop.ghost", "id", if_exists=True)


# docs


def test_persist_docs(ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str) -> None:
    ddl.persist_docs(
        "shop",
        "orders",
        "One row per order",
        {"ID": "Order key", "amount": "Total in EUR", "not_a_column": "ignored"},
    )
    table = load(iceberg, orders)
    assert table.properties["comment"] == "One row per order"
    assert [(f.name, f.doc) for f in table.schema().fields] == [
        ("id", "Order key"),
        ("customer", None),
        ("amount", "Total in EUR"),
    ]


def test_persist_docs_twice_makes_no_second_commit(
    ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str
) -> None:
    docs = {"id": "Order key", "customer": "Who ordered"}
    ddl.persist_docs("shop", "orders", "Orders", docs)
    after_first = metadata_location(iceberg, orders)
    ddl.persist_docs("shop", "orders", "Orders", dict(docs))
    assert metadata_location(iceberg, orders) == after_first


def test_persist_docs_commits_only_a_change(
    ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str
) -> None:
    ddl.persist_docs("shop", "orders", "Orders", {"id": "Order key"})
    first = metadata_location(iceberg, orders)
    ddl.persist_docs("shop", "orders", "Orders", {"id": "The order key"})
    second = metadata_location(iceberg, orders)
    assert second != first
    assert fields(iceberg, orders)[0][3] == "The order key"
    ddl.persist_docs("shop", "orders", "All orders", {"id": "The order key"})
    assert metadata_location(iceberg, orders) != second
    assert load(iceberg, orders).properties["comment"] == "All orders"


def test_persist_docs_without_anything_to_write(
    ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str
) -> None:
    before = metadata_location(iceberg, orders)
    ddl.persist_docs("shop", "orders", None, {})
    ddl.persist_docs("shop", "orders", "", {"ghost": "no such column"})
    assert metadata_location(iceberg, orders) == before
    assert "comment" not in load(iceberg, orders).properties


# what the materializations ask of a relation's catalog


def test_an_enforced_contracts_not_null_columns_become_required(
    ddl: CatalogDdl, iceberg: IcebergCatalog, orders: str
) -> None:
    relation = S3TablesRelation.create(schema="shop", identifier="orders", type="table")
    model = {
        "name": "orders",
        "config": {"contract": {"enforced": True}},
        "columns": {
            "id": {"name": "id", "constraints": [{"type": "not_null"}]},
            "customer": {"name": "customer", "constraints": []},
        },
        "constraints": [],
    }
    ddl.enforce_not_null(relation, {**model, "config": {}})
    assert [required for _, _, required, _ in fields(iceberg, orders)] == [False] * 3
    ddl.enforce_not_null(relation, model)
    assert [required for _, _, required, _ in fields(iceberg, orders)] == [True, False, False]


def test_only_an_emulated_catalog_gives_new_tables_a_location(tmp_path: Path) -> None:
    relation = S3TablesRelation.create(schema="shop", identifier="orders", type="table")
    local = CatalogConfig(name="local", catalog_type="local", warehouse=str(tmp_path))
    assert CatalogDdl(IcebergCatalog(local), False).emulator_table_location(relation) is None
    emulated = replace(local, emulator_table_location="s3://bucket/tables/")
    location = CatalogDdl(IcebergCatalog(emulated), False).emulator_table_location(relation)
    assert location == "s3://bucket/tables/shop/orders"
