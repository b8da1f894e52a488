"""Types between Spark and Iceberg: Iceberg types rendered as Spark SQL type names, Spark
types as the Iceberg types storing them, Spark SQL type strings parsed, and queries'
untyped (NULL) columns given a type (pure functions; `typed_query` also warns)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone, tzinfo
from functools import cache
from typing import TYPE_CHECKING, overload
from zoneinfo import ZoneInfo

from dbt.adapters.events.logging import AdapterLogger
from pyspark.sql import types as spark

from dbt.adapters.s3tables.errors import UnsupportedTypeError
from dbt.adapters.s3tables.sql.text import quote

if TYPE_CHECKING:
    from pyiceberg.types import IcebergType

logger = AdapterLogger("s3tables")


@cache
def _primitive_names() -> dict[type, str]:
    # PyIceberg's types load pydantic: imported when a type is first rendered, not when
    # dbt loads the plugin (`dbt parse` and `dbt ls` never need them).
    from pyiceberg import types as iceberg

    return {
        iceberg.BooleanType: "boolean",
        iceberg.IntegerType: "int",
        iceberg.LongType: "bigint",
        iceberg.FloatType: "float",
        iceberg.DoubleType: "double",
        iceberg.DateType: "date",
        # Spark's TIMESTAMP is instant semantics (Iceberg timestamptz); TIMESTAMP_NTZ is local.
        iceberg.TimestamptzType: "timestamp",
        iceberg.TimestampType: "timestamp_ntz",
        iceberg.StringType: "string",
        # Spark reads Iceberg uuid as string, fixed and binary as binary, time is unsupported.
        iceberg.UUIDType: "string",
        iceberg.FixedType: "binary",
        iceberg.BinaryType: "binary",
        iceberg.TimeType: "string",
    }


def spark_type_name(iceberg_type: IcebergType) -> str:
    """Spark SQL spelling of an Iceberg type, as `DESCRIBE` would print it."""
    from pyiceberg.types import DecimalType, ListType, MapType, StructType

    if isinstance(iceberg_type, DecimalType):
        return f"decimal({iceberg_type.precision},{iceberg_type.scale})"
    if isinstance(iceberg_type, ListType):
        return f"array<{spark_type_name(iceberg_type.element_type)}>"
    if isinstance(iceberg_type, MapType):
        key = spark_type_name(iceberg_type.key_type)
        return f"map<{key},{spark_type_name(iceberg_type.value_type)}>"
    if isinstance(iceberg_type, StructType):
        fields = ",".join(f"{f.name}:{spark_type_name(f.field_type)}" for f in iceberg_type.fields)
        return f"struct<{fields}>"
    for cls, name in _primitive_names().items():
        if isinstance(iceberg_type, cls):
            return name
    return str(iceberg_type)


_SPARK_SIMPLE_TYPES = {
    "boolean": "BooleanType",
    "tinyint": "ByteType",
    "byte": "ByteType",
    "smallint": "ShortType",
    "short": "ShortType",
    "int": "IntegerType",
    "integer": "IntegerType",
    "bigint": "LongType",
    "long": "LongType",
    "float": "FloatType",
    "real": "FloatType",
    "double": "DoubleType",
    "string": "StringType",
    "binary": "BinaryType",
    "date": "DateType",
    "timestamp": "TimestampType",
    "timestamp_ltz": "TimestampType",
    "timestamp_ntz": "TimestampNTZType",
}
_TYPE_TOKEN_RE = re.compile(r"\s*(?:(`(?:[^`]|``)*`)|([A-Za-z_][A-Za-z0-9_]*)|(\d+)|(\S))")


class _TypeParser:
    """Recursive descent over a Spark SQL type string (`decimal(12,2)`,
    `array<struct<a:int,b:string>>`, ...), without a SparkContext."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = [m.group(m.lastindex or 0) for m in _TYPE_TOKEN_RE.finditer(text)]
        self.position = 0

    def error(self, problem: str) -> ValueError:
        return ValueError(f"`{self.text}` is not a Spark SQL type: {problem}")

    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token.lower() != expected):
            raise self.error(f"expected `{expected or 'a type'}`, found `{token or 'the end'}`")
        self.position += 1
        return token

    def number(self) -> int:
        token = self.take()
        if not token.isdigit():
            raise self.error(f"expected a number, found `{token}`")
        return int(token)

    def parse(self) -> spark.DataType:
        data_type = self.data_type()
        if self.peek() is not None:
            raise self.error(f"unexpected `{self.peek()}`")
        return data_type

    def data_type(self) -> spark.DataType:
        name = self.take().lower()
        if name in _SPARK_SIMPLE_TYPES:
            simple: spark.DataType = getattr(spark, _SPARK_SIMPLE_TYPES[name])()
            return simple
        if name in ("varchar", "char"):
            self.take("(")
            length = self.number()
            self.take(")")
            return spark.VarcharType(length) if name == "varchar" else spark.CharType(length)
        if name in ("decimal", "dec", "numeric"):
            precision, scale = 10, 0
            if self.peek() == "(":
                self.take("(")
                precision = self.number()
                if self.peek() == ",":
                    self.take(",")
                    scale = self.number()
                self.take(")")
            if not 1 <= precision <= 38 or scale > precision:
                raise self.error(
                    f"decimal({precision},{scale}) needs 1 <= precision <= 38 and "
                    "scale <= precision"
                )
            return spark.DecimalType(precision, scale)
        if name == "array":
            self.take("<")
            element = self.data_type()
            self.take(">")
            return spark.ArrayType(element)
        if name == "map":
            self.take("<")
            key = self.data_type()
            self.take(",")
            value = self.data_type()
            self.take(">")
            return spark.MapType(key, value)
        if name == "struct":
            return self.struct()
        raise self.error(f"unknown type `{name}`")

    def struct(self) -> spark.StructType:
        self.take("<")
        fields: list[spark.StructField] = []
        while self.peek() != ">":
            if fields:
                self.take(",")
            field_name = self.take()
            if field_name.startswith("`"):
                field_name = field_name[1:-1].replace("``", "`")
            if self.peek() == ":":
                self.take(":")
            fields.append(spark.StructField(field_name, self.data_type()))
        self.take(">")
        return spark.StructType(fields)


