"""A whole-table build whose contract's `not_null` columns must be declared NOT NULL when
the table is created: a format-v3 table (or one a build takes to v3) of a catalog whose
metadata files PyIceberg writes (the embedded catalog).

Elsewhere the build is one `CREATE [OR REPLACE] TABLE ... AS SELECT` and the `not_null`
columns are made required afterwards through PyIceberg (`CatalogDdl.enforce_not_null`).
Here that second step has no way to run: PyIceberg 0.12 cannot write v3 metadata, Spark
refuses `ALTER COLUMN ... SET NOT NULL` on Iceberg tables, Spark forbids a column list in
`CREATE [OR REPLACE] TABLE ... AS SELECT`, and Iceberg's Spark catalog makes every column
of such a statement nullable. What Spark does accept is `CREATE TABLE t (id int NOT NULL,
...)` without a query. So:

- no table yet: `CREATE TABLE` with the typed column list (a metadata commit, no snapshot),
  then one `INSERT INTO` (the one data commit). A failed insert drops the table again while
  it has no snapshot, so a failed build leaves no table, as a failed CTAS does;
- a table with exactly these columns (names, order, types, which are required) and this
  partitioning: one `INSERT OVERWRITE` replacing every row (one atomic commit, history
  kept), after the model's table properties (and a higher format version) are set;
- a table whose columns or partitioning differ: refused before anything is written, since
  no Spark statement can replace it in one commit with the NOT NULL columns declared;
- audited (`audit_before_publish`): a missing table is created empty with its typed column
  list; an existing one must already require every `not_null` column it has, and the
  build may not add one (Iceberg branches share one schema).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.incremental.partition_evolution import parse_partition_by, spec_change
from dbt.adapters.s3tables.keys.format_version import FORMAT_VERSION_PROPERTY
from dbt.adapters.s3tables.sql.contracts import declared_columns_sql
from dbt.adapters.s3tables.sql.text import quote
from dbt.adapters.s3tables.sql.types import iceberg_type, same_type, type_sql, without_void

if TYPE_CHECKING:
    from dbt.adapters.base.relation import BaseRelation
    from dbt.adapters.contracts.connection import AdapterResponse
    from pyiceberg.schema import Schema
    from pyiceberg.types import IcebergType
    from pyspark.sql.types import StructType

    from dbt.adapters.s3tables.catalogs.table_changes import TableState
    from dbt.adapters.s3tables.incremental.warehouse import Warehouse

logger = AdapterLogger("s3tables")

# Iceberg's format version of a table created without `format-version` (Iceberg 1.12).
DEFAULT_FORMAT_VERSION = 2
# A whole-table overwrite, whatever the session's partition overwrite mode: `dynamic`
# would replace only the partitions the new rows fall in.
WHOLE_TABLE_OVERWRITE = {"spark.sql.sources.partitionOverwriteMode": "static"}


@dataclass(frozen=True)
class WantedColumn:
    """A column of the table the build writes: its name, type and whether it is required."""

    name: str
    type_sql: str
    iceberg_type: IcebergType
    required: bool

    def describe(self) -> str:
        return f"`{self.name}` {self.type_sql}{' NOT NULL' if self.required else ''}"


def wanted_columns(schema: StructType, not_null: Sequence[str]) -> list[WantedColumn]:
    """The query's output columns as the table stores them (a bare NULL's `void` as
    string, as a created table stores it), the contract's `not_null` ones required."""
    required = {c.lower() for c in not_null}
    columns = []
    for field in without_void(schema).fields:
        columns.append(
            WantedColumn(
                field.name,
                type_sql(field.dataType),
                iceberg_type(field.dataType, field.name),
                field.name.lower() in required,
            )
        )
    return columns


def resulting_format_version(properties: Mapping[str, str], table_version: int | None) -> int:
    """The format version the table has after the build: the one the build's properties
    ask for (Iceberg's default without), or the table's own when higher (a rebuild never
    lowers it; a lower one is refused before, see ModelConfig.lowered_format_version)."""
    asked = int(properties.get(FORMAT_VERSION_PROPERTY, DEFAULT_FORMAT_VERSION))
    return max(asked, table_version or 0)


