"""The s3tables adapter: dbt-spark's SQL dialect, PyIceberg for every metadata read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from typing import TYPE_CHECKING, Any

from dbt.adapters.base import available
from dbt.adapters.base.impl import AdapterConfig, BaseAdapter, ConstraintSupport, FreshnessResponse
from dbt.adapters.base.relation import BaseRelation, InformationSchema
from dbt.adapters.capability import Capability, CapabilityDict, CapabilitySupport, Support
from dbt.adapters.catalogs import CatalogIntegration, CatalogIntegrationConfig, CatalogV2
from dbt.adapters.contracts.connection import AdapterResponse, Connection
from dbt.adapters.contracts.relation import RelationType
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.column import SparkColumn
from dbt.adapters.spark.impl import SparkAdapter
from dbt.flags import get_flags
from dbt_common.behavior_flags import Behavior, BehaviorFlag, BehaviorFlagRendered
from dbt_common.clients.agate_helper import DEFAULT_TYPE_TESTER
from dbt_common.contracts.constraints import (
    ConstraintType,
)
from dbt_common.contracts.metadata import (
    CatalogTable,
)

from dbt.adapters.s3tables.catalogs import catalog_type_named
from dbt.adapters.s3tables.catalogs.catalog_set import CatalogSet
from dbt.adapters.s3tables.catalogs.ddl import CatalogDdl
from dbt.adapters.s3tables.catalogs.docs_catalog import relation_table, schema_rows
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog, iceberg_catalog_for
from dbt.adapters.s3tables.catalogs.integrations import (
    CATALOG_INTEGRATIONS,
    V2_PLATFORM,
    active_catalog_integrations,
    catalog_config_from_integration,
    check_v2_catalog,
)
from dbt.adapters.s3tables.catalogs.node_catalog import node_label, requested_catalog
from dbt.adapters.s3tables.catalogs.relations import CatalogRelation
from dbt.adapters.s3tables.catalogs.s3tables.rules import check_namespace
from dbt.adapters.s3tables.column import S3TablesColumn
from dbt.adapters.s3tables.connections import S3TablesConnectionManager
from dbt.adapters.s3tables.incremental.model_reads import ModelReads
from dbt.adapters.s3tables.incremental.run_bases import RunBases
from dbt.adapters.s3tables.incremental.table import IncrementalTable
from dbt.adapters.s3tables.incremental.upstream_changes import (
    UpstreamChanges,
)
from dbt.adapters.s3tables.incremental.warehouse import Warehouse
from dbt.adapters.s3tables.keys.config_keys import FAIL_FLAG, FAIL_FLAG_SPEC, ConfigKeyCheck
from dbt.adapters.s3tables.lifecycle.maintainer import TableMaintainer
from dbt.adapters.s3tables.lifecycle.publishing import WriteAuditPublish
from dbt.adapters.s3tables.lifecycle.resumption import graph_nodes, node_relation
from dbt.adapters.s3tables.lifecycle.unchanged_inputs import UnchangedInputs
from dbt.adapters.s3tables.lifecycle.undo_run import RunUndo
from dbt.adapters.s3tables.model_build import ModelBuild, TargetAnalyses, is_custom_strategy
from dbt.adapters.s3tables.model_config import ParsedModelConfigs
from dbt.adapters.s3tables.relation import S3TablesRelation
from dbt.adapters.s3tables.seeds.loader import SeedLoader
from dbt.adapters.s3tables.sql.cross_db import listagg_sql
from dbt.adapters.s3tables.sql.text import quote, sql_string

if TYPE_CHECKING:
    import agate

    from dbt.adapters.s3tables.engines.base import Engine

logger = AdapterLogger("s3tables")

# dbt commands whose nodes run SQL on the engine.
ENGINE_COMMANDS = frozenset({"run", "build", "seed", "snapshot", "test", "show", "clone", "retry"})


@dataclass
class S3TablesConfig(AdapterConfig):
    partition_by: list[str] | str | None = None
    tblproperties: dict[str, str] | None = None


class _RenderedFlag(BehaviorFlagRendered):
    """dbt_common's rendered behavior flag, its source named without a stack walk."""

    @staticmethod
    def _default_source() -> str:
        # dbt_common names "the module that built the flag" by walking `inspect.stack()`,
        # which reads every frame's source lines, even for a flag that names its source:
        # 0.1-0.15 s a flag, three flags for each adapter dbt builds (one per invocation).
        # That module is this one.
        return __name__


