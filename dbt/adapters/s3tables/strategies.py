"""SQL of each incremental strategy: pure functions from names to one Spark statement.

Every strategy is exactly one statement, so every incremental run is one Iceberg
commit: a failure anywhere leaves the target at its previous snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

# dbt's documented aliases, which users write in `incremental_predicates`.
SOURCE_ALIAS = "DBT_INTERNAL_SOURCE"
TARGET_ALIAS = "DBT_INTERNAL_DEST"


def quote(name: str) -> str:
    """Spark SQL identifier quoting: backticks, with embedded backticks doubled."""
    return "`" + name.replace("`", "``") + "`"


@dataclass(frozen=True)
class IncrementalWrite:
    """What an incremental statement needs to know, names only (no Spark access)."""

    target: str
    source_sql: str
    target_columns: Sequence[str]
    source_columns: Sequence[str]
    unique_key: Sequence[str] = ()
    predicates: Sequence[str] = field(default=())

    def source_column(self, target_column: str) -> str | None:
        """The source column feeding `target_column` (names match case-insensitively)."""
        wanted = target_column.lower()
        return next((c for c in self.source_columns if c.lower() == wanted), None)

    def aligned_select(self) -> str:
        """The model's rows with exactly the target's columns, in the target's order:
        a column the model lacks is NULL (never dropped from the table)."""
        expressions = []
        for column in self.target_columns:
            source = self.source_column(column)
            value = quote(source) if source is not None else "NULL"
            expressions.append(f"{value} AS {quote(column)}")
        # The model SQL sits on lines of its own: it may end in a `--` comment.
        return f"SELECT {', '.join(expressions)} FROM (\n{self.source_sql}\n) AS {SOURCE_ALIAS}_raw"


def append_sql(write: IncrementalWrite) -> str:
    columns = ", ".join(quote(c) for c in write.target_columns)
    return f"INSERT INTO {write.target} ({columns})\n{write.aligned_select()}"


def key_match(unique_key: Sequence[str], left: str, right: str) -> str:
    """Null-safe equality of every key column (NULL keys match NULL keys)."""
    return " AND ".join(f"{left}.{quote(k)} <=> {right}.{quote(k)}" for k in unique_key)


def merge_sql(write: IncrementalWrite) -> str:
    """Update matched rows, insert new ones, in one MERGE."""
    conditions = [key_match(write.unique_key, TARGET_ALIAS, SOURCE_ALIAS), *write.predicates]
    on_clause = " AND ".join(f"({c})" for c in conditions)
    keys = {k.lower() for k in write.unique_key}
    updates = ", ".join(
        f"{TARGET_ALIAS}.{quote(c)} = {SOURCE_ALIAS}.{quote(c)}"
        for c in write.target_columns
        if c.lower() not in keys
    )
    columns = ", ".join(quote(c) for c in write.target_columns)
    values = ", ".join(f"{SOURCE_ALIAS}.{quote(c)}" for c in write.target_columns)
    update_clause = f"WHEN MATCHED THEN UPDATE SET {updates}\n" if updates else ""
    return (
        f"MERGE INTO {write.target} AS {TARGET_ALIAS}\n"
        f"USING ({write.aligned_select()}) AS {SOURCE_ALIAS}\n"
        f"ON {on_clause}\n"
        f"{update_clause}"
        f"WHEN NOT MATCHED THEN INSERT ({columns}) VALUES ({values})"
    )


STRATEGY_BUILDERS = {
    "append": append_sql,
    "merge": merge_sql,
}
