"""One node's build as the materializations ask about it (`adapter.model_build(model)`):
the names its target's catalog refuses, a rebuild that would lower the table's format
version, the properties a new table gets, the strategy it resolved, its contract's query
and the build that declares its contract's `not_null` columns. Each check runs before
anything is written; the node's config is parsed once per invocation (model_config.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dbt.adapters.factory import get_adapter_package_names
from dbt.flags import get_flags

from dbt.adapters.s3tables.catalogs.s3tables.rules import (
    check_latest_version_pointer,
    check_target,
)
from dbt.adapters.s3tables.engines.python_models import python_model_view_sql
from dbt.adapters.s3tables.incremental.strategy_traits import macro_name
from dbt.adapters.s3tables.lifecycle.required_columns import (
    RequiredColumnsBuild,
    plan_required_columns,
)
from dbt.adapters.s3tables.sql.contracts import (
    contract_constraints,
    model_contract_sql,
    not_null_columns,
)
from dbt.adapters.s3tables.sql.types import typed_query

if TYPE_CHECKING:
    from dbt.adapters.base.relation import BaseRelation
    from dbt.adapters.contracts.connection import AdapterResponse
    from pyspark.sql.types import StructField

    from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
    from dbt.adapters.s3tables.engines.base import Engine
    from dbt.adapters.s3tables.incremental.warehouse import Warehouse
    from dbt.adapters.s3tables.model_config import ModelConfig, ParsedModelConfigs


def asks_latest_version_pointer(node: Mapping[str, Any], enabled_by_default: bool) -> bool:
    """Whether dbt 1.12 creates a latest version pointer (a view named for the model) once
    this node is built: the latest version of a versioned model, with the pointer enabled
    in its config or, unset there, by the project's flag."""
    version = node.get("version")
    if version is None or str(version) != str(node.get("latest_version")):
        return False
    pointer = (node.get("config") or {}).get("latest_version_pointer") or {}
    enabled = pointer.get("enabled") if isinstance(pointer, Mapping) else None
    return bool(enabled_by_default if enabled is None else enabled)


def is_custom_strategy(
    resolver: object, project_name: str, adapter_type: str, strategy: str
) -> bool:
    """Whether the project or a package defines `get_incremental_<strategy>_sql` (dbt's
    custom-strategy hook); dbt's and the adapters' own macros are the built-in ones."""
    find = getattr(resolver, "find_macro_by_name", None)
    macro = find(macro_name(strategy), project_name, None) if find is not None else None
    internal = get_adapter_package_names(adapter_type)
    return macro is not None and getattr(macro, "package_name", None) not in internal


