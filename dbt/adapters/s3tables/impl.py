"""The s3tables adapter: dbt-spark's SQL dialect, PyIceberg for every metadata read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from dbt.adapters.base import available
from dbt.adapters.base.impl import AdapterConfig, BaseAdapter, ConstraintSupport, FreshnessResponse
from dbt.adapters.base.relation import BaseRelation, InformationSchema
from dbt.adapters.capability import Capability, CapabilityDict, CapabilitySupport, Support
from dbt.adapters.catalogs import CatalogIntegration, CatalogIntegrationConfig
from dbt.adapters.contracts.connection import AdapterResponse, Connection
from dbt.adapters.contracts.relation import RelationType
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.column import SparkColumn
from dbt.adapters.spark.impl import SparkAdapter
from dbt.flags import get_flags
from dbt_common.behavior_flags import Behavior, BehaviorFlag
from dbt_common.clients.agate_helper import DEFAULT_TYPE_TESTER
from dbt_common.contracts.constraints import (
    ConstraintType,
)
from dbt_common.contracts.metadata import (
    CatalogTable,
)
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.s3tables.catalogs import catalog_type_named
from dbt.adapters.s3tables.catalogs.catalog_set import CatalogSet
from dbt.adapters.s3tables.catalogs.ddl import CatalogDdl
from dbt.adapters.s3tables.catalogs.docs_catalog import relation_table, schema_rows
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog, iceberg_catalog_for
from dbt.adapters.s3tables.catalogs.integrations import (
    CATALOG_INTEGRATIONS,
    active_catalog_integrations,
    catalog_config_from_integration,
)
from dbt.adapters.s3tables.catalogs.node_catalog import node_label, requested_catalog
from dbt.adapters.s3tables.catalogs.relations import CatalogRelation
from dbt.adapters.s3tables.catalogs.s3tables.rules import check_namespace, check_target
from dbt.adapters.s3tables.column import S3TablesColumn
from dbt.adapters.s3tables.connections import S3TablesConnectionManager
from dbt.adapters.s3tables.engines.python_models import python_model_view_sql
from dbt.adapters.s3tables.incremental.commit_counts import with_upstream_reads
from dbt.adapters.s3tables.incremental.table import IncrementalTable
from dbt.adapters.s3tables.incremental.upstream_changes import (
    Reader,
    UpstreamChanges,
    unit_test_rows,
)
from dbt.adapters.s3tables.incremental.upstream_reads import check_key_argument
from dbt.adapters.s3tables.incremental.warehouse import Warehouse
from dbt.adapters.s3tables.keys.config_keys import FAIL_FLAG, FAIL_FLAG_SPEC, ConfigKeyCheck
from dbt.adapters.s3tables.lifecycle.maintainer import TableMaintainer
from dbt.adapters.s3tables.lifecycle.publishing import WriteAuditPublish
from dbt.adapters.s3tables.lifecycle.required_columns import (
    RequiredColumnsBuild,
    plan_required_columns,
)
from dbt.adapters.s3tables.lifecycle.undo_run import RunUndo
from dbt.adapters.s3tables.model_config import ModelConfig, ParsedModelConfigs
from dbt.adapters.s3tables.relation import S3TablesRelation
from dbt.adapters.s3tables.seeds.loader import SeedLoader
from dbt.adapters.s3tables.sql.contracts import (
    contract_constraints,
    model_contract_sql,
    not_null_columns,
)
from dbt.adapters.s3tables.sql.cross_db import listagg_sql
from dbt.adapters.s3tables.sql.text import quote, sql_string
from dbt.adapters.s3tables.sql.types import typed_query

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
        self.model_configs = ParsedModelConfigs()
        # dbt 1.11 reads catalogs.yml only for build, compile, parse, run, seed, snapshot
        # and test; `docs generate`, `show`, `source freshness`, `clone`, `run-operation`
        # and `retry` must know the same catalogs.
        for integration in active_catalog_integrations(config):
            self.add_catalog_integration(integration)
        self._upstream_changes = UpstreamChanges(
            self.iceberg_for,
            lambda: self.engine,
            lambda relation: self.catalogs.named(relation.database, relation=relation).name,
        )
        self._maintenance = TableMaintainer(self._warehouse, self._query_rows)
        self._audits = WriteAuditPublish(
            self._warehouse, self._connection_name, self._graph_nodes, self._node_relation
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
        name from the first connection on (dbt adding one read already changes nothing)."""
        if any(c.name == catalog_integration.name for c in self.catalogs.declared):
            known: CatalogIntegration = self.get_catalog_integration(catalog_integration.name)
            return known
        catalog = catalog_config_from_integration(
            catalog_integration, getattr(self.config, "project_root", None)
        )
        integration = super().add_catalog_integration(catalog_integration)
        self.catalogs.declare(catalog)
        self.connections.attach(catalog)
        return integration

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
        return self.catalogs.named(name, relation=node_label(node)).name

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
        self._rendered_behavior = Behavior([*flags, *self._behavior_flags], overrides)

    @available
    def check_config_keys(self, node: Any, node_config: Any, declared: Any = None) -> None:
        """Each config key of `node` nothing reads: a warning, or with the flag an error."""
        fail = getattr(self.behavior, FAIL_FLAG).no_warn
        self.config_key_check.check(node, node_config, declared, fail=fail, warn=logger.warning)

    @available
    def parse_model_config(self, model: Any) -> ModelConfig:
        """The model's config, every key this adapter reads checked once, before its
        materialization writes anything (errors name the model, the key and the fix)."""
        return self.model_configs.of(model)

    @available
    def check_target_rules(
        self,
        model_name: str,
        relation: BaseRelation,
        materialized: str,
        sql: str | None = None,
        columns: list[str] | None = None,
    ) -> None:
        """What the target's catalog would refuse, refused before any call (the columns are
        `columns`, or the output of `sql`, which Spark analyses without running it)."""
        check_target(
            model_name,
            self.iceberg_for(relation).config,
            str(relation.schema),
            str(relation.identifier),
            materialized,
            lambda: list(columns or []) + (self.query_columns(sql) if sql else []),
        )

    @available
    def check_format_version(self, model_config: ModelConfig, relation: BaseRelation) -> None:
        """A rebuild of the existing table `relation` at a lower Iceberg format version
        than it has, refused before anything is written."""
        iceberg = self.iceberg_for(relation)
        namespace, name = str(relation.schema), str(relation.identifier)
        error = model_config.lowered_format_version(
            iceberg.config.table_defaults(),
            f"{namespace}.{name}",
            lambda: iceberg.table_state(namespace, name).format_version,
        )
        if error is not None:
            raise error

    @available
    def clones_by_copy(self, target: BaseRelation | None = None) -> bool:
        """`dbt clone` copies tables into a catalog that refuses views (the S3 Tables
        rules); it makes views selecting from the state relations everywhere else."""
        return self.iceberg_for(target).config.s3tables_rules

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

    @available
    def contract_select_sql(self, model: Any, sql: str) -> str:
        """The model's query in its contract's column order, `not_null` columns checked;
        dbt's own warning for each constraint this adapter does not enforce."""
        for constraint in contract_constraints(model):
            self.process_parsed_constraint(constraint, lambda _: None)
        return model_contract_sql(model, sql)

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

    @available
    def typed_sql(self, model_name: str, sql: str) -> str:
        """The query with every column Spark types as `void` (a bare NULL) cast to string,
        since Iceberg cannot store void; the query itself when there is none."""
        return typed_query(model_name, sql, list(self.engine.query_schema(sql).fields))

    @available
    def python_model_sql(self, model_name: str, compiled_code: str) -> str:
        """Run a Python model in this connection's SparkSession; SQL selecting its rows."""
        return python_model_view_sql(self.engine.session(model_name), model_name, compiled_code)

    def _warehouse(self, target: BaseRelation) -> Warehouse:
        """What a model's Python-side writes go through: the calling thread's connection
        (statements logged, errors explained) and the table's catalog."""
        return Warehouse(
            engine=self.engine,
            execute=lambda sql: self.connections.execute(sql),
            fetch=lambda sql: list(self.connections.execute(sql, fetch=True)[1].rows),
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
    def required_columns_build(
        self,
        target: BaseRelation,
        model: Any,
        sql: str,
        properties: dict[str, str],
        partition_by: Any,
        table_exists: bool,
        audited: bool,
    ) -> RequiredColumnsBuild | None:
        """The build of `model` whose enforced contract's `not_null` columns are declared
        when its table is created (format v3 on the embedded catalog), checked before
        anything is written; None when they are made required after the build
        (lifecycle/required_columns.py)."""
        if not (model.get("config") or {}).get("contract", {}).get("enforced"):
            return None
        return plan_required_columns(
            model_name=model["name"],
            target=target,
            warehouse=self._warehouse(target),
            execute=lambda sql: self.connections.execute(sql)[0],
            not_null=not_null_columns(model["columns"], model.get("constraints") or []),
            sql=sql,
            properties=properties,
            partition_by=partition_by,
            table_exists=table_exists,
            audited=audited,
        )

    def _query_rows(self, sql: str) -> list[dict[str, Any]]:
        _, result = self.execute(sql, fetch=True)
        return [dict(zip(result.column_names, row, strict=True)) for row in result.rows]

    def _connection_name(self) -> str:
        connection = self.connections.get_if_exists()
        return str(connection.name) if connection is not None and connection.name else ""

    def _graph_nodes(self) -> Mapping[str, Mapping[str, Any]] | None:
        """The project's nodes as the macros' `graph.nodes` has them: dbt hands the adapter
        its manifest (as the macro resolver, its graph built) before a command runs nodes;
        None without one."""
        graph = getattr(self.get_macro_resolver(), "flat_graph", None)
        nodes = graph.get("nodes") if isinstance(graph, dict) else None
        return nodes if isinstance(nodes, Mapping) and nodes else None

    def _node_relation(self, node: Mapping[str, Any]) -> BaseRelation:
        """A node's table (of `graph.nodes`), on main."""
        relation: BaseRelation = self.Relation.create(
            database=node.get("database"),
            schema=node.get("schema"),
            identifier=node.get("alias") or node.get("name"),
            type=RelationType.Table,
        )
        return relation

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
        )

    @available
    def upstream_changes(
        self,
        model: Any,
        target: BaseRelation,
        upstream: Any,
        incremental: bool,
        unique_key: str | list[str] | None = None,
    ) -> str:
        """`upstream_changes(relation, unique_key=...)`: the rows of the upstream Iceberg
        table `upstream` this run of `model` reads (see incremental/upstream_changes.py)."""
        if not isinstance(upstream, S3TablesRelation):
            raise DbtRuntimeError(
                f"Model `{model['name']}`: upstream_changes() takes a relation, as ref() or "
                f"source() gives it, not `{upstream}`. Fix: pass ref('<model>') or "
                "source('<source>', '<table>')"
            )
        materialized = str((model.get("config") or {}).get("materialized") or "")
        incremental_config = (
            self.model_configs.of(model).incremental if materialized == "incremental" else None
        )
        return self._upstream_changes.read_sql(
            Reader(
                model["unique_id"],
                model["name"],
                target,
                materialized,
                incremental_config.strategy if incremental_config else None,
                incremental_config.on_schema_change if incremental_config else None,
            ),
            self.get_relation(upstream.database, upstream.schema, upstream.identifier),
            upstream,
            incremental,
            unique_key,
        )

    @available
    def upstream_changes_in_unit_test(self, upstream: Any, unique_key: object = None) -> str:
        """upstream_changes() in a dbt unit test: the rows the test gives the upstream."""
        return unit_test_rows(str(upstream), check_key_argument("unit test", upstream, unique_key))

    @available
    def tag_next_write(self) -> None:
        """The next statement on this thread's connection is the model's data write: its
        commit records what the build read of its upstreams (never a hook's commit)."""
        self.engine.tag_next_write()

    @available
    def record_upstream_reads(
        self, model: Any, target: BaseRelation, audit: Any
    ) -> list[dict[str, Any]]:
        """After a build: what it read of its upstreams, recorded as table properties too
        (bound to the snapshot it left; an audited build's, at its publish), and as its
        adapter response lists it ([]: it read none)."""
        return self._upstream_changes.record(
            model["unique_id"],
            target,
            audit.branch if audit else None,
            audit.keep_properties if audit else None,
        )

    @available
    def with_upstream_reads(
        self, response: AdapterResponse | None, reads: list[dict[str, Any]]
    ) -> AdapterResponse:
        return with_upstream_reads(response, reads)

    @available
    def resolved_strategy(self, model: Any) -> str | None:
        incremental = self.model_configs.of(model).incremental
        return incremental.strategy if incremental else None

    @available
    def table_properties(self, model: Any, database: str | None = None) -> dict[str, str]:
        """Table properties a new table in catalog `database` gets (see
        ModelConfig.table_properties)."""
        defaults = self.iceberg_for(database=database).config.table_defaults()
        return self.model_configs.of(model).table_properties(defaults)

    # --- seeds (seeds/loader.py) ---

    @available
    def seeds(self) -> SeedLoader:
        return SeedLoader(self.engine.create_text_view, self.engine.drop_temp_view)

    def debug_query(self) -> None:
        engine = self.engine
        self.execute("select 1 as id")
        for level, line in self.catalogs.debug_lines(engine.engine_description()):
            (logger.info if level == "info" else logger.debug)(line)
