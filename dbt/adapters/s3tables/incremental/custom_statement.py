"""A custom strategy's statement (dbt's custom-strategy hook): its macro
`get_incremental_<name>_sql(arg_dict)` rendered with dbt's standard `arg_dict`, over a
temporary view of the model's rows aligned to the table's columns (a column the model no
longer returns is NULL in them).

The run keeps what it can of the adapter's guarantees around the macro's SQL: schema
evolution before it, the state and read records only with its commit, the audit branch
or the run's branch (run_branch.py) as its target, so that several statements reach main
together. What it cannot keep is said in one line: on main, several statements are
several commits, and a macro that runs statements itself while rendering commits outside
the run.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from dbt.adapters.base.column import Column
from dbt.adapters.contracts.relation import RelationType
from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtInternalError, DbtRuntimeError

from dbt.adapters.s3tables.errors import cleaned_up_after
from dbt.adapters.s3tables.sql.text import quote, split_statements
from dbt.adapters.s3tables.sql.types import spark_type_name

if TYPE_CHECKING:
    from dbt.adapters.s3tables.incremental.context import RunContext
    from dbt.adapters.s3tables.incremental.statement_parts import IncrementalWrite

logger = AdapterLogger("s3tables")


@contextmanager
def custom_statements(run: RunContext, write: IncrementalWrite) -> Iterator[list[str]]:
    """The statements the custom strategy's macro renders for this run's rows, while the
    view of those rows (its `temp_relation`) exists; refused when it renders none."""
    strategy, macro, table = run.settings.strategy, run.strategy_macro, run.table
    if macro is None:
        raise DbtInternalError(f"{run.name}: strategy `{strategy.name}` has no macro to render")
    view = f"dbt_custom_source_{uuid.uuid4().hex}"
    table.warehouse.execute(
        f"CREATE OR REPLACE TEMPORARY VIEW {quote(view)} AS\n{write.aligned_select()}"
    )
    engine = table.warehouse.engine
    with cleaned_up_after(lambda: engine.drop_temp_view(view), f"Dropping the view {view}"):
        before = table.state()
        relation = table.relation
        arg_dict: dict[str, Any] = {
            "target_relation": relation,
            "temp_relation": type(relation).create(identifier=view, type=RelationType.View),
            "unique_key": list(run.settings.unique_key) or None,
            "dest_columns": [
                Column(column, spark_type_name(before.schema.find_field(column).field_type))
                for column in write.target_columns
            ],
            "incremental_predicates": list(run.settings.predicates) or None,
        }
        statements = [s for s in split_statements(str(macro(arg_dict))) if s.strip()]
        if table.state().snapshot_id != before.snapshot_id:
            logger.warning(
                f"{run.name}: the macro `{strategy.custom_macro}` committed to the table "
                "while it rendered (a statement it runs itself): that commit is not the "
                "run's statement, so a failure after it leaves it in place"
            )
        if not statements:
            raise DbtRuntimeError(
                f"Model `{run.name}`: the macro `{strategy.custom_macro}` of strategy "
                f"`{strategy.name}` rendered no SQL; nothing was written. Fix: return the "
                "statement that writes `temp_relation`'s rows into `target_relation`"
            )
        if len(statements) > 1 and table.branch is not None:
            logger.info(
                f"{run.name}: strategy `{strategy.name}` renders {len(statements)} "
                f"statements: they commit on branch {table.branch} and reach main together"
            )
        elif len(statements) > 1:
            logger.warning(
                f"{run.name}: strategy `{strategy.name}` renders {len(statements)} "
                "statements, each its own commit: a failure after the first leaves the "
                "table part-way, and the run's reads and state are recorded with the last"
            )
        yield statements