class _Behavior(Behavior):
    """dbt_common's `Behavior` of `_RenderedFlag`s: each adapter's own, so each
    invocation still says once that a flag is at its default."""

    def __init__(self, flags: list[BehaviorFlag], user_overrides: dict[str, Any]) -> None:
        self._flags = [_RenderedFlag(flag, user_overrides) for flag in flags]


class S3TablesAdapter(SparkAdapter):
    Relation = S3TablesRelation
    Column = S3TablesColumn
    ConnectionManager = S3TablesConnectionManager
    connections: S3TablesConnectionManager
    _rendered_behavior: Behavior
    AdapterSpecificConfigs = S3TablesConfig  # type: ignore[assignment]  # a class, typed as one

    CATALOG_INTEGRATIONS = CATALOG_INTEGRATIONS

    def __init__(self, config: Any, mp_context: Any) -> None:
        credentials = config.credentials
        credentials.warehouse = catalog_type_named(credentials.catalog_type).resolve_warehouse(
            credentials.warehouse, getattr(config, "project_root", None)
        )
        super().__init__(config, mp_context)
        self.config_key_check = ConfigKeyCheck()
        self.model_configs = ParsedModelConfigs(
            lambda name: is_custom_strategy(
                self.get_macro_resolver(), self.config.project_name, self.type(), name
            )
        )
        # dbt reads catalogs.yml only for build, compile, parse, run, seed, snapshot and
        # test; `docs generate`, `show`, `source freshness`, `clone`, `run-operation` and
        # `retry` must know the same catalogs.
        flags: Any = get_flags()  # type: ignore[no-untyped-call]  # dbt.flags is untyped
        self._catalogs_v2 = bool(getattr(flags, "USE_CATALOGS_V2", False))
        # Each catalogs.yml catalog's name -> its Spark catalog (its `catalog_database`).
        self._spark_catalogs: dict[str, str] = {}
        for integration in active_catalog_integrations(
            config, self._catalogs_v2, self.bridge_v2_catalog
        ):
            self.add_catalog_integration(integration)
        self._run_bases = RunBases()
        self._target_analyses = TargetAnalyses()
        self._upstream_changes = UpstreamChanges(
            self.iceberg_for,
            lambda: self.engine,
            lambda relation: self.catalogs.named(relation.database, relation=relation).name,
            self._run_bases,
        )
        self._model_reads = ModelReads(
            self._upstream_changes,
            lambda node: self.model_configs.of(node).incremental,
            self.get_relation,
            lambda: self.engine,
        )
        self._maintenance = TableMaintainer(self._warehouse, self._query_rows)
        self._audits = WriteAuditPublish(
            self._warehouse,
            self._connection_name,
            lambda: graph_nodes(self.get_macro_resolver()),
            partial(node_relation, self.Relation),
        )
        self._undo = RunUndo(
            self.catalog_database,
            lambda database: self.iceberg_for(database=database),
            self._relation_from_catalog,
            self.execute,
            self.cache_dropped,
        )

    def add_catalog_integration(
        self, catalog_integration: CatalogIntegrationConfig
    ) -> CatalogIntegration:
        """A catalog of catalogs.yml: checked now, and known to Spark and PyIceberg by its
        name (or its `catalog_database`) from the first connection on (dbt adding one read
        already changes nothing)."""
        if catalog_integration.name in self._spark_catalogs:
            known: CatalogIntegration = self.get_catalog_integration(catalog_integration.name)
            return known
        catalog = catalog_config_from_integration(
            catalog_integration,
            getattr(self.config, "project_root", None),
            properties_key=f"config.{V2_PLATFORM}" if self._catalogs_v2 else "adapter_properties",
        )
        integration = super().add_catalog_integration(catalog_integration)
        self.catalogs.declare(catalog)
        self.connections.attach(catalog)
        self._spark_catalogs[catalog_integration.name] = catalog.name
        return integration

    def bridge_v2_catalog(self, catalog: CatalogV2) -> CatalogIntegrationConfig:
        """A catalog of a v2 catalogs.yml (dbt 1.12's `use_catalogs_v2`) as an integration,
        once what dbt's bridge would pass over unread is checked."""
        check_v2_catalog(catalog)
        return super().bridge_v2_catalog(catalog)

    def _v2_table_format(self, catalog: CatalogV2) -> str:
        # Every table here is an Iceberg table: the v2 spec's `default` is Iceberg.
        return "iceberg"

    def _translate_v2_properties(self, catalog_type: str, props: dict[str, Any]) -> dict[str, Any]:
        # dbt's bridge keeps `catalog_database` among the properties as well as on the
        # integration, which reads it from there.
        return {key: value for key, value in props.items() if key != "catalog_database"}

    @property
    def catalogs(self) -> CatalogSet:
        return self.connections.catalogs

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
            # catalogs.yml v2 (dbt 1.12, `flags: {use_catalogs_v2: true}`).
            Capability.CatalogsV2: CapabilitySupport(support=Support.Full),
        }
    )

    @classmethod
    def type(cls) -> str:
        return "s3tables"

    def quote(self, identifier: str) -> str:  # type: ignore[override]  # dbt's is a classmethod
        # str(): dbt's own callers quote values that may be None (an unset database).
        return quote(str(identifier))

    def acquire_connection(self, name: str | None = None) -> Connection:
        """dbt takes its `master` connection before the first node: for commands that run
        SQL, start the engine there, so that no node's timing carries its start-up."""
        connection = super().acquire_connection(name)
        flags: Any = get_flags()  # type: ignore[no-untyped-call]  # dbt.flags is untyped
        if name == "master" and getattr(flags, "WHICH", None) in ENGINE_COMMANDS:
            _ = connection.handle  # opens the connection: starts Spark, or reaches the server
        return connection

    @property
    def iceberg(self) -> IcebergCatalog:
        """The profile's catalog."""
        return iceberg_catalog_for(self.catalogs.default)

    def iceberg_for(
        self, relation: BaseRelation | None = None, database: str | None = None
    ) -> IcebergCatalog:
        """The catalog of `relation` (or of the `database` named): its database names it."""
        if relation is not None:
            database = relation.database
        return iceberg_catalog_for(self.catalogs.named(database, relation=relation))

    @available
    def catalog_database(self, name: object) -> str | None:
        """A node's database for the catalog `name`: none for the profile's catalog."""
        if self.catalogs.is_default(name):
            return None
        return self.catalogs.named(name).name

    @available
    def node_database(self, custom_database_name: object, node: object) -> str | None:
        """generate_database_name for any node dbt names a relation for (a saved query's
        exports too): the database of the catalog it asks for, none for the profile's."""
        name = requested_catalog(node, custom_database_name)
        if self.catalogs.is_default(name):
            return None
        spark_name = self._spark_catalogs.get(str(name), name)
        return self.catalogs.named(spark_name, relation=node_label(node)).name

    @property
    def engine(self) -> Engine:
        """The engine this thread's connection runs SQL on (opened on first use)."""
        engine: Engine = self.connections.get_thread_connection().handle
        return engine

    # --- schemas (Iceberg namespaces) ---

    def list_schemas(self, database: str) -> list[str]:
        return self.iceberg_for(database=database).list_namespaces()

    def check_schema_exists(self, database: str, schema: str) -> bool:
        return self.iceberg_for(database=database).namespace_exists(schema)

    @available.parse_none
    def ensure_namespace(self, namespace: str, database: str | None = None) -> None:
        """dbt's create_schema: create the namespace unless it exists."""
        iceberg = self.iceberg_for(database=database)
        if iceberg.config.s3tables_rules:
            check_namespace(namespace)
        iceberg.create_namespace(namespace)

    @property
    def _behavior_flags(self) -> list[BehaviorFlag]:
        return [FAIL_FLAG_SPEC]

    @property  # in the Jinja context as the base's (`available` is inherited by name)
    def behavior(self) -> Behavior:
        return self._rendered_behavior

    @behavior.setter
    def behavior(self, flags: list[BehaviorFlag]) -> None:
        # dbt-adapters' setter extends `flags`, its module-level default list, in place: every
        # adapter built in one process (each dbtRunner.invoke) appended this adapter's flags
        # again, and rendering a flag walks the whole Python stack (dbt_common's
        # `_default_source`), so a process's Nth invocation paid N walks (seconds each in a
        # long-lived process: an orchestrator's, a test run's).
        overrides = getattr(self.config, "flags", {})  # none in `dbt debug` (no project)
        self._rendered_behavior = _Behavior([*flags, *self._behavior_flags], overrides)

    @available
    def check_config_keys(self, node: Any, node_config: Any, declared: Any = None) -> None:
        """Each config key of `node` nothing reads: a warning, or with the flag an error."""
        fail = getattr(self.behavior, FAIL_FLAG).no_warn
        self.config_key_check.check(node, node_config, declared, fail=fail, warn=logger.warning)

    @available.parse_none
    def drop_namespace_with_contents(self, namespace: str, database: str | None = None) -> None:
        """dbt's drop_schema: the namespace with every table (purged) and view in it."""
        self.iceberg_for(database=database).drop_namespace(namespace)

    # --- catalog DDL API (catalogs/ddl.py; the `s3tables_*` and column macros) ---

    @available
    def catalog_ddl(self, relation: BaseRelation | None = None) -> CatalogDdl:
        """DDL on the catalog of `relation` (default: the profile's catalog)."""
        iceberg = self.iceberg_for(relation)
        return CatalogDdl(iceberg, iceberg.config.s3tables_rules)

    # --- relations and columns ---

    def _relation_from_catalog(
        self, entry: CatalogRelation, database: str | None = None
    ) -> S3TablesRelation:
        kind = RelationType.View if entry.kind == "view" else RelationType.Table
        return self.Relation.create(
            database=database, schema=entry.namespace, identifier=entry.name, type=kind
        )

    @available.parse_none
    def get_relation(self, database: Any, schema: str, identifier: str) -> BaseRelation | None:
        # A relation in the profile's catalog has no database, however it is named (unset,
        # the catalog's own name, or Jinja's Undefined from a node whose database is None).
        database = self.catalog_database(database)
        relation: BaseRelation | None = BaseAdapter.get_relation(self, database, schema, identifier)
        return relation

    @available.parse_list
    def list_relations_without_caching(self, schema_relation: BaseRelation) -> list[BaseRelation]:
        entries = self.iceberg_for(schema_relation).list_relations(str(schema_relation.schema))
        database = self.catalog_database(schema_relation.database)
        relations: list[BaseRelation] = [
            self._relation_from_catalog(entry, database) for entry in entries
        ]
        return relations

    def get_columns_in_relation(self, relation: BaseRelation) -> list[SparkColumn]:
        # Temporary views live only in the Spark session: Spark knows them, the catalog not.
        if not relation.schema or not relation.include_policy.schema:
            return super().get_columns_in_relation(relation)
        columns = self.iceberg_for(relation).find_columns(
            str(relation.schema), str(relation.identifier)
        )
        database = self.catalog_database(relation.database)
        return S3TablesColumn.from_catalog(relation, database, columns)

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
            last_modified = self.iceberg_for(source).source_last_modified(
                str(source.schema), str(source.identifier)
            )
            responses[source] = self._create_freshness_response(last_modified, snapshotted_at)
        return [AdapterResponse(_message="OK (Iceberg snapshot metadata)")], responses

    # --- contracts ---

    @available.parse_list
    def relations_matching(
        self,
        schema_pattern: str,
        table_pattern: str,
        exclude: str = "",
        database: str | None = None,
    ) -> list[BaseRelation]:
        """Relations whose schema and name match SQL ILIKE patterns (name not matching
        `exclude`), from the catalog `database` names (none: the profile's): dbt_utils'
        get_relations_by_pattern / _by_prefix."""
        iceberg = self.iceberg_for(database=database)
        database = self.catalog_database(database)
        entries = iceberg.relations_matching(schema_pattern, table_pattern, exclude)
        return [self._relation_from_catalog(entry, database) for entry in entries]

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

    def _get_one_catalog(
        self,
        information_schema: InformationSchema,
        schemas: set[str],
        used_schemas: frozenset[tuple[str, str]],
    ) -> agate.Table:
        import agate

        iceberg = self.iceberg_for(database=information_schema.database)
        rows = schema_rows(iceberg, schemas, self.catalog_database(information_schema.database))
        return agate.Table.from_object(rows, column_types=DEFAULT_TYPE_TESTER)

    def get_catalog(self, relation_configs: Any, used_schemas: Any) -> Any:
        # dbt-spark allows one database; each catalog here is one, read on its own.
        return BaseAdapter.get_catalog(self, relation_configs, used_schemas)

    def get_catalog_for_single_relation(self, relation: BaseRelation) -> CatalogTable | None:
        database = self.catalog_database(relation.database)
        return relation_table(self.iceberg_for(relation), relation, database)

    # --- a model's SQL, analysed or run by the engine ---

    @available
    def query_columns(self, sql: str) -> list[str]:
        return self.engine.query_schema(sql).names

    def _warehouse(self, target: BaseRelation) -> Warehouse:
        """What a model's Python-side writes go through: the calling thread's connection
        (statements logged, errors explained) and the table's catalog."""
        return Warehouse(
            engine=self.engine,
            execute=lambda sql: self.connections.execute(sql),
            fetch=lambda sql: list(self.connections.execute(sql, fetch=True)[1].rows),
            fetch_rows=lambda sql: self.connections.add_query(sql, auto_begin=False)[1].fetchall(),
            iceberg=self.iceberg_for(target),
        )

    # --- lifecycle (lifecycle/): maintenance, write-audit-publish, run-level undo ---

    @available
    def maintenance(self) -> TableMaintainer:
        return self._maintenance

    @available
    def audits(self) -> WriteAuditPublish:
        return self._audits

    @available
    def undo(self) -> RunUndo:
        return self._undo

    @available
    def unchanged_inputs(self, model: Any, target: BaseRelation) -> UnchangedInputs:
        """`skip_when_unchanged`: whether this build of `model` into `target` is skipped."""
        return UnchangedInputs(model, target, self.engine, self.iceberg_for(target))

    def _query_rows(self, sql: str) -> list[dict[str, Any]]:
        _, result = self.execute(sql, fetch=True)
        return [dict(zip(result.column_names, row, strict=True)) for row in result.rows]

    def _connection_name(self) -> str:
        connection = self.connections.get_if_exists()
        return str(connection.name) if connection is not None and connection.name else ""

    def cleanup_connections(self) -> None:
        """dbt's invocation ends (dbt calls this when its nodes are done, however they
        ended; later calls find nothing): the audited builds still staged end unpublished,
        each said in one line, before the connections close."""
        try:
            self._audits.invocation_ended()
        finally:
            super().cleanup_connections()

    # --- incremental models (incremental/) ---

    @available
    def incremental(self, target: BaseRelation) -> IncrementalTable:
        """The incremental model's table `target`: its run, first-build rendering, state."""
        return IncrementalTable(
            target,
            self.iceberg_for(target),
            lambda: self._warehouse(target),
            self.get_relation,
            self._upstream_changes.reads_changes,
            self._run_bases,
            self._upstream_changes.records_to_publish,
        )

    @available
    def upstream_reads(self) -> ModelReads:
        """`upstream_changes()`, and the record of what a build read (model_reads.py)."""
        return self._model_reads

    # --- a node's build (model_build.py) ---

    @available
    def model_build(self, model: Any) -> ModelBuild:
        """A node's build: its target's rules, format version, properties, contract."""
        return ModelBuild(
            model,
            self.model_configs,
            self.iceberg_for,
            lambda: self.engine,
            self._warehouse,
            lambda sql: self.connections.execute(sql)[0],
            lambda constraint: self.process_parsed_constraint(constraint, lambda _: None),
            self._target_analyses,
        )

    # --- seeds (seeds/loader.py) ---

    @available
    def seeds(self) -> SeedLoader:
        return SeedLoader(self.engine.create_text_view, self.engine.drop_temp_view)

    def debug_query(self) -> None:
        engine = self.engine
        self.execute("select 1 as id")
        for level, line in self.catalogs.debug_lines(engine.engine_description()):
            (logger.info if level == "info" else logger.debug)(line)
