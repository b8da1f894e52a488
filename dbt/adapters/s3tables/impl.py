"""The s3tables adapter: dbt-spark's SQL dialect, PyIceberg for every metadata read."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from dbt.adapters.base import available
from dbt.adapters.base.impl import AdapterConfig, ConstraintSupport, FreshnessResponse
from dbt.adapters.base.relation import BaseRelation, InformationSchema
from dbt.adapters.capability import Capability, CapabilityDict, CapabilitySupport, Support
from dbt.adapters.contracts.connection import AdapterResponse, Connection
from dbt.adapters.contracts.relation import RelationType
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.impl import SparkAdapter
from dbt.flags import get_flags
from dbt_common.clients.agate_helper import DEFAULT_TYPE_TESTER
from dbt_common.contracts.constraints import (
    ColumnLevelConstraint,
    ConstraintType,
    ModelLevelConstraint,
)
from dbt_common.contracts.metadata import (
    CatalogTable,
    ColumnMetadata,
    StatsItem,
    TableMetadata,
)
from dbt_common.exceptions import DbtRuntimeError
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

from dbt.adapters.s3tables.catalog_ddl import CatalogDdl
from dbt.adapters.s3tables.catalogs import catalog_type_named
from dbt.adapters.s3tables.catalogs.config import catalog_config_for
from dbt.adapters.s3tables.catalogs.iceberg import (
    CatalogRelation,
    IcebergCatalog,
    RelationDetails,
    TableState,
    TableStats,
    iceberg_catalog_for,
)
from dbt.adapters.s3tables.chunked_refresh import CONFIG_KEY as CHUNK_CONFIG_KEY
from dbt.adapters.s3tables.chunked_refresh import (
    ChunkPlan,
    Progress,
    chunk_plan,
    chunk_sql,
    chunk_starts_sql,
    chunk_windows,
    progress_sql,
)
from dbt.adapters.s3tables.column import S3TablesColumn
from dbt.adapters.s3tables.commit_counts import CommitCounts, IncrementalResponse, commit_counts
from dbt.adapters.s3tables.connections import S3TablesConnectionManager
from dbt.adapters.s3tables.contracts import contract_select_sql, not_null_columns
from dbt.adapters.s3tables.cross_db import listagg_sql
from dbt.adapters.s3tables.like_patterns import ilike
from dbt.adapters.s3tables.model_config import (
    IncrementalConfig,
    ModelConfigError,
    check_against_columns,
    check_columns_exist,
    check_model_config,
    incremental_config,
    merge_update_columns,
    resolve_use_merge,
    write_mode_properties,
)
from dbt.adapters.s3tables.model_state import (
    LAST_PROCESSED_VALUE,
    REBUILD_PLAN,
    compare_state,
    state_keys,
    state_properties,
)
from dbt.adapters.s3tables.python_models import run_python_model
from dbt.adapters.s3tables.relation import S3TablesRelation
from dbt.adapters.s3tables.s3tables_rules import (
    check_materialization,
    check_names,
    check_namespace,
)
from dbt.adapters.s3tables.schema_evolution import (
    REPLACING_MODES,
    WHOLE_HISTORY_MODES,
    SchemaDiff,
    UnsupportedTypeError,
    check_mode_for_strategy,
    plan_evolution,
    replaces_table,
    schema_diff,
)
from dbt.adapters.s3tables.seeds import SeedColumn, seed_select_sql
from dbt.adapters.s3tables.sql_text import quote, sql_string
from dbt.adapters.s3tables.strategies import (
    FALLBACK_BUILDERS,
    STRATEGY_BUILDERS,
    IncrementalWrite,
    append_sql,
)
from dbt.adapters.s3tables.types import spark_type_name, type_sql, without_void

if TYPE_CHECKING:
    import agate
    from pyiceberg.schema import Schema
    from pyspark.sql.types import StructType

logger = AdapterLogger("s3tables")

# Strategies whose statement changes nothing when the model returns no rows (microbatch
# still replaces its window with nothing).
SKIPPED_WHEN_EMPTY = ("append", "merge", "delete+insert", "scd2", "insert_overwrite")

# dbt commands whose nodes run SQL on the engine.
ENGINE_COMMANDS = frozenset({"run", "build", "seed", "snapshot", "test", "show", "clone", "retry"})


@dataclass
class S3TablesConfig(AdapterConfig):
    partition_by: list[str] | str | None = None
    tblproperties: dict[str, str] | None = None


def stats_items(stats: TableStats | None) -> dict[str, StatsItem]:
    """Snapshot-summary figures as dbt catalog statistics (views have none)."""
    if stats is None:
        return {}
    figures = [
        ("row_count", "Row count", stats.row_count, "Rows in the current snapshot"),
        ("num_files", "Data files", stats.file_count, "Data files in the current snapshot"),
        ("bytes", "Size (bytes)", stats.size_bytes, "Bytes of the current snapshot's files"),
    ]
    items = {
        key: StatsItem(id=key, label=label, value=value, include=True, description=text)
        for key, label, value, text in figures
        if value is not None
    }
    items["has_stats"] = StatsItem(
        id="has_stats", label="Has Stats?", value=bool(items), include=False
    )
    return items


class S3TablesAdapter(SparkAdapter):
    Relation = S3TablesRelation  # type: ignore[assignment]
    Column = S3TablesColumn  # type: ignore[assignment]
    ConnectionManager = S3TablesConnectionManager  # type: ignore[assignment]
    AdapterSpecificConfigs = S3TablesConfig  # type: ignore[assignment]

    def __init__(self, config: Any, mp_context: Any) -> None:
        credentials = config.credentials
        credentials.warehouse = catalog_type_named(credentials.catalog_type).resolve_warehouse(
            credentials.warehouse, getattr(config, "project_root", None)
        )
        super().__init__(config, mp_context)
        self._full_renders: set[str] = set()
        self._full_render_lock = threading.Lock()

    # not_null is checked in the writing statement and kept as a required Iceberg field;
    # Iceberg has no other constraints, so dbt warns that they are not enforced.
    CONSTRAINT_SUPPORT = {
        ConstraintType.check: ConstraintSupport.NOT_ENFORCED,
        ConstraintType.not_null: ConstraintSupport.ENFORCED,
        ConstraintType.unique: ConstraintSupport.NOT_ENFORCED,
        ConstraintType.primary_key: ConstraintSupport.NOT_ENFORCED,
        ConstraintType.foreign_key: ConstraintSupport.NOT_ENFORCED,
    }

    _capabilities = CapabilityDict(
        {
            # Freshness and single-relation catalog entries come from Iceberg metadata.
            Capability.TableLastModifiedMetadata: CapabilitySupport(support=Support.Full),
            Capability.TableLastModifiedMetadataBatch: CapabilitySupport(support=Support.Full),
            Capability.GetCatalogForSingleRelation: CapabilitySupport(support=Support.Full),
        }
    )

    @classmethod
    def type(cls) -> str:
        return "s3tables"

    def quote(self, identifier: str) -> str:  # type: ignore[override]
        # str(): dbt's own callers quote values that may be None (an unset database).
        return quote(str(identifier))

    def acquire_connection(self, name: str | None = None) -> Connection:
        """dbt takes its `master` connection before the first node: for commands that run
        SQL, start the engine there, so that no node's timing carries its start-up."""
        connection = super().acquire_connection(name)
        if name == "master" and getattr(get_flags(), "WHICH", None) in ENGINE_COMMANDS:
            _ = connection.handle  # opens the connection: starts Spark, or reaches the server
        return connection

    @property
    def iceberg(self) -> IcebergCatalog:
        return iceberg_catalog_for(catalog_config_for(self.config.credentials))

    # --- schemas (Iceberg namespaces) ---

    def list_schemas(self, database: str) -> list[str]:
        return self.iceberg.list_namespaces()

    def check_schema_exists(self, database: str, schema: str) -> bool:
        return self.iceberg.namespace_exists(schema)

    @available.parse_none
    def ensure_namespace(self, namespace: str) -> None:
        """dbt's create_schema: create the namespace unless it exists."""
        if self.config.credentials.s3tables_rules:
            check_namespace(namespace)
        self.iceberg.create_namespace(namespace)

    @available
    def check_model_config(self, model_name: str, config: dict[str, Any]) -> None:
        """Refuse, naming the model, the key and the fix, configs that this adapter would
        otherwise ignore (another file_format, grants, Hive table options)."""
        check_model_config(model_name, config)

    @available
    def check_target_rules(
        self,
        model_name: str,
        relation: BaseRelation,
        materialized: str,
        sql: str | None = None,
        columns: list[str] | None = None,
    ) -> None:
        """Refuse, before any call, a target the catalog would refuse: on the embedded
        catalog, names longer than a folder name; with `s3tables_rules` on, what S3
        Tables refuses: views, and namespace, table or column names outside its rules
        (the columns are `columns`, or the output of `sql`, which Spark analyses without
        running it)."""
        for key, name in (("schema", relation.schema), ("alias", relation.identifier)):
            problem = self.iceberg.config.kind.name_length_problem(str(name))
            if problem:
                raise ModelConfigError(model_name, key, problem, f"choose a shorter {key}")
        if not self.config.credentials.s3tables_rules:
            return
        check_materialization(model_name, materialized)
        names = list(columns or []) + (self.query_columns(sql) if sql else [])
        check_names(model_name, str(relation.schema), str(relation.identifier), names)

    @available
    def clones_by_copy(self) -> bool:
        """`dbt clone` copies tables where views are refused (the S3 Tables rules); it makes
        views selecting from the state relations everywhere else."""
        return bool(self.config.credentials.s3tables_rules)

    @available.parse_none
    def drop_namespace_with_contents(self, namespace: str) -> None:
        """dbt's drop_schema: the namespace with every table (purged) and view in it."""
        self.iceberg.drop_namespace(namespace)

    # --- catalog DDL API (see catalog_ddl.py and the `s3tables_*` macros) ---

    @property
    def ddl(self) -> CatalogDdl:
        return CatalogDdl(self.iceberg, bool(self.config.credentials.s3tables_rules))

    @available.parse_none
    def create_namespace(
        self, name: str, comment: str | None = None, properties: dict[str, Any] | None = None
    ) -> None:
        self.ddl.create_namespace(name, comment, properties)

    @available.parse_none
    def drop_namespace(self, name: str, ignore_not_found: bool = False) -> None:
        """Raises SchemaNotEmpty while the namespace holds tables or views."""
        self.ddl.drop_namespace(name, ignore_not_found)

    @available.parse_none
    def create_table(
        self,
        name: str,
        columns: list[dict[str, str]],
        on_conflict: str = "error",
        comment: str | None = None,
        not_null: list[str] | None = None,
    ) -> None:
        self.ddl.create_table(name, columns, on_conflict, comment, not_null or [])

    @available.parse_none
    def drop_table(self, name: str, ignore_not_found: bool = False) -> None:
        self.ddl.drop_table(name, ignore_not_found)

    @available.parse_none
    def add_column(
        self,
        table: str,
        name: str,
        type: str,
        comment: str | None = None,
        if_not_exists: bool = False,
    ) -> None:
        self.ddl.add_column(table, name, type, comment, if_not_exists)

    @available.parse_none
    def remove_column(self, table: str, name: str, if_exists: bool = False) -> None:
        """For an operator who asks by name; no materialization calls it."""
        self.ddl.remove_column(table, name, if_exists)

    @available.parse_none
    def alter_columns(
        self,
        relation: BaseRelation,
        add_columns: list[Any] | None = None,
        remove_columns: list[Any] | None = None,
    ) -> None:
        """dbt's `alter_relation_add_remove_columns` (and snapshots' `create_columns`): one
        schema commit through PyIceberg. Iceberg drops columns; this adapter's
        materializations never ask it to."""
        self.ddl.alter_columns(
            f"{relation.schema}.{relation.identifier}",
            [(c.name, c.data_type) for c in add_columns or []],
            [c.name for c in remove_columns or []],
        )

    @available.parse_none
    def alter_column_type(self, relation: BaseRelation, column_name: str, new_type: str) -> None:
        """dbt's `alter_column_type`: a widening in place, or an error naming the change."""
        self.ddl.change_column_type(
            f"{relation.schema}.{relation.identifier}", column_name, new_type
        )

    @available.parse_none
    def persist_docs_to_catalog(
        self, relation: BaseRelation, description: str | None, columns: dict[str, str]
    ) -> None:
        """Model and column descriptions as the `comment` property and column docs."""
        self.ddl.persist_docs(str(relation.schema), str(relation.identifier), description, columns)

    # --- relations and columns ---

    def _relation_from_catalog(self, entry: CatalogRelation) -> S3TablesRelation:
        kind = RelationType.View if entry.kind == "view" else RelationType.Table
        return self.Relation.create(schema=entry.namespace, identifier=entry.name, type=kind)

    @available.parse_list
    def list_relations_without_caching(self, schema_relation: BaseRelation) -> list[BaseRelation]:
        entries = self.iceberg.list_relations(schema_relation.schema)
        return [self._relation_from_catalog(entry) for entry in entries]

    def get_columns_in_relation(self, relation: BaseRelation) -> list[S3TablesColumn]:
        # Temporary views live only in the Spark session: Spark knows them, the catalog not.
        if not relation.schema or not relation.include_policy.schema:
            return super().get_columns_in_relation(relation)
        columns = self.iceberg.find_columns(relation.schema, relation.identifier)
        return [
            S3TablesColumn(
                table_database=None,
                table_schema=relation.schema,
                table_name=relation.identifier,
                table_type=relation.type,
                column_index=index,
                column=column.name,
                dtype=column.data_type,
            )
            for index, column in enumerate(columns)
        ]

    # --- source freshness ---

    def calculate_freshness_from_metadata_batch(
        self,
        sources: list[BaseRelation],
        macro_resolver: Any = None,
    ) -> tuple[list[AdapterResponse | None], dict[BaseRelation, FreshnessResponse]]:
        """`dbt source freshness` without `loaded_at_field`: a source's last load is its
        Iceberg table's current snapshot time (commits that change only metadata, such as
        properties or docs, do not count). A table without a snapshot is infinitely old."""
        snapshotted_at = datetime.now(timezone.utc)
        responses: dict[BaseRelation, FreshnessResponse] = {}
        for source in sources:
            try:
                last_modified = self.iceberg.last_modified(
                    str(source.schema), str(source.identifier)
                )
            except (NoSuchTableError, NoSuchNamespaceError):
                raise DbtRuntimeError(
                    f"Source table {source.schema}.{source.identifier} does not exist in "
                    f"catalog `{self.iceberg.config.name}`: metadata-based freshness reads its "
                    "last snapshot. Fix the source's schema or identifier, or set "
                    "`loaded_at_field`"
                ) from None
            responses[source] = self._create_freshness_response(last_modified, snapshotted_at)
        return [AdapterResponse(_message="OK (Iceberg snapshot metadata)")], responses

    # --- contracts ---

    @available
    def contract_select_sql(self, model: Any, sql: str) -> str:
        """The model's query in its contract's column order, `not_null` columns checked."""
        columns = model["columns"]
        names = [str(c.get("name", key)) for key, c in columns.items()]
        constraints = model.get("constraints") or []
        # dbt's own warning for each constraint this adapter does not enforce.
        for column in columns.values():
            for constraint in column.get("constraints") or []:
                self.process_parsed_constraint(
                    ColumnLevelConstraint.from_dict(constraint), lambda _: None
                )
        for constraint in constraints:
            self.process_parsed_constraint(
                ModelLevelConstraint.from_dict(constraint), lambda _: None
            )
        not_null = not_null_columns(columns, constraints)
        return contract_select_sql(model["name"], sql, names, not_null)

    @available.parse_none
    def enforce_not_null(self, relation: BaseRelation, model: Any) -> None:
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

    @available.parse_list
    def relations_matching(
        self, schema_pattern: str, table_pattern: str, exclude: str = ""
    ) -> list[BaseRelation]:
        """Relations whose schema and name match SQL ILIKE patterns (name not matching
        `exclude`), from the catalog: dbt_utils' get_relations_by_pattern / _by_prefix."""
        relations = []
        for namespace in self.iceberg.list_namespaces():
            if not ilike(namespace, schema_pattern):
                continue
            for entry in self.iceberg.list_relations(namespace):
                if ilike(entry.name, table_pattern) and not ilike(entry.name, exclude or ""):
                    relations.append(self._relation_from_catalog(entry))
        return relations

    @available
    def string_literal(self, value: Any) -> str:
        """A Spark SQL string literal, for the macros (backslashes and quotes escaped)."""
        return sql_string(None if value is None else str(value))

    @available
    def listagg_sql(
        self,
        measure: str,
        delimiter_text: str,
        order_by_clause: str | None = None,
        limit_num: int | None = None,
    ) -> str:
        return listagg_sql(measure, delimiter_text, order_by_clause, limit_num)

    # --- dbt docs catalog ---

    def _catalog_rows(self, details: RelationDetails) -> Iterable[dict[str, Any]]:
        flat_stats: dict[str, Any] = {}
        for item in stats_items(details.stats).values():
            for field_name in ("label", "value", "description", "include"):
                flat_stats[f"stats:{item.id}:{field_name}"] = getattr(item, field_name)
        entry = details.relation
        for index, column in enumerate(details.columns, start=1):
            yield {
                "table_database": None,
                "table_schema": entry.namespace,
                "table_name": entry.name,
                "table_type": entry.kind,
                "table_comment": details.comment,
                "table_owner": None,
                "column_name": column.name,
                "column_index": index,
                "column_type": column.data_type,
                "column_comment": column.comment,
                **flat_stats,
            }

    def _get_one_catalog(
        self,
        information_schema: InformationSchema,
        schemas: set[str],
        used_schemas: frozenset[tuple[str, str]],
    ) -> agate.Table:
        import agate

        rows: list[dict[str, Any]] = []
        for schema in schemas:
            for entry in self.iceberg.list_relations(schema):
                rows.extend(self._catalog_rows(self.iceberg.details(entry)))
        return agate.Table.from_object(rows, column_types=DEFAULT_TYPE_TESTER)

    def get_catalog_for_single_relation(self, relation: BaseRelation) -> CatalogTable | None:
        entries = {e.name: e for e in self.iceberg.list_relations(relation.schema)}
        entry = entries.get(relation.identifier)
        if entry is None:
            return None
        details = self.iceberg.details(entry)
        return CatalogTable(
            metadata=TableMetadata(
                type=RelationType.View.value if entry.kind == "view" else "table",
                schema=entry.namespace,
                name=entry.name,
                comment=details.comment,
            ),
            columns={
                c.name: ColumnMetadata(type=c.data_type, index=i, name=c.name, comment=c.comment)
                for i, c in enumerate(details.columns, start=1)
            },
            stats=stats_items(details.stats),
        )

    # --- incremental ---

    def query_schema(self, sql: str) -> StructType:
        """Output schema of a query; the engine analyses it without running it."""
        return self.connections.get_thread_connection().handle.query_schema(sql)

    @available
    def query_columns(self, sql: str) -> list[str]:
        return self.query_schema(sql).names

    @available
    def typed_sql(self, model_name: str, sql: str) -> str:
        """The query with every column Spark types as `void` (a bare NULL) cast to string,
        since Iceberg cannot store void; the query itself when there is none."""
        fields = self.query_schema(sql).fields
        typed = [without_void(f.dataType) for f in fields]
        untyped = [f.name for f, t in zip(fields, typed, strict=True) if t != f.dataType]
        if not untyped:
            return sql
        logger.warning(
            f"{model_name}: column(s) {', '.join(untyped)} hold only NULL and have no type; "
            "stored as string. Cast them (cast(null as <type>)) to choose a type"
        )
        columns = ", ".join(
            f"CAST({quote(f.name)} AS {type_sql(t)}) AS {quote(f.name)}"
            if t != f.dataType
            else quote(f.name)
            for f, t in zip(fields, typed, strict=True)
        )
        return f"SELECT {columns} FROM (\n{sql}\n) AS dbt_typed_rows"

    @staticmethod
    def _schema_diff(
        model_name: str, table: Schema, model: StructType, table_only: list[str] | None = None
    ) -> SchemaDiff:
        try:
            return schema_diff(table, model, table_only=table_only)
        except UnsupportedTypeError as error:
            raise ModelConfigError(
                model_name, "columns", str(error), "cast the column to a supported type"
            ) from error

    def _model_diff(
        self, settings: IncrementalConfig, before: TableState, source_schema: StructType
    ) -> SchemaDiff:
        """How the model's output differs from the table."""
        # scd2's validity columns belong to the table, not to the model's output.
        own_columns = (
            [settings.valid_from, settings.valid_to] if settings.strategy == "scd2" else []
        )
        return self._schema_diff(settings.model_name, before.schema, source_schema, own_columns)

    def _plan_schema(
        self,
        settings: IncrementalConfig,
        config: dict[str, Any],
        before: TableState,
        source_schema: StructType,
    ) -> SchemaDiff:
        """What `on_schema_change` asks of the table (computed; nothing is committed)."""
        diff = self._model_diff(settings, before, source_schema)
        mode = config.get("on_schema_change") or "ignore"
        if diff.removed and mode not in ("ignore", "fail"):
            logger.warning(
                f"{settings.model_name}: column(s) {', '.join(diff.removed)} no longer returned "
                "by the model are kept (this adapter never drops a column) and get NULL in new rows"
            )
        return plan_evolution(settings.model_name, mode, diff)

    def _evolve_schema(self, model_name: str, target: BaseRelation, plan: SchemaDiff) -> None:
        """Commit the planned schema changes with PyIceberg, before the data commit."""
        if plan.empty:
            return
        widened = [(c.path, c.new) for c in plan.changed]
        self.iceberg.evolve_schema(target.schema, target.identifier, plan.added, widened)
        for line in plan.describe():
            logger.info(f"{model_name}: schema evolved: {line}")

    @available
    def validate_incremental(
        self, model_name: str, config: dict[str, Any], source_sql: str
    ) -> None:
        """Raise, naming the model and key, if the incremental config cannot work."""
        settings = incremental_config(model_name, config)
        columns = self.query_columns(source_sql)
        check_against_columns(settings, columns)
        write_mode_properties(model_name, config.get("write_mode"))
        mode = check_mode_for_strategy(
            model_name, config.get("on_schema_change"), settings.strategy
        )
        if mode == "full_incremental_refresh":
            plan = chunk_plan(model_name, config)
            check_columns_exist(
                model_name, f"{CHUNK_CONFIG_KEY}.event_time", [plan.event_time], columns
            )

    @available
    def incremental_action(
        self, model_name: str, config: dict[str, Any], target: BaseRelation, source_sql: str
    ) -> str:
        """What this run on an existing table does: `incremental` (the strategy's one
        statement); `full_refresh`, `recreate_empty` or `full_incremental_refresh` when
        `on_schema_change` replaces the table for the model's new columns or types; or
        `resume_full_incremental_refresh` to finish a chunked rebuild a run left part-way."""
        state = self.iceberg.table_state(target.schema, target.identifier)
        if REBUILD_PLAN in state.properties:
            return "resume_full_incremental_refresh"
        settings = incremental_config(model_name, config)
        mode = check_mode_for_strategy(
            model_name, config.get("on_schema_change"), settings.strategy
        )
        if mode not in REPLACING_MODES:
            return "incremental"
        diff = self._model_diff(settings, state, self.query_schema(source_sql))
        if not replaces_table(mode, diff):
            return "incremental"
        logger.info(
            f"{model_name}: on_schema_change `{mode}` replaces the table: "
            + "; ".join(diff.describe())
        )
        return mode

    @available
    def replacement_sql(
        self,
        model_name: str,
        config: dict[str, Any],
        target: BaseRelation,
        source_sql: str,
        empty: bool = False,
    ) -> str:
        """The query a replacing `on_schema_change` mode rebuilds the table from: the
        model's rows (none if `empty`) plus, NULL-filled, every column the model no longer
        returns, so that no mode ever drops a column."""
        build_sql = self.initial_build_sql(model_name, config, source_sql)
        state = self.iceberg.table_state(target.schema, target.identifier)
        kept = self._schema_diff(model_name, state.schema, self.query_schema(build_sql)).removed
        if kept:
            logger.warning(
                f"{model_name}: column(s) {', '.join(kept)} no longer returned by the model "
                "are kept in the new table (this adapter never drops a column), NULL-filled"
            )
        types = {c: spark_type_name(state.schema.find_field(c).field_type) for c in kept}
        nulls = "".join(f", CAST(NULL AS {types[c]}) AS {quote(c)}" for c in kept)
        where = " WHERE false" if empty else ""
        return f"SELECT *{nulls} FROM (\n{build_sql}\n) AS dbt_model_rows{where}"

    @available
    def rebuild_properties(self, model_name: str, config: dict[str, Any]) -> dict[str, str]:
        """The property that marks a chunked rebuild in progress, with its plan."""
        return {REBUILD_PLAN: chunk_plan(model_name, config).to_property()}

    @available
    def refresh_in_chunks(
        self, model_name: str, config: dict[str, Any], target: BaseRelation, full_sql: str
    ) -> IncrementalResponse:
        """Write the model's whole history into the (replaced) table, one INSERT per chunk,
        after the chunks the table already holds; then clear the rebuild marker."""
        state = self.iceberg.table_state(target.schema, target.identifier)
        plan = ChunkPlan.from_property(state.properties[REBUILD_PLAN])
        table_columns = [c.name for c in state.columns]
        table_event_time = next(
            (c for c in table_columns if c.lower() == plan.event_time.lower()), plan.event_time
        )
        count, last_chunk = self.connections.execute(
            progress_sql(str(target), table_event_time, plan), fetch=True
        )[1][0]
        progress = Progress.from_table(int(count), last_chunk, plan.chunk)
        if progress.started:
            logger.info(
                f"{model_name}: resuming full_incremental_refresh at "
                f"{progress.resume_from or 'the rows with an event time'} "
                f"({count} rows already committed)"
            )
        starts = self.connections.execute(chunk_starts_sql(full_sql, plan, progress), fetch=True)[1]
        windows = chunk_windows([row[0] for row in starts], progress)
        source_columns = self.query_columns(self.initial_build_sql(model_name, config, full_sql))
        inserted = 0
        for number, window in enumerate(windows, start=1):
            chunk = chunk_sql(full_sql, plan.event_time, window)
            write = IncrementalWrite(
                target=str(target),
                source_sql=self.initial_build_sql(model_name, config, chunk),
                target_columns=table_columns,
                source_columns=source_columns,
            )
            started = time.monotonic()
            try:
                self.connections.execute(append_sql(write))
            except Exception as error:
                raise DbtRuntimeError(
                    f"{model_name}: full_incremental_refresh stopped in chunk {number}/"
                    f"{len(windows)} {window.describe()}; the chunks before it are committed "
                    f"and the next run resumes with this one. Cause: {error}"
                ) from error
            summary = self.iceberg.table_state(target.schema, target.identifier).summary
            rows = int(summary.get("added-records", 0))
            inserted += rows
            logger.info(
                f"{model_name}: chunk {number}/{len(windows)} {window.describe()}: "
                f"{rows} rows committed in {time.monotonic() - started:.1f}s"
            )
        self.record_model_state(model_name, config, target, full_sql)
        return IncrementalResponse(
            _message=f"FULL INCREMENTAL REFRESH {inserted} inserted in {len(windows)} chunks",
            code="FULL_INCREMENTAL_REFRESH",
            rows_affected=inserted,
            rows_inserted=inserted,
            rows_updated=0,
            rows_deleted=0,
            snapshot_id=None,
        )

    @available
    def start_full_model_render(self, relation: BaseRelation) -> None:
        """Until `end_full_model_render`, is_incremental() is false for this model, so
        `render(model.raw_code)` yields its whole-history query."""
        with self._full_render_lock:
            self._full_renders.add(str(relation))

    @available
    def end_full_model_render(self, relation: BaseRelation) -> None:
        with self._full_render_lock:
            self._full_renders.discard(str(relation))

    @available
    def renders_full_model(self, relation: BaseRelation) -> bool:
        with self._full_render_lock:
            return str(relation) in self._full_renders

    @available
    def run_incremental(
        self,
        model_name: str,
        config: dict[str, Any],
        target: BaseRelation,
        source_sql: str,
        batch_start: str | None = None,
        batch_end: str | None = None,
    ) -> IncrementalResponse:
        """Check the model's config, then write this run as one statement (one commit)
        and report the exact row counts of that commit."""
        settings = incremental_config(model_name, config)
        source_schema = self.query_schema(source_sql)
        source_columns = source_schema.names
        check_against_columns(settings, source_columns)
        before = self.iceberg.table_state(target.schema, target.identifier)
        plan = self._plan_schema(settings, config, before, source_schema)
        # The table's columns after evolution: computed, not re-read.
        target_columns = [c.name for c in before.columns]
        target_columns += [path[0] for path, _ in plan.added if len(path) == 1]
        check_columns_exist(model_name, "unique_key", settings.unique_key, target_columns)
        for change in compare_state(settings, before.properties):
            logger.warning(f"{model_name}: {change} since the last run")
        # Every check has passed: only now does anything reach the catalog.
        self._evolve_schema(model_name, target, plan)
        self._apply_write_mode(model_name, config, target, before.properties)
        write = IncrementalWrite(
            target=str(target),
            source_sql=source_sql,
            target_columns=target_columns,
            source_columns=source_columns,
            unique_key=settings.unique_key,
            predicates=settings.predicates,
            update_columns=merge_update_columns(settings, target_columns),
            watermark_column=settings.watermark_column,
            check_columns=settings.check_columns,
            valid_from=settings.valid_from,
            valid_to=settings.valid_to,
            event_time=settings.event_time,
            window_start=batch_start,
            window_end=batch_end,
        )
        if settings.strategy not in SKIPPED_WHEN_EMPTY:
            return self._commit(settings, config, target, write, before, source_sql)
        with self._cached_source(source_sql) as rows:
            if self._is_empty(rows):
                # Iceberg would commit an empty snapshot: an hourly job would pile up
                # thousands a year. The run is a no-op; the table stays at its snapshot.
                logger.info(f"{model_name}: the model returned no rows; nothing committed")
                self._record_state(settings, config, target, source_sql, before.properties)
                return IncrementalResponse(
                    _message=f"{settings.strategy.upper()} 0 inserted, 0 updated, 0 deleted "
                    "(no rows, nothing committed)",
                    code=settings.strategy.upper(),
                    rows_affected=0,
                    rows_inserted=0,
                    rows_updated=0,
                    rows_deleted=0,
                    snapshot_id=None,
                )
            cached = replace(write, source_sql=rows)
            return self._commit(settings, config, target, cached, before, source_sql)

    @contextmanager
    def _cached_source(self, source_sql: str) -> Iterator[str]:
        """The model's rows computed once into Spark's cache (memory, spilling to disk),
        as a query over the cached view: emptiness is then known without evaluating the
        model twice. Dropping the view drops its cache too."""
        view = quote(f"dbt_source_{uuid.uuid4().hex}")
        self.connections.execute(f"CACHE TABLE {view} AS {source_sql}")
        try:
            yield f"SELECT * FROM {view}"
        finally:
            self.connections.execute(f"DROP VIEW IF EXISTS {view}")

    def _is_empty(self, rows_sql: str) -> bool:
        _, rows = self.connections.execute(f"SELECT 1 FROM ({rows_sql}) LIMIT 1", fetch=True)
        return len(rows) == 0

    def _commit(
        self,
        settings: IncrementalConfig,
        config: dict[str, Any],
        target: BaseRelation,
        write: IncrementalWrite,
        before: TableState,
        model_sql: str,
    ) -> IncrementalResponse:
        """The strategy's one statement (one commit) and the exact counts of that commit."""
        model_name = settings.model_name
        handle = self.connections.get_thread_connection().handle
        sql = STRATEGY_BUILDERS[settings.strategy](write)
        rewrites_table = False
        if settings.strategy in FALLBACK_BUILDERS:
            use_merge, reason = resolve_use_merge(
                model_name, config.get("use_merge"), handle.has_iceberg_extensions()
            )
            path = "MERGE INTO" if use_merge else "INSERT OVERWRITE of the whole table"
            logger.info(f"{model_name}: {settings.strategy} writes with {path} ({reason})")
            if not use_merge:
                sql = FALLBACK_BUILDERS[settings.strategy](write)
                rewrites_table = True
        session_settings = (
            {"spark.sql.sources.partitionOverwriteMode": "dynamic"}
            if settings.strategy == "insert_overwrite"
            else {}
        )
        with handle.settings(session_settings):
            self.connections.execute(sql)
        after = self.iceberg.table_state(target.schema, target.identifier)
        committed = after.snapshot_id != before.snapshot_id
        # A whole-table rewrite removes and re-adds every row: no logical counts.
        counts = (
            CommitCounts(None, None, None)
            if rewrites_table
            else commit_counts(settings.strategy, after.summary if committed else None)
        )
        self._record_state(settings, config, target, model_sql, after.properties)
        logger.debug(f"{model_name}: {settings.strategy} committed {after.snapshot_id}")
        return IncrementalResponse(
            _message=f"{settings.strategy.upper()} {counts.inserted} inserted, "
            f"{counts.updated} updated, {counts.deleted} deleted",
            code=settings.strategy.upper(),
            rows_affected=sum(n or 0 for n in (counts.inserted, counts.updated, counts.deleted)),
            rows_inserted=counts.inserted,
            rows_updated=counts.updated,
            rows_deleted=counts.deleted,
            snapshot_id=after.snapshot_id if committed else None,
        )

    def _apply_write_mode(
        self,
        model_name: str,
        config: dict[str, Any],
        target: BaseRelation,
        properties: dict[str, str],
    ) -> None:
        """Bring the table's row-level write properties in line with `write_mode` (and the
        catalog's table defaults the model does not set itself); a change is one metadata
        commit, made only when a setting changed."""
        own = {str(k) for k in (config.get("tblproperties") or {})}
        wanted = {k: v for k, v in self.iceberg.config.table_defaults().items() if k not in own}
        wanted.update(write_mode_properties(model_name, config.get("write_mode")))
        if self._set_properties(target, properties, wanted):
            logger.info(f"{model_name}: table write properties set: {wanted}")

    def _set_properties(
        self,
        target: BaseRelation,
        current: dict[str, str],
        wanted: dict[str, str],
        remove: tuple[str, ...] = (),
    ) -> bool:
        """Commit `wanted` table properties (and remove `remove`) unless `current` already
        is that way."""
        if all(current.get(k) == v for k, v in wanted.items()) and not (set(remove) & set(current)):
            return False
        return self.iceberg.set_properties_if_changed(
            target.schema, target.identifier, wanted, remove
        )

    @available
    def forget_model_state(self, target: BaseRelation) -> None:
        """A `table` build replaces the table but keeps its properties (Iceberg's REPLACE
        does): drop the incremental state, so a later incremental run starts afresh."""
        state = self.iceberg.table_state(target.schema, target.identifier)
        self._set_properties(target, state.properties, {}, state_keys(state.properties))

    @available
    def record_model_state(
        self, model_name: str, config: dict[str, Any], target: BaseRelation, model_sql: str
    ) -> None:
        """State of a freshly built incremental table (see `_record_state`)."""
        state = self.iceberg.table_state(target.schema, target.identifier)
        self._record_state(
            incremental_config(model_name, config), config, target, model_sql, state.properties
        )

    def _record_state(
        self,
        settings: IncrementalConfig,
        config: dict[str, Any],
        target: BaseRelation,
        model_sql: str,
        properties: dict[str, str],
    ) -> None:
        """Keep the strategy, keys, hashes and last processed watermark on the table, for
        the next run to compare with (table properties: no data change, no snapshot)."""
        last_value = None
        if settings.watermark_column:
            rows = self.connections.execute(
                f"SELECT CAST(MAX({quote(settings.watermark_column)}) AS STRING) FROM {target}",
                fetch=True,
            )[1]
            last_value = rows[0][0]
        self._set_properties(
            target,
            properties,
            state_properties(settings, config, model_sql, last_value),
            remove=(REBUILD_PLAN,),
        )

    @available
    def last_processed_value(self, target: BaseRelation) -> str | None:
        """The greatest `watermark_column` value of the last successful run, or None."""
        if self.get_relation(None, target.schema, target.identifier) is None:  # type: ignore
            return None
        state = self.iceberg.table_state(target.schema, target.identifier)
        return state.properties.get(LAST_PROCESSED_VALUE)

    @available
    def resolved_strategy(self, model_name: str, config: dict[str, Any]) -> str:
        return incremental_config(model_name, config).strategy

    @available
    def table_properties(self, model_name: str, config: dict[str, Any]) -> dict[str, str]:
        """Table properties a new table gets: the catalog's table defaults, write-mode
        properties for incremental models, then the model's own `tblproperties` (which
        win)."""
        properties = self.iceberg.config.table_defaults()
        if config.get("materialized") == "incremental":
            properties.update(write_mode_properties(model_name, config.get("write_mode")))
        properties.update({str(k): str(v) for k, v in (config.get("tblproperties") or {}).items()})
        return properties

    @available
    def initial_build_sql(self, model_name: str, config: dict[str, Any], source_sql: str) -> str:
        """The query a new incremental table is created from (scd2 adds its history columns)."""
        settings = incremental_config(model_name, config)
        if settings.strategy != "scd2":
            return source_sql
        return (
            f"SELECT *, current_timestamp() AS {quote(settings.valid_from)}, "
            f"CAST(NULL AS TIMESTAMP) AS {quote(settings.valid_to)}"
            f" FROM (\n{source_sql}\n) AS dbt_scd2_source"
        )

    # --- Python models ---

    @available
    def python_model_sql(self, model_name: str, config: dict[str, Any], compiled_code: str) -> str:
        """Run a Python model in this connection's SparkSession and return SQL selecting
        its DataFrame (a temporary view), for the SQL materializations to write."""
        mode = config.get("on_schema_change")
        if config.get("materialized") == "incremental" and mode in WHOLE_HISTORY_MODES:
            raise ModelConfigError(
                model_name,
                "on_schema_change",
                f"`{mode}` rebuilds from the model's whole-history SQL, which a Python model "
                "does not have",
                "use `recreate_empty`, `append_new_columns` or `sync_all_columns`",
            )
        spark = self.connections.get_thread_connection().handle.session(model_name)
        frame = run_python_model(spark, model_name, compiled_code)
        view_name = f"dbt_python_{uuid.uuid4().hex}"
        frame.createOrReplaceTempView(view_name)
        return f"select * from {quote(view_name)}"

    # --- seeds ---

    @available
    def register_seed_view(self, agate_table: agate.Table) -> str:
        """Load a seed's rows into a temporary view in one bulk transfer and return the
        view's name.

        Every value travels as text and is cast in SQL, so decimals, dates and strings
        arrive exactly as written in the CSV, with no float rounding on the way. The view
        gets a generated name: a seed's own name may hold dots or spaces.
        """
        view_name = f"dbt_seed_rows_{uuid.uuid4().hex}"
        handle = self.connections.get_thread_connection().handle
        handle.create_text_view(view_name, agate_table.rows, len(agate_table.column_names))
        return view_name

    @available
    def seed_select_sql(
        self, view_name: str, columns: list[list[str]], seed_path: str, empty: bool = False
    ) -> str:
        """The seed's load query: each `[header, SQL name, type]` column cast from text, a
        value that does not fit its type failing the load."""
        seed_columns = [
            SeedColumn(name, sql_name, data_type) for name, sql_name, data_type in columns
        ]
        return seed_select_sql(view_name, seed_columns, seed_path, bool(empty))

    @available
    def drop_temp_view(self, view_name: str) -> None:
        self.connections.get_thread_connection().handle.drop_temp_view(view_name)

    def debug_query(self) -> None:
        handle = self.connections.get_thread_connection().handle
        self.execute("select 1 as id")
        import pyiceberg

        config = catalog_config_for(self.config.credentials)
        logger.info(
            f"{handle.engine_description()}, PyIceberg {pyiceberg.__version__}, catalog "
            f"`{config.name}` ({config.catalog_type}) at {config.location}"
        )
        logger.debug(f"catalog settings (secrets masked): {config.describe()}")