def parse_spark_type(text: str) -> spark.DataType:
    """The Spark type a Spark SQL type string names, or ValueError saying why not."""
    if not text or not text.strip():
        raise ValueError("the type is empty")
    return _TypeParser(text).parse()


@overload
def without_void(data_type: spark.StructType) -> spark.StructType: ...


@overload
def without_void(data_type: spark.DataType) -> spark.DataType: ...


def without_void(data_type: spark.DataType) -> spark.DataType:
    """The type with every NullType (`void`, the type of a bare NULL) made string: Iceberg
    has no void type."""
    if isinstance(data_type, spark.NullType):
        return spark.StringType()
    if isinstance(data_type, spark.ArrayType):
        return spark.ArrayType(without_void(data_type.elementType), data_type.containsNull)
    if isinstance(data_type, spark.MapType):
        return spark.MapType(
            without_void(data_type.keyType),
            without_void(data_type.valueType),
            data_type.valueContainsNull,
        )
    if isinstance(data_type, spark.StructType):
        return spark.StructType(
            [
                spark.StructField(f.name, without_void(f.dataType), f.nullable)
                for f in data_type.fields
            ]
        )
    return data_type


def type_sql(data_type: spark.DataType) -> str:
    """A Spark type as SQL a CAST accepts (struct field names quoted)."""
    if isinstance(data_type, spark.ArrayType):
        return f"array<{type_sql(data_type.elementType)}>"
    if isinstance(data_type, spark.MapType):
        return f"map<{type_sql(data_type.keyType)},{type_sql(data_type.valueType)}>"
    if isinstance(data_type, spark.StructType):
        fields = ",".join(
            "`" + f.name.replace("`", "``") + "`:" + type_sql(f.dataType) for f in data_type.fields
        )
        return f"struct<{fields}>"
    return data_type.simpleString()


