"""Iceberg types rendered as Spark SQL type names (pure functions)."""

from __future__ import annotations

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
