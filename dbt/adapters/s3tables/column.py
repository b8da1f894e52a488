"""Columns as dbt sees them, with Spark's type names recognised (`int`, `string`,
`decimal(10,2)`), which dbt's base class only knows in Postgres spelling."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.spark.column import SparkColumn

from dbt.adapters.s3tables.catalogs.relations import ColumnInfo
from dbt.adapters.s3tables.sql.text import quote

_INTEGER_TYPES = {"tinyint", "byte", "smallint", "short", "int", "integer", "bigint", "long"}
_FLOAT_TYPES = {"float", "real", "double"}
_NUMERIC = re.compile(r"(decimal|dec|numeric)(\(\s*\d+\s*(,\s*\d+\s*)?\))?")
_STRING = re.compile(r"string|(var)?char\(\s*\d+\s*\)")


@dataclass
class S3TablesColumn(SparkColumn):
    @classmethod
    def from_catalog(
        cls, relation: BaseRelation, database: str | None, columns: list[ColumnInfo]
    ) -> list[SparkColumn]:
        """The columns of `relation` as its catalog describes them."""
        return [
            cls(
                table_database=database,
                table_schema=relation.schema,
                table_name=relation.identifier,
                table_type=relation.type,
                column_index=index,
                column=column.name,
                dtype=column.data_type,
            )
            for index, column in enumerate(columns)
        ]

    @property
    def _base_type(self) -> str:
        return self.dtype.strip().lower()

    def is_string(self) -> bool:
        return bool(_STRING.fullmatch(self._base_type))

    def is_integer(self) -> bool:
        return self._base_type in _INTEGER_TYPES

    def is_float(self) -> bool:
        return self._base_type in _FLOAT_TYPES

    def is_numeric(self) -> bool:
        return bool(_NUMERIC.fullmatch(self._base_type))

    def string_size(self) -> int:
        # Spark's `string` has no declared size; `varchar(n)` and `char(n)` do.
        size = re.search(r"\((\d+)\)", self._base_type)
        return int(size.group(1)) if size and self.is_string() else super().string_size()

    @property
    def quoted(self) -> str:
        return quote(self.column)

    def __repr__(self) -> str:
        return f"<S3TablesColumn {self.name} ({self.data_type})>"