class TargetAnalyses:
    """The query a table build's `check_target_rules` analysed (its column names, for S3
    Tables' rules), by node, until that build's `typed_sql` of the same query on the same
    connection takes it: the two asked Spark for the same columns one statement apart.
    Each build's check forgets what an earlier build of the node kept, and a later
    connection (another node run) never takes it."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[object, str, list[StructField]]] = {}
        self._lock = threading.Lock()

    def keep(self, node_id: str, engine: object, sql: str, fields: list[StructField]) -> None:
        with self._lock:
            self._kept[node_id] = (engine, sql, fields)

    def forget(self, node_id: str) -> None:
        with self._lock:
            self._kept.pop(node_id, None)

    def take(self, node_id: str, engine: object, sql: str) -> list[StructField] | None:
        with self._lock:
            kept = self._kept.pop(node_id, None)
        if kept is None or kept[0] is not engine or kept[1] != sql:
            return None
        return kept[2]


@dataclass(frozen=True)
class ModelBuild:
    """The build of `node` (a model, seed or snapshot as dbt hands it to the macros)."""

    node: Mapping[str, Any]
    configs: ParsedModelConfigs
    iceberg_for: Callable[..., IcebergCatalog]
    engine: Callable[[], Engine]
    warehouse: Callable[[BaseRelation], Warehouse]
    execute: Callable[[str], AdapterResponse]
    # dbt's warning for a constraint this adapter does not enforce.
    warn_constraint: Callable[[Any], object]
    # By node: the query `check_target_rules` analysed on a connection, for the node's
    # `typed_sql` of the same query on that connection (over a server each analysis is a
    # round trip); see `TargetAnalyses`.
    analyses: TargetAnalyses

    @property
    def name(self) -> str:
        return str(self.node["name"])

    @property
    def config(self) -> ModelConfig:
        return self.configs.of(self.node)

    def check_target_rules(
        self,
        relation: BaseRelation,
        materialized: str,
        sql: str | None = None,
        columns: list[str] | None = None,
    ) -> None:
        """What the target's catalog would refuse, refused before any call (the columns are
        `columns`, or the output of `sql`, which Spark analyses without running it), and the
        view dbt 1.12 would create after it (a latest version pointer)."""
        # A build starts here: nothing an earlier build of the node analysed is used.
        self.analyses.forget(self._node_id)
        flags: Any = get_flags()  # type: ignore[no-untyped-call]  # dbt.flags is untyped
        if materialized in ("table", "incremental") and asks_latest_version_pointer(
            # As dbt 1.12's run task reads the flag.
            self.node,
            bool(getattr(flags, "latest_version_pointer_enabled_by_default", False)),
        ):
            check_latest_version_pointer(
                self.name, str(self.node.get("version")), self.iceberg_for(relation).config
            )
        check_target(
            self.name,
            self.iceberg_for(relation).config,
            str(relation.schema),
            str(relation.identifier),
            materialized,
            lambda: list(columns or []) + ([f.name for f in self._analysed(sql)] if sql else []),
        )

    def check_format_version(self, relation: BaseRelation) -> None:
        """A rebuild of the existing table `relation` at a lower Iceberg format version
        than it has, refused before anything is written."""
        iceberg = self.iceberg_for(relation)
        namespace, name = str(relation.schema), str(relation.identifier)
        error = self.config.lowered_format_version(
            iceberg.config.table_defaults(),
            f"{namespace}.{name}",
            lambda: iceberg.table_state(namespace, name).format_version,
        )
        if error is not None:
            raise error

    def clones_by_copy(self, target: BaseRelation | None = None) -> bool:
        """`dbt clone` copies tables into a catalog that refuses views (the S3 Tables
        rules); it makes views selecting from the state relations everywhere else."""
        return self.iceberg_for(target).config.s3tables_rules

    def typed_sql(self, sql: str) -> str:
        """The query with every column Spark types as `void` (a bare NULL) cast to string,
        since Iceberg cannot store void; the query itself when there is none."""
        fields = self.analyses.take(self._node_id, self.engine(), sql)
        if fields is None:
            fields = list(self.engine().query_schema(sql).fields)
        return typed_query(self.name, sql, fields)

    @property
    def _node_id(self) -> str:
        return str(self.node.get("unique_id") or self.name)

    def _analysed(self, sql: str) -> list[StructField]:
        """The output columns of `sql`, analysed now and kept for this build's `typed_sql`."""
        fields = list(self.engine().query_schema(sql).fields)
        self.analyses.keep(self._node_id, self.engine(), sql, fields)
        return fields

    def python_model_sql(self, compiled_code: str) -> str:
        """Run a Python model in this connection's SparkSession; SQL selecting its rows."""
        return python_model_view_sql(self.engine().session(self.name), self.name, compiled_code)

    def table_properties(self, database: str | None = None) -> dict[str, str]:
        """Table properties a new table in catalog `database` gets (see
        ModelConfig.table_properties)."""
        defaults = self.iceberg_for(database=database).config.table_defaults()
        return self.config.table_properties(defaults)

    def resolved_strategy(self) -> str | None:
        """The incremental strategy the model runs (None: not incremental)."""
        incremental = self.config.incremental
        return incremental.strategy.name if incremental else None

    def contract_sql(self, sql: str) -> str:
        """The model's query in its contract's column order, `not_null` columns checked;
        dbt's own warning for each constraint this adapter does not enforce."""
        for constraint in contract_constraints(self.node):
            self.warn_constraint(constraint)
        return model_contract_sql(self.node, sql)

    def required_columns_build(
        self,
        target: BaseRelation,
        sql: str,
        properties: dict[str, str],
        partition_by: Any,
        table_exists: bool,
        audited: bool,
    ) -> RequiredColumnsBuild | None:
        """The build whose enforced contract's `not_null` columns are declared when its
        table is created (format v3 on the embedded catalog), checked before anything is
        written; None when they are made required after the build
        (lifecycle/required_columns.py)."""
        if not (self.node.get("config") or {}).get("contract", {}).get("enforced"):
            return None
        return plan_required_columns(
            model_name=self.name,
            target=target,
            warehouse=self.warehouse(target),
            execute=self.execute,
            not_null=not_null_columns(self.node["columns"], self.node.get("constraints") or []),
            sql=sql,
            properties=properties,
            partition_by=partition_by,
            table_exists=table_exists,
            audited=audited,
        )
