"""Iceberg types rendered as Spark SQL type names, and Spark SQL type strings parsed
(pure functions)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)
from pyspark.sql import types as spark

_PRIMITIVES: dict[type, str] = {
    BooleanType: "boolean",
    IntegerType: "int",
    LongType: "bigint",
    FloatType: "float",
    DoubleType: "double",
    DateType: "date",
    # Spark's TIMESTAMP is instant semantics (Iceberg timestamptz); TIMESTAMP_NTZ is local.
    TimestamptzType: "timestamp",
    TimestampType: "timestamp_ntz",
    StringType: "string",
    # Spark reads Iceberg uuid as string, fixed and binary as binary, time is unsupported.
    UUIDType: "string",
    FixedType: "binary",
    BinaryType: "binary",
    TimeType: "string",
}


def spark_type_name(iceberg_type: IcebergType) -> str:
    """Spark SQL spelling of an Iceberg type, as `DESCRIBE` would print it."""
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
    for cls, name in _PRIMITIVES.items():
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
            return getattr(spark, _SPARK_SIMPLE_TYPES[name])()
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
        fields = []
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