def iceberg_type(data_type: spark.DataType, path: str) -> IcebergType:
    """The Iceberg type storing a Spark type (`path` names the column in errors).

    Field ids of nested types are placeholders: PyIceberg assigns real ids when the
    type is added to a table.
    """
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
        NestedField,
        StringType,
        StructType,
        TimestampType,
        TimestamptzType,
    )

    simple: list[tuple[type, IcebergType]] = [
        (spark.BooleanType, BooleanType()),
        (spark.ByteType, IntegerType()),
        (spark.ShortType, IntegerType()),
        (spark.IntegerType, IntegerType()),
        (spark.LongType, LongType()),
        (spark.FloatType, FloatType()),
        (spark.DoubleType, DoubleType()),
        (spark.StringType, StringType()),
        (spark.VarcharType, StringType()),
        (spark.CharType, StringType()),
        (spark.BinaryType, BinaryType()),
        (spark.DateType, DateType()),
        (spark.TimestampNTZType, TimestampType()),
        (spark.TimestampType, TimestamptzType()),
    ]
    for spark_class, iceberg in simple:
        if isinstance(data_type, spark_class):
            return iceberg
    if isinstance(data_type, spark.DecimalType):
        return DecimalType(data_type.precision, data_type.scale)
    if isinstance(data_type, spark.ArrayType):
        element = iceberg_type(data_type.elementType, f"{path}.element")
        return ListType(1, element, element_required=False)
    if isinstance(data_type, spark.MapType):
        key = iceberg_type(data_type.keyType, f"{path}.key")
        value = iceberg_type(data_type.valueType, f"{path}.value")
        return MapType(1, key, 2, value, value_required=False)
    if isinstance(data_type, spark.StructType):
        return StructType(
            *(
                NestedField(
                    i + 1, f.name, iceberg_type(f.dataType, f"{path}.{f.name}"), required=False
                )
                for i, f in enumerate(data_type.fields)
            )
        )
    raise UnsupportedTypeError(
        f"column `{path}` has Spark type {data_type.simpleString()}, which Iceberg cannot store"
    )


def is_widening(old: IcebergType, new: IcebergType) -> bool:
    """Type changes Iceberg applies in place: int to long, float to double, and a decimal
    precision increase at the same scale."""
    from pyiceberg.types import DecimalType, DoubleType, FloatType, IntegerType, LongType

    if isinstance(old, IntegerType) and isinstance(new, LongType):
        return True
    if isinstance(old, FloatType) and isinstance(new, DoubleType):
        return True
    return (
        isinstance(old, DecimalType)
        and isinstance(new, DecimalType)
        and new.scale == old.scale
        and new.precision > old.precision
    )


def same_type(old: IcebergType, new: IcebergType) -> bool:
    """Equal types, comparing nested types by shape (not by field ids)."""
    return spark_type_name(old) == spark_type_name(new)


def cast_void_columns(sql: str, fields: list[spark.StructField]) -> tuple[str, list[str]]:
    """The query (whose output is `fields`) with every column Spark types as `void` (a bare
    NULL) cast to string, since Iceberg cannot store void, and the names of those columns;
    the query itself when there is none."""
    typed = [without_void(f.dataType) for f in fields]
    untyped = [f.name for f, t in zip(fields, typed, strict=True) if t != f.dataType]
    if not untyped:
        return sql, []
    columns = ", ".join(
        f"CAST({quote(f.name)} AS {type_sql(t)}) AS {quote(f.name)}"
        if t != f.dataType
        else quote(f.name)
        for f, t in zip(fields, typed, strict=True)
    )
    return f"SELECT {columns} FROM (\n{sql}\n) AS dbt_typed_rows", untyped


def typed_query(model_name: str, sql: str, fields: list[spark.StructField]) -> str:
    """`cast_void_columns`, warning (naming the model and the columns) when it casts."""
    typed, untyped = cast_void_columns(sql, fields)
    if untyped:
        logger.warning(
            f"{model_name}: column(s) {', '.join(untyped)} hold only NULL and have no "
            "type; stored as string. Cast them (cast(null as <type>)) to choose a type"
        )
    return typed


def time_zone(name: str) -> tzinfo:
    """A Spark session time zone (`UTC`, `Europe/Paris`, `+02:00`) as a tzinfo."""
    offset = re.fullmatch(r"(?:GMT|UTC)?([+-])(\d{1,2}):?(\d{2})?", name.strip())
    if offset:
        sign = -1 if offset.group(1) == "-" else 1
        return timezone(
            sign * timedelta(hours=int(offset.group(2)), minutes=int(offset.group(3) or 0))
        )
    return ZoneInfo(name.strip())


def session_wall_time(value: datetime | None, zone: tzinfo) -> datetime | None:
    """A fetched TIMESTAMP as the session time zone's wall time. PySpark builds it as the
    Python process's local time (`datetime.fromtimestamp`); reading it back as local time
    recovers the instant exactly, ambiguous hours included (`fold`)."""
    if value is None or value.tzinfo is not None:
        return value
    return value.astimezone(zone).replace(tzinfo=None)