def schema_differences(schema: Schema, wanted: Sequence[WantedColumn]) -> list[str]:
    """How the table's columns differ from the wanted ones (names in order, types, which
    are required), one phrase each; empty when they are the same."""
    fields = {f.name.lower(): f for f in schema.fields}
    names = {c.name.lower() for c in wanted}
    differences = [f"column `{c.name}` is new" for c in wanted if c.name.lower() not in fields]
    differences += [
        f"column `{f.name}` is no longer returned"
        for f in schema.fields
        if f.name.lower() not in names
    ]
    for column in wanted:
        field = fields.get(column.name.lower())
        if field is None:
            continue
        if not same_type(field.field_type, column.iceberg_type):
            differences.append(f"column `{column.name}` changes type to {column.type_sql}")
        if field.required != column.required:
            now = "NOT NULL" if column.required else "nullable"
            differences.append(f"column `{column.name}` becomes {now}")
    kept = [c.name.lower() for c in wanted if c.name.lower() in fields]
    if not differences and kept != [f.name.lower() for f in schema.fields]:
        differences.append("the columns are in another order")
    return differences


def unrequired_not_null(schema: Schema, wanted: Sequence[WantedColumn]) -> list[str]:
    """The wanted required columns the table does not require (or does not have)."""
    fields = {f.name.lower(): f for f in schema.fields}
    return [
        c.name
        for c in wanted
        if c.required and (c.name.lower() not in fields or not fields[c.name.lower()].required)
    ]


def _drop_fix(table: str) -> str:
    return (
        f"drop the table (`dbt run-operation s3tables_drop_table --args '{{name: {table}}}'`; "
        "its snapshot history goes with it) and build the model again"
    )


# Why the build cannot be done, for the refusals.
WHY = (
    "the embedded catalog declares a format-v3 table's NOT NULL columns only when it creates "
    "the table (PyIceberg 0.12 cannot write v3 metadata, and Spark can neither declare "
    "columns in CREATE OR REPLACE TABLE ... AS SELECT nor make a column NOT NULL in place)"
)


@dataclass
class RequiredColumnsBuild:
    """One build of the model `model_name` into `target` whose `not_null` columns are
    declared at creation (see the module docstring). Built by `plan_required_columns`,
    which has checked everything; the materialization then writes through it."""

    model_name: str
    target: BaseRelation
    warehouse: Warehouse
    # The statement path that reports its response (the adapter's connection).
    execute: Callable[[str], AdapterResponse]
    columns: list[WantedColumn]
    sql: str
    properties: dict[str, str]
    format_version: int
    # The table's state before the build (None: it does not exist).
    existing: TableState | None

    @property
    def creates_table(self) -> bool:
        return self.existing is None

    @property
    def column_definitions(self) -> str:
        """The typed column list of CREATE TABLE, `not_null` columns declared NOT NULL."""
        return declared_columns_sql([(c.name, c.type_sql, c.required) for c in self.columns])

    @property
    def _namespace(self) -> str:
        return str(self.target.schema)

    @property
    def _name(self) -> str:
        return str(self.target.identifier)

    def _select(self) -> str:
        names = ", ".join(quote(c.name) for c in self.columns)
        return f"SELECT {names} FROM (\n{self.sql}\n) AS dbt_required_rows"

    def create_and_fill(self, create_sql: str) -> tuple[AdapterResponse, str]:
        """The table created by `create_sql` (its typed column list), then its rows in
        one commit; a failed insert drops the table while it has no snapshot. Returns the
        insert's response and the statements run."""
        insert = f"INSERT INTO {self.target}\n{self._select()}"
        self.execute(create_sql)
        try:
            # Its commit records what the build read of its upstreams (upstream_changes()).
            self.warehouse.engine.tag_next_write()
            response = self.execute(insert)
        except Exception:
            self._drop_unfilled()
            raise
        return response, f"{create_sql};\n\n{insert}"

    def _drop_unfilled(self) -> None:
        """The table this build created, dropped again unless something committed rows to
        it meanwhile (a build that failed leaves no table, as a failed CTAS)."""
        iceberg = self.warehouse.iceberg
        try:
            state = iceberg.table_state(self._namespace, self._name)
            if state.snapshot_id is not None:
                logger.warning(
                    f"{self.model_name}: the insert failed, and `{self.target}` already has "
                    "a snapshot another writer committed: the table is left as it is"
                )
                return
            self.execute(f"DROP TABLE IF EXISTS {self.target} PURGE")
        except Exception as error:  # the insert's error is the one to report
            logger.warning(
                f"{self.model_name}: the insert failed and the empty table `{self.target}` it "
                f"was created for could not be dropped ({error}); drop it with `dbt "
                f"run-operation s3tables_drop_table --args '{{name: {self._namespace}."
                f"{self._name}}}'` before building again"
            )
            return
        logger.debug(f"{self.model_name}: the insert failed; dropped the empty {self.target}")

    def overwrite(self) -> tuple[AdapterResponse, str]:
        """The existing table (already of these columns) replaced: the model's table
        properties and format version set first when they differ, then every row in one
        `INSERT OVERWRITE` commit. Returns its response and the statement."""
        assert self.existing is not None, "overwrite() replaces an existing table"
        iceberg = self.warehouse.iceberg
        wanted = {k: v for k, v in self.properties.items() if k != FORMAT_VERSION_PROPERTY}
        iceberg.set_properties_if_changed(self._namespace, self._name, wanted)
        if self.format_version > self.existing.format_version:
            iceberg.upgrade_format_version(self._namespace, self._name, self.format_version)
        statement = f"INSERT OVERWRITE {self.target}\n{self._select()}"
        with self.warehouse.engine.settings(WHOLE_TABLE_OVERWRITE):
            self.warehouse.engine.tag_next_write()
            response = self.execute(statement)
        return response, statement


