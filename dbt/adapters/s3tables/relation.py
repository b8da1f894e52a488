"""Relations: `schema.identifier` in the profile's catalog (Spark's default catalog), and
`catalog.schema.identifier` in a catalog of catalogs.yml (its name is the `database`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.contracts.relation import ComponentName, Policy
from dbt.adapters.spark.relation import SparkRelation
from dbt.flags import get_flags
from dbt_common.invocation import get_invocation_id

from dbt.adapters.s3tables.lifecycle.audit import LEDGER, runs_before_nodes
from dbt.adapters.s3tables.lifecycle.function_nodes import is_sql_scalar_function, refuse_function
from dbt.adapters.s3tables.sql.text import quote


def _building_function() -> bool:
    """Whether `dbt build` (the command that builds function nodes) asks a function's
    relation to build it: it asks each selected one's on its `master` connection, for the
    schemas to create, before any node runs (parsing and compiling ask too, elsewhere)."""
    flags: Any = get_flags()  # type: ignore[no-untyped-call]  # dbt.flags is untyped
    return getattr(flags, "WHICH", None) == "build" and runs_before_nodes()


@dataclass
class S3TablesIncludePolicy(Policy):
    # A relation's database is its catalog; unset (None) for the profile's own catalog,
    # Spark's default, which leaves it out of the name.
    database: bool = True
    schema: bool = True
    identifier: bool = True


@dataclass
class S3TablesQuotePolicy(Policy):
    # Backticks cost nothing in Spark SQL and make names with spaces or odd characters work.
    database: bool = False
    schema: bool = True
    identifier: bool = True


@dataclass(frozen=True, eq=False, repr=False)
class S3TablesRelation(SparkRelation):
    quote_policy: Policy = field(default_factory=lambda: S3TablesQuotePolicy())
    include_policy: Policy = field(default_factory=lambda: S3TablesIncludePolicy())
    # Every table this adapter creates or lists is an Iceberg table.
    is_iceberg: bool | None = True

    # The table's audit branch this relation reads and writes (see audit.py); None: main.
    audit_branch: str | None = None

    def __post_init__(self) -> None:
        # dbt-spark refuses any database; here a database names a catalog.
        return None

    def render(self) -> str:
        # dbt-spark refuses to render a database and a schema together.
        rendered = BaseRelation.render(self)
        if self.audit_branch:
            return f"{rendered}.{quote('branch_' + self.audit_branch)}"
        return rendered

    @classmethod
    def create_from(cls, quoting: Any, relation_config: Any, **kwargs: Any) -> S3TablesRelation:
        """A node's relation, as `ref()` resolves it: a model staged on its audit branch in
        this invocation and not published yet reads from that branch (its tests, and the
        models built from it, see the staged data). A ref resolved at run time (dbt passes
        `limit` then, never while parsing) may also take up a build an earlier invocation
        staged and did not publish (see audit.py)."""
        if is_sql_scalar_function(relation_config) and _building_function():
            # The refusal comes before anything runs (function_nodes.py says why).
            import pyspark

            raise refuse_function(relation_config, ".".join(pyspark.__version__.split(".")[:2]))
        relation = super().create_from(quoting, relation_config, **kwargs)
        unique_id = getattr(relation_config, "unique_id", None)
        if not unique_id:
            return relation
        branch = LEDGER.reading_branch(
            get_invocation_id(), unique_id, relation, relation_config, resume="limit" in kwargs
        )
        if not branch:
            return relation
        on_branch: S3TablesRelation = relation.incorporate(audit_branch=branch)  # type: ignore[no-untyped-call]  # dbt's incorporate is untyped
        return on_branch

    def _is_exactish_match(self, field: ComponentName, value: str) -> bool:
        # Spark resolves names case-insensitively, so dbt must too: a model `MODEL` whose
        # table the catalog lists as `MODEL` is the relation dbt searches as `model`
        # (otherwise the second run stops at dbt's "approximate match" error).
        return str(self.path.get_lowered_part(field)) == value.lower()

    def quoted(self, identifier: str) -> str:
        # A backtick inside a name is doubled: otherwise the rest of the name would be
        # read as SQL.
        return quote(str(identifier))
