"""The catalog DDL API: namespaces, tables and columns through PyIceberg, for macros and
`dbt run-operation` (the package's `s3tables_*` macros).

Every call is thread-safe: it goes through `IcebergCatalog`'s catalog, which is shared by
threads and retried on catalog locks. Arguments are checked before any call is made
(under `s3tables_rules`, against S3 Tables' naming rules too); failures are typed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dbt.adapters.base.column import Column
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.events.logging import AdapterLogger
from pyiceberg.exceptions import (
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)

from dbt.adapters.s3tables.catalogs.metadata_changes import ColumnChange, MetadataChange
from dbt.adapters.s3tables.catalogs.s3tables.rules import name_problem
from dbt.adapters.s3tables.errors import (
    AlreadyExists,
    InvalidArgument,
    NotFound,
    SchemaNotEmpty,
    UnsupportedTypeError,
)
from dbt.adapters.s3tables.keys.format_version import format_version_value
from dbt.adapters.s3tables.sql.contracts import not_null_columns
from dbt.adapters.s3tables.sql.types import (
    iceberg_type,
    is_widening,
    parse_spark_type,
    same_type,
    spark_type_name,
)

if TYPE_CHECKING:
    from pyiceberg.types import IcebergType

    from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog

logger = AdapterLogger("s3tables")

ON_CONFLICT = ("error", "ignore", "replace")
COMMENT_PROPERTY = "comment"


def split_table_name(name: str) -> tuple[str, str]:
    """`namespace.table` as a pair, or InvalidArgument."""
    parts = str(name or "").split(".")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise InvalidArgument(
            f"table name `{name}` must be `<namespace>.<table>`, e.g. `analytics.orders`"
        )
    return parts[0].strip(), parts[1].strip()


# dbt's generic character types (`api.Column`'s default `varchar`, Postgres' `text`):
# Iceberg has one character type, string.
GENERIC_STRING_TYPES = ("varchar", "char", "text", "character varying")


def column_type(column: str, type_text: str) -> IcebergType:
    """The Iceberg type of a column declared with a Spark SQL type string."""
    text = str(type_text)
    if text.strip().lower() in GENERIC_STRING_TYPES:
        text = "string"
    try:
        return iceberg_type(parse_spark_type(text), column)
    except (ValueError, UnsupportedTypeError) as error:
        raise InvalidArgument(f"column `{column}`: {error}") from None


def column_definitions(columns: Any) -> list[tuple[str, IcebergType]]:
    """`[{name: type}, ...]` (one field per definition, order kept) as Iceberg types."""
    if not isinstance(columns, Sequence) or isinstance(columns, (str, bytes)) or not columns:
        raise InvalidArgument(
            "columns must be a non-empty list of one-field mappings, e.g. "
            "[{id: bigint}, {name: string}]"
        )
    definitions = []
    seen: set[str] = set()
    for definition in columns:
        if not isinstance(definition, Mapping) or len(definition) != 1:
            raise InvalidArgument(
                f"column definition {definition!r} must have exactly one field, `name: type`"
            )
        ((name, type_text),) = definition.items()
        name = str(name)
        if not name.strip():
            raise InvalidArgument("a column name is empty")
        if name.lower() in seen:
            raise InvalidArgument(f"column `{name}` is declared twice")
        seen.add(name.lower())
        definitions.append((name, column_type(name, type_text)))
    return definitions


class CatalogDdl:
    """DDL on one catalog, checked before any call: the catalog DDL API of the `s3tables_*`
    macros, and dbt's column and docs macros."""

    def __init__(self, iceberg: IcebergCatalog, s3tables_rules: bool) -> None:
        self.iceberg = iceberg
        self.s3tables_rules = s3tables_rules

    @property
    def _catalog(self) -> Any:
        return self.iceberg.catalog

    def _check_name(self, name: str, kind: str) -> None:
        if not str(name or "").strip():
            raise InvalidArgument(f"the {kind} name is empty")
        if self.s3tables_rules:
            problem = name_problem(name, kind)
            if problem:
                raise InvalidArgument(problem)

    def _table(self, name: str) -> tuple[str, str]:
        namespace, table = split_table_name(name)
        self._check_name(namespace, "namespace")
        self._check_name(table, "table")
        return namespace, table

    # --- what the materializations ask of a relation's catalog ---

    def emulator_table_location(self, relation: BaseRelation) -> str | None:
        """TEST ONLY: the location a new table gets on an emulated catalog that assigns
        none (`emulator_table_location`); None everywhere else."""
        root = self.iceberg.config.emulator_table_location
        return f"{root.rstrip('/')}/{relation.schema}/{relation.identifier}" if root else None

    def enforce_not_null(self, relation: BaseRelation, model: Mapping[str, Any]) -> None:
        """After a build of a model with an enforced contract: its `not_null` columns become
        required Iceberg fields (the build statement has checked every row)."""
        if not (model.get("config") or {}).get("contract", {}).get("enforced"):
            return
        not_null = not_null_columns(model["columns"], model.get("constraints") or [])
        if not_null:
            changed = self.iceberg.require_columns(
                str(relation.schema), str(relation.identifier), not_null
            )
            if changed:
                logger.debug(f"{model['name']}: required in the Iceberg schema: {changed}")

    # --- namespaces ---

    def create_namespace(
        self,
        name: str,
        comment: str | None = None,
        properties: Mapping[str, Any] | None = None,
    ) -> None:
        self._check_name(name, "namespace")
        values = {str(k): str(v) for k, v in (properties or {}).items()}
        if comment is not None:
            values[COMMENT_PROPERTY] = str(comment)

        def create() -> None:
            try:
                self._catalog.create_namespace(name, values)
            except NamespaceAlreadyExistsError:
                raise AlreadyExists(f"namespace `{name}` already exists") from None

        self.iceberg.call(create, f"create namespace {name}")

    def drop_namespace(self, name: str, ignore_not_found: bool = False) -> None:
        self._check_name(name, "namespace")

        def drop() -> None:
            if not self._catalog.namespace_exists(name):
                if ignore_not_found:
                    return
                raise NotFound(f"namespace `{name}` does not exist")
            relations = self.iceberg.list_relations(name)
            if relations:
                names = ", ".join(r.name for r in relations[:5])
                raise SchemaNotEmpty(
                    f"namespace `{name}` still holds {len(relations)} table(s) or view(s) "
                    f"({names}); drop them first"
                )
            try:
                self._catalog.drop_namespace(name)
            except NamespaceNotEmptyError:
                raise SchemaNotEmpty(f"namespace `{name}` is not empty") from None
            except NoSuchNamespaceError:
                if not ignore_not_found:
                    raise NotFound(f"namespace `{name}` does not exist") from None

        self.iceberg.call(drop, f"drop namespace {name}")

    # --- tables ---

    def create_table(
        self,
        name: str,
        columns: Any,
        on_conflict: str = "error",
        comment: str | None = None,
        not_null: Sequence[str] | None = (),
    ) -> None:
        namespace, table = self._table(name)
        if on_conflict not in ON_CONFLICT:
            raise InvalidArgument(
                f"on_conflict `{on_conflict}` is unknown; use one of: {', '.join(ON_CONFLICT)}"
            )
        definitions = column_definitions(columns)
        for column, _ in definitions:
            if self.s3tables_rules and name_problem(column, "column"):
                raise InvalidArgument(str(name_problem(column, "column")))
        required = {str(c).lower() for c in not_null or ()}
        unknown = required - {c.lower() for c, _ in definitions}
        if unknown:
            raise InvalidArgument(f"not_null names unknown column(s): {', '.join(sorted(unknown))}")
        from pyiceberg.schema import Schema
        from pyiceberg.types import NestedField

        schema = Schema(
            *(
                NestedField(i + 1, column, kind, required=column.lower() in required)
                for i, (column, kind) in enumerate(definitions)
            )
        )
        properties = {COMMENT_PROPERTY: str(comment)} if comment is not None else {}
        identifier = (namespace, table)

        def create() -> None:
            if on_conflict == "replace":
                # PyIceberg 0.12 has no atomic replace: the old table goes first.
                try:
                    self._catalog.purge_table(identifier)
                except NoSuchTableError:
                    pass
                except NoSuchNamespaceError:
                    raise NotFound(f"namespace `{namespace}` does not exist") from None
            try:
                self._catalog.create_table(identifier, schema, properties=properties)
            except TableAlreadyExistsError:
                if on_conflict == "error":
                    raise AlreadyExists(f"table `{name}` already exists") from None
            except NoSuchNamespaceError:
                raise NotFound(f"namespace `{namespace}` does not exist") from None

        self.iceberg.call(create, f"create table {name}")

    def drop_table(self, name: str, ignore_not_found: bool = False) -> None:
        """Drop a table and its files (S3 Tables only accepts purging drops)."""
        identifier = self._table(name)

        def drop() -> None:
            try:
                self._catalog.purge_table(identifier)
            except (NoSuchTableError, NoSuchNamespaceError):
                if not ignore_not_found:
                    raise NotFound(f"table `{name}` does not exist") from None

        self.iceberg.call(drop, f"drop table {name}")

    # --- columns ---

    def _load(self, name: str) -> Any:
        namespace, table = self._table(name)
        try:
            return self.iceberg.load_table(namespace, table)
        except (NoSuchTableError, NoSuchNamespaceError):
            raise NotFound(f"table `{name}` does not exist") from None

    def _commit(self, name: str, loaded: Any, change: MetadataChange) -> None:
        namespace, table = self._table(name)
        self.iceberg.commit(namespace, table, loaded, change)

    def add_column(
        self,
        table: str,
        name: str,
        type: str,
        comment: str | None = None,
        if_not_exists: bool = False,
    ) -> None:
        self._check_name(name, "column")
        kind = column_type(name, type)

        def add() -> None:
            loaded = self._load(table)
            if any(f.name.lower() == name.lower() for f in loaded.schema().fields):
                if if_not_exists:
                    return
                raise AlreadyExists(f"table `{table}` already has a column `{name}`")
            change = MetadataChange(add_columns=[ColumnChange((name,), kind, doc=comment)])
            self._commit(table, loaded, change)

        self.iceberg.call(add, f"add column {table}.{name}")

    def remove_column(self, table: str, name: str, if_exists: bool = False) -> None:
        """Only for an operator who asks by name: no materialization ever calls this."""
        self._check_name(name, "column")

        def remove() -> None:
            loaded = self._load(table)
            wanted = name.lower()
            match = next((f for f in loaded.schema().fields if f.name.lower() == wanted), None)
            if match is None:
                if if_exists:
                    return
                raise NotFound(f"table `{table}` has no column `{name}`")
            self._commit(table, loaded, MetadataChange(delete_columns=[match.name]))

        self.iceberg.call(remove, f"remove column {table}.{name}")

    def alter_columns(
        self, table: str, add: Sequence[tuple[str, str]], remove: Sequence[str]
    ) -> None:
        """dbt's `alter_relation_add_remove_columns`: add `(name, type)` columns and remove
        named ones in one schema commit. Checked whole before the commit: adding an
        existing column or removing a missing one changes nothing and raises."""
        for name, _ in add:
            self._check_name(name, "column")
        kinds = [(name, column_type(name, kind)) for name, kind in add]

        def alter() -> None:
            loaded = self._load(table)
            fields = {f.name.lower(): f.name for f in loaded.schema().fields}
            clashes = [name for name, _ in kinds if name.lower() in fields]
            if clashes:
                raise AlreadyExists(f"table `{table}` already has column(s) {', '.join(clashes)}")
            missing = [name for name in remove if name.lower() not in fields]
            if missing:
                raise NotFound(f"table `{table}` has no column(s) {', '.join(missing)}")
            if not kinds and not remove:
                return
            change = MetadataChange(
                add_columns=[ColumnChange((name,), kind) for name, kind in kinds],
                delete_columns=[fields[name.lower()] for name in remove],
            )
            self._commit(table, loaded, change)

        self.iceberg.call(alter, f"columns of {table}")

    def alter_relation_columns(
        self,
        relation: BaseRelation,
        add_columns: Sequence[Column] | None,
        remove_columns: Sequence[Column] | None,
    ) -> None:
        """dbt's `alter_relation_add_remove_columns` (and snapshots' `create_columns`), given
        dbt's columns: one schema commit. Iceberg drops columns; this adapter's
        materializations never ask it to."""
        self.alter_columns(
            f"{relation.schema}.{relation.identifier}",
            [(c.name, c.data_type) for c in add_columns or []],
            [c.name for c in remove_columns or []],
        )

    def change_column_type(self, table: str, name: str, type_text: str) -> None:
        """dbt's `alter_column_type`. Iceberg changes a type in place only when it widens
        (int to bigint, float to double, decimal precision up at the same scale); the same
        type is no change; anything else raises and changes nothing."""
        new_type = column_type(name, type_text)

        def change() -> None:
            loaded = self._load(table)
            wanted = name.lower()
            field = next((f for f in loaded.schema().fields if f.name.lower() == wanted), None)
            if field is None:
                raise NotFound(f"table `{table}` has no column `{name}`")
            if same_type(field.field_type, new_type):
                return
            if not is_widening(field.field_type, new_type):
                raise InvalidArgument(
                    f"column `{field.name}` of `{table}` cannot change from "
                    f"{spark_type_name(field.field_type)} to {spark_type_name(new_type)}: "
                    "Iceberg only widens types in place (int to bigint, float to double, "
                    "decimal precision up). Rebuild the table (--full-refresh) to change it"
                )
            change = MetadataChange(update_columns=[ColumnChange((field.name,), new_type)])
            self._commit(table, loaded, change)

        self.iceberg.call(change, f"type of {table}.{name}")

    def upgrade_format_version(self, table: str, version: int = 3) -> None:
        """`s3tables_upgrade_format_version`: the table at Iceberg format `version`, in
        place (one metadata commit, no data rewritten); said in one line either way."""
        wanted = format_version_value(version)
        if wanted is None:
            raise InvalidArgument(
                f"`version: {version}` is not an Iceberg format version a table can be "
                "upgraded to. Fix: pass `version: 3` (or 2)"
            )
        namespace, name = self._table(table)
        try:
            before = self.iceberg.upgrade_format_version(namespace, name, wanted)
        except (NoSuchTableError, NoSuchNamespaceError):
            raise NotFound(f"table `{table}` does not exist") from None
        if before == wanted:
            logger.info(f"`{table}` is already at Iceberg format v{wanted}: nothing changed")
        else:
            logger.info(
                f"upgraded `{table}` from Iceberg format v{before} to v{wanted}: one metadata "
                "commit, no data file rewritten"
            )

    # --- docs ---

    def persist_docs(
        self, namespace: str, name: str, description: str | None, columns: Mapping[str, str]
    ) -> None:
        """The model's description as the table's `comment` property and the column
        descriptions as Iceberg column docs, in one commit each (only what changed)."""

        def write() -> None:
            loaded = self._load(f"{namespace}.{name}")
            fields = {f.name.lower(): f for f in loaded.schema().fields}
            docs = {
                fields[c.lower()].name: text
                for c, text in columns.items()
                if c.lower() in fields and fields[c.lower()].doc != text
            }
            comment_changed = description and loaded.properties.get(COMMENT_PROPERTY) != description
            if not docs and not comment_changed:
                return
            comment = {COMMENT_PROPERTY: description} if comment_changed and description else {}
            change = MetadataChange(
                set_properties=comment,
                update_columns=[ColumnChange((c,), doc=text) for c, text in docs.items()],
            )
            self.iceberg.commit(namespace, name, loaded, change)

        self.iceberg.call(write, f"docs of {namespace}.{name}")