def plan_required_columns(
    *,
    model_name: str,
    target: BaseRelation,
    warehouse: Warehouse,
    execute: Callable[[str], AdapterResponse],
    not_null: Sequence[str],
    sql: str,
    properties: Mapping[str, str],
    partition_by: Any,
    table_exists: bool,
    audited: bool,
) -> RequiredColumnsBuild | None:
    """The build of a model with an enforced contract whose `not_null` columns must be
    declared at creation, checked before anything is written; None when the table's
    metadata takes them after the build (no `not_null` column, format v2, or a catalog
    whose server writes the metadata)."""
    if not not_null:
        return None
    iceberg = warehouse.iceberg
    namespace, name = str(target.schema), str(target.identifier)
    existing = iceberg.table_state(namespace, name) if table_exists else None
    version = resulting_format_version(properties, existing.format_version if existing else None)
    if not iceberg.writes_metadata_through_sql(version):
        return None
    columns = wanted_columns(warehouse.engine.query_schema(sql), not_null)
    build = RequiredColumnsBuild(
        model_name, target, warehouse, execute, columns, sql, dict(properties), version, existing
    )
    if existing is not None:
        check_existing_table(build, existing, partition_by, audited)
    return build


def check_existing_table(
    build: RequiredColumnsBuild, existing: TableState, partition_by: Any, audited: bool
) -> None:
    """Refuse, before anything is written, a build of an existing table whose NOT NULL
    columns it cannot keep exact: audited, a `not_null` column the table does not require;
    otherwise, any change of columns or partitioning."""
    table = f"{build.target.schema}.{build.target.identifier}"
    if audited:
        missing = unrequired_not_null(existing.schema, build.columns)
        if missing:
            raise ModelConfigError(
                build.model_name,
                "contract",
                f"`not_null` column(s) {', '.join(f'`{c}`' for c in missing)} are not NOT NULL "
                f"in its table `{table}` (Iceberg format v{build.format_version}), and {WHY}, "
                "so an audited build cannot make them so",
                _drop_fix(table),
            )
        return
    differences = schema_differences(existing.schema, build.columns)
    entries = [partition_by] if isinstance(partition_by, str) else list(partition_by or [])
    change = spec_change(
        existing.spec, existing.schema, parse_partition_by(build.model_name, entries)
    )
    if not differences and change.empty:
        return
    key = "contract" if differences else "partition_by"
    if not change.empty:
        differences.append(f"the partitioning changes ({change.describe()})")
    raise ModelConfigError(
        build.model_name,
        key,
        f"its table `{table}` is at Iceberg format v{build.format_version} and this build "
        f"changes it ({'; '.join(differences)}), but {WHY}, so no statement replaces it in "
        "one commit; nothing was written",
        _drop_fix(table) + ", or keep its columns and partitioning as they are",
    )
