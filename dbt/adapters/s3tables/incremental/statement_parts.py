"""What an incremental statement needs to know (`IncrementalWrite`, names only, no Spark
access) and the SQL pieces every strategy's statement shares: dbt's aliases, column lists,
null-safe key equality, the model's rows aligned to the table's columns or made unique per
key, and `merge_delete_when` on a row."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dbt.adapters.s3tables.incremental.partition_evolution import PartitionTerm
from dbt.adapters.s3tables.sql.text import qualify_columns, quote

# dbt's documented aliases, which users write in `incremental_predicates`.
SOURCE_ALIAS = "DBT_INTERNAL_SOURCE"
TARGET_ALIAS = "DBT_INTERNAL_DEST"
# Marks, in a MERGE source, which rows delete target rows and which rows are inserted.
ACTION_COLUMN = "dbt_internal_action"
ROW_NUMBER_COLUMN = "dbt_internal_row_number"
# merge with `merge_delete_when`: whether a source row deletes its key's row.
DELETE_FLAG_COLUMN = "dbt_internal_delete"
# The value of the i-th partition field, in a MERGE source's delete rows.
PARTITION_VALUE_COLUMN = "dbt_internal_partition_{}"


def column_list(columns: Sequence[str], alias: str | None = None) -> str:
    prefix = f"{alias}." if alias else ""
    return ", ".join(f"{prefix}{quote(c)}" for c in columns)


def null_safe_equal(columns: Sequence[str], left: str, right: str) -> str:
    """Null-safe equality of every column (NULL matches NULL)."""
    return " AND ".join(f"{left}.{quote(c)} <=> {right}.{quote(c)}" for c in columns)


@dataclass(frozen=True)
class IncrementalWrite:
    """What an incremental statement needs to know, names only (no Spark access)."""

    target: str
    source_sql: str
    target_columns: Sequence[str]
    source_columns: Sequence[str]
    unique_key: Sequence[str] = ()
    predicates: Sequence[str] = field(default=())
    # merge: the target columns a matched row updates (default: every non-key column the
    # model returns).
    update_columns: Sequence[str] | None = None
    # merge: keep, per key, the source row with the greatest value of this column.
    watermark_column: str | None = None
    # merge (`merge_delete_when`): a condition on the model's rows; a matched row it holds
    # for is deleted, an unmatched one is not inserted.
    delete_when: str | None = None
    # merge, delete+insert: the source holds each key once (see key_uniqueness.py), so
    # it is used as it is, without dedup.
    source_unique: bool = False
    # merge, delete+insert, scd2: a condition on the target's rows (TARGET_ALIAS) that every
    # row the source's keys match meets, its key span (key_span.py): Iceberg reads only
    # the data files it may hold.
    key_span: str | None = None
    # scd2
    check_columns: Sequence[str] | None = None
    valid_from: str = "valid_from"
    valid_to: str = "valid_to"
    # microbatch: the batch replaces target rows with `event_time` in [start, end).
    event_time: str | None = None
    window_start: str | None = None
    window_end: str | None = None
    # insert_overwrite by partition values: the table's partition fields, and the quoted
    # catalog whose Iceberg functions compute their values.
    partitioning: Sequence[PartitionTerm] = ()
    function_catalog: str = ""

    def source_column(self, target_column: str) -> str | None:
        """The source column feeding `target_column` (names match case-insensitively)."""
        wanted = target_column.lower()
        return next((c for c in self.source_columns if c.lower() == wanted), None)

    def target_column(self, name: str) -> str:
        """The target's spelling of a column the config names (case-insensitive)."""
        wanted = name.lower()
        return next((c for c in self.target_columns if c.lower() == wanted), name)

    @property
    def keys(self) -> list[str]:
        return [self.target_column(k) for k in self.unique_key]

    @property
    def columns_to_update(self) -> list[str]:
        """The target columns a matched row takes from the model: `update_columns`, else
        every non-key column; of those, only the ones the model returns. A column the
        model no longer returns keeps its value in matched rows (dbt-core's merge updates
        only the model's columns too)."""
        keys = {k.lower() for k in self.unique_key}
        chosen = (
            self.update_columns
            if self.update_columns is not None
            else [c for c in self.target_columns if c.lower() not in keys]
        )
        return [c for c in chosen if self.source_column(c) is not None]

    def aligned_select(self, columns: Sequence[str] | None = None, flagged: bool = False) -> str:
        """The model's rows with exactly the given target columns (default: all), in the
        target's order: a column the model lacks is NULL (never dropped from the table).
        `flagged`: plus DELETE_FLAG_COLUMN, `delete_when` on the model's own row (any of
        its columns, stored in the table or not)."""
        expressions = []
        for column in columns if columns is not None else self.target_columns:
            source = self.source_column(column)
            value = quote(source) if source is not None else "NULL"
            expressions.append(f"{value} AS {quote(column)}")
        if flagged and self.delete_when is not None:
            expressions.append(f"{deletes_row(self.delete_when)} AS {DELETE_FLAG_COLUMN}")
        # The model SQL sits on lines of its own: it may end in a `--` comment.
        return f"SELECT {', '.join(expressions)} FROM (\n{self.source_sql}\n) AS {SOURCE_ALIAS}_raw"

    def deduplicated_select(
        self, columns: Sequence[str] | None = None, flagged: bool = False
    ) -> str:
        """One source row per unique key, with the given target columns (default: all):
        the greatest watermark, else an arbitrary one. `flagged`: as in aligned_select."""
        order = quote(self.target_column(self.watermark_column or self.keys[0]))
        direction = " DESC NULLS LAST" if self.watermark_column else ""
        selected = list(columns if columns is not None else self.target_columns)
        if flagged and self.delete_when is not None:
            selected.append(DELETE_FLAG_COLUMN)
        return (
            f"SELECT {column_list(selected)} "
            f"FROM (\nSELECT *, ROW_NUMBER() OVER (PARTITION BY {column_list(self.keys)} "
            f"ORDER BY {order}{direction}) AS {ROW_NUMBER_COLUMN}\n"
            f"FROM ({self.aligned_select(columns, flagged)}) AS {SOURCE_ALIAS}_aligned\n"
            f") AS {SOURCE_ALIAS}_ranked WHERE {ROW_NUMBER_COLUMN} = 1"
        )

    def unique_select(self) -> str:
        """The model's rows, one per key (as they are when the source is unique), flagged
        with `delete_when` when it is set."""
        if self.source_unique:
            return self.aligned_select(flagged=True)
        return self.deduplicated_select(flagged=True)

    @property
    def source_deletes(self) -> str | None:
        """Whether the source row (of unique_select) deletes its key's row; None without
        `delete_when`."""
        if self.delete_when is None:
            return None
        return f"{SOURCE_ALIAS}.{DELETE_FLAG_COLUMN}"

    def key_match(self) -> str:
        """The target row matches the source row's key (and lies in the key span)."""
        match = null_safe_equal(self.keys, TARGET_ALIAS, SOURCE_ALIAS)
        return f"{match} AND {self.key_span}" if self.key_span else match

    def on_clause(self, condition: str) -> str:
        """`condition` and every incremental predicate; a predicate's bare column names are
        the target's (as in a `DELETE ... WHERE` on the target, where predicates written
        for other adapters' delete+insert run): both sides have them here."""
        predicates = [
            qualify_columns(p, list(self.target_columns), TARGET_ALIAS) for p in self.predicates
        ]
        return " AND ".join(f"({c})" for c in [condition, *predicates])

    def partition_values(self, alias: str) -> list[str]:
        """The value of each partition field for the rows of `alias`."""
        return [
            term.spark_sql(
                f"{alias}.{quote(self.target_column(term.source))}", self.function_catalog
            )
            for term in self.partitioning
        ]


def deletes_row(delete_when: str) -> str:
    """`merge_delete_when` on a model row (the only table in scope): true or false, never
    NULL."""
    return f"coalesce(({delete_when}), false)"


def without_deleted_rows(sql: str, delete_when: str) -> str:
    """A created table's rows: the model's, less those `merge_delete_when` deletes (a row
    deleted before the table exists is not inserted, as in the MERGE)."""
    return f"SELECT * FROM ({sql}) AS {SOURCE_ALIAS}\nWHERE NOT {deletes_row(delete_when)}"
