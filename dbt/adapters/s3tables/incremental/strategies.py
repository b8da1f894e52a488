"""SQL of each incremental strategy, and the registry of strategies (`STRATEGIES`): each
built-in strategy is one record (`strategy_traits.Strategy`) naming its statement, its
fallback without MERGE and every trait a run reads of it.

Every strategy is exactly one statement, so every incremental run is one Iceberg
commit: a failure anywhere leaves the target at its previous snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from dbt.adapters.s3tables.engines.base import HASH_JOIN_SETTINGS
from dbt.adapters.s3tables.incremental.partition_evolution import PartitionTerm
from dbt.adapters.s3tables.incremental.statement_parts import (
    ACTION_COLUMN,
    PARTITION_VALUE_COLUMN,
    SOURCE_ALIAS,
    TARGET_ALIAS,
    IncrementalWrite,
    column_list,
    null_safe_equal,
)
from dbt.adapters.s3tables.incremental.strategy_traits import (
    Counting,
    Replaces,
    Strategy,
)
from dbt.adapters.s3tables.sql.text import quote


def append_sql(write: IncrementalWrite) -> str:
    columns = column_list(write.target_columns)
    return f"INSERT INTO {write.target} ({columns})\n{write.aligned_select()}"


def insert_overwrite_sql(write: IncrementalWrite) -> str:
    """Replaces the partitions present in the new rows; the caller runs it with Spark's
    dynamic partition overwrite mode set for this statement's session only."""
    return (
        f"INSERT OVERWRITE {write.target} ({column_list(write.target_columns)})\n"
        f"{write.aligned_select()}"
    )


def insert_values(columns: Sequence[str]) -> str:
    return f"INSERT ({column_list(columns)}) VALUES ({column_list(columns, SOURCE_ALIAS)})"


def merge_sql(write: IncrementalWrite) -> str:
    """Update matched rows, insert new ones; the source is first made unique per key."""
    updates = ", ".join(
        f"{TARGET_ALIAS}.{quote(c)} = {SOURCE_ALIAS}.{quote(c)}" for c in write.columns_to_update
    )
    update_clause = f"WHEN MATCHED THEN UPDATE SET {updates}\n" if updates else ""
    deletes = write.source_deletes
    delete_clause = f"WHEN MATCHED AND {deletes} THEN DELETE\n" if deletes else ""
    insert_condition = f" AND NOT {deletes}" if deletes else ""
    return (
        f"MERGE INTO {write.target} AS {TARGET_ALIAS}\n"
        f"USING ({write.unique_select()}) AS {SOURCE_ALIAS}\n"
        f"ON {write.on_clause(write.key_match())}\n"
        f"{delete_clause}"
        f"{update_clause}"
        f"WHEN NOT MATCHED{insert_condition} THEN {insert_values(write.target_columns)}"
    )


def delete_and_insert_merge(
    write: IncrementalWrite,
    delete_rows: str,
    condition: str,
    match_columns: Sequence[str] = (),
) -> str:
    """One MERGE that deletes and inserts: its source is `delete_rows` (tagged 'delete',
    matched to target rows by `condition`) plus every model row (tagged 'insert', never
    matched, so always inserted). A failure leaves both halves undone. `match_columns`:
    columns the delete rows carry after the target's (NULL in the insert rows)."""
    nulls = "".join(f", NULL AS {quote(c)}" for c in match_columns)
    insert_rows = (
        f"SELECT {column_list(write.target_columns)}{nulls}, 'insert' AS {ACTION_COLUMN} "
        f"FROM ({write.aligned_select()}) AS {SOURCE_ALIAS}_rows"
    )
    action = f"{SOURCE_ALIAS}.{ACTION_COLUMN}"
    on = write.on_clause(f"{action} = 'delete' AND {condition}")
    return (
        f"MERGE INTO {write.target} AS {TARGET_ALIAS}\n"
        f"USING ({delete_rows}\nUNION ALL\n{insert_rows}) AS {SOURCE_ALIAS}\n"
        f"ON {on}\n"
        "WHEN MATCHED THEN DELETE\n"
        f"WHEN NOT MATCHED AND {action} = 'insert' THEN {insert_values(write.target_columns)}"
    )


def delete_insert_sql(write: IncrementalWrite) -> str:
    """Delete target rows whose key is in the source, insert every source row (no dedup):
    each distinct key is one 'delete' row (a key matching twice would fail Iceberg's
    cardinality check), already so when the source is unique."""
    keys = write.keys
    values = [quote(c) if c in keys else f"NULL AS {quote(c)}" for c in write.target_columns]
    distinct = "" if write.source_unique else "DISTINCT "
    delete_rows = (
        f"SELECT {distinct}{', '.join(values)}, 'delete' AS {ACTION_COLUMN} "
        f"FROM ({write.aligned_select(keys)}) AS {SOURCE_ALIAS}_keys"
    )
    return delete_and_insert_merge(write, delete_rows, write.key_match())


def partition_values_overwrite_sql(write: IncrementalWrite) -> str:
    """insert_overwrite on a table holding files of earlier partition specs. Iceberg's
    dynamic overwrite drops only the current spec's files of a partition, so rows written
    under another spec would stay beside the new ones. This one MERGE deletes every target
    row whose partition value (each field of the current spec) is one of the new rows',
    whatever spec its file has, and inserts the new rows."""
    rows = f"{SOURCE_ALIAS}_keys"
    names = [PARTITION_VALUE_COLUMN.format(i) for i in range(len(write.partitioning))]
    values = [
        f"{v} AS {quote(n)}" for v, n in zip(write.partition_values(rows), names, strict=True)
    ]
    nulls = [f"NULL AS {quote(c)}" for c in write.target_columns]
    delete_rows = (
        f"SELECT DISTINCT {', '.join([*nulls, *values])}, 'delete' AS {ACTION_COLUMN} "
        f"FROM ({write.aligned_select()}) AS {rows}"
    )
    condition = " AND ".join(
        f"{value} <=> {SOURCE_ALIAS}.{quote(name)}"
        for value, name in zip(write.partition_values(TARGET_ALIAS), names, strict=True)
    )
    # insert_overwrite takes no incremental_predicates (its dynamic overwrite has no ON).
    return delete_and_insert_merge(replace(write, predicates=()), delete_rows, condition, names)


def affected_partitions_sql(
    whole_sql: str,
    changes_sql: str,
    partitioning: Sequence[PartitionTerm],
    function_catalog: str,
) -> str:
    """The rows of `whole_sql` (a model's query over its whole upstreams) in the
    partitions that `changes_sql` (the same model over only the rows its upstreams changed)
    has rows in: what insert_overwrite writes when the model reads upstream changes, so a
    partition it replaces gets every row a full rebuild would give it, not only the new
    ones. Partition values compare null-safely, under the table's partition transforms."""
    whole, changed = f"{SOURCE_ALIAS}_whole", f"{SOURCE_ALIAS}_changed"
    on = " AND ".join(
        f"{term.spark_sql(f'{whole}.{quote(term.source)}', function_catalog)} <=> "
        f"{term.spark_sql(f'{changed}.{quote(term.source)}', function_catalog)}"
        for term in partitioning
    )
    return (
        f"SELECT {whole}.* FROM (\n{whole_sql}\n) AS {whole}\n"
        f"LEFT SEMI JOIN (\n{changes_sql}\n) AS {changed}\nON {on}"
    )


def microbatch_sql(write: IncrementalWrite) -> str:
    """Replace exactly the batch's time window [start, end): one 'delete' row matches
    every target row in the window; the window sits in the ON clause, so Iceberg reads
    only the files that can hold it."""
    event_time = f"{TARGET_ALIAS}.{quote(write.target_column(write.event_time or ''))}"
    window = (
        f"{event_time} >= TIMESTAMP '{write.window_start}' "
        f"AND {event_time} < TIMESTAMP '{write.window_end}'"
    )
    nulls = ", ".join(f"NULL AS {quote(c)}" for c in write.target_columns)
    return delete_and_insert_merge(write, f"SELECT {nulls}, 'delete' AS {ACTION_COLUMN}", window)


@dataclass(frozen=True)
class Scd2Parts:
    """The pieces both scd2 statements share."""

    keys: list[str]
    valid_from: str
    valid_to: str
    data_columns: list[str]
    changed: str
    rows: str

    @classmethod
    def of(cls, write: IncrementalWrite) -> Scd2Parts:
        valid_from = write.target_column(write.valid_from)
        valid_to = write.target_column(write.valid_to)
        history = {valid_from.lower(), valid_to.lower()}
        data_columns = [c for c in write.target_columns if c.lower() not in history]
        keys = write.keys
        key_names = {k.lower() for k in keys}
        # A column the model no longer returns is not compared: its NULL in the model's
        # rows is no change of the row (new versions hold NULL in it).
        tracked = (
            [write.target_column(c) for c in write.check_columns]
            if write.check_columns
            else [
                c
                for c in data_columns
                if c.lower() not in key_names and write.source_column(c) is not None
            ]
        )
        changed = (
            " OR ".join(
                f"NOT ({TARGET_ALIAS}.{quote(c)} <=> {SOURCE_ALIAS}.{quote(c)})" for c in tracked
            )
            or "false"
        )
        # One row per key, as the merge takes its source (see key_uniqueness.py).
        rows = (
            f"({write.aligned_select(data_columns)})"
            if write.source_unique
            else f"({write.deduplicated_select(data_columns)})"
        )
        return cls(keys, valid_from, valid_to, data_columns, changed, rows)

    @property
    def columns(self) -> list[str]:
        return [*self.data_columns, self.valid_from, self.valid_to]

    @property
    def new_row_values(self) -> str:
        """A source row as a new open version: opened now, not closed."""
        source = [f"{SOURCE_ALIAS}.{quote(c)}" for c in self.data_columns]
        return ", ".join([*source, "current_timestamp()", "NULL"])


def scd2_sql(write: IncrementalWrite) -> str:
    """History in one MERGE. A key whose incoming row differs in a tracked column has its
    open row closed (valid_to = now) and gets a new open row; identical rows change
    nothing; new keys open a row; keys absent from the source stay as they are.

    The source lists every model row tagged 'match' (matched to its key's open row), plus,
    for changed keys only, the same row tagged 'insert', which never matches and so
    inserts the new version.
    """
    parts = Scd2Parts.of(write)
    open_row = f"{TARGET_ALIAS}.{quote(parts.valid_to)} IS NULL"
    match = write.key_match()
    tagged = f"SELECT *, 'match' AS {ACTION_COLUMN} FROM {parts.rows} AS {SOURCE_ALIAS}_rows"
    new_versions = (
        f"SELECT {SOURCE_ALIAS}.*, 'insert' AS {ACTION_COLUMN} "
        f"FROM {parts.rows} AS {SOURCE_ALIAS}\n"
        f"JOIN {write.target} AS {TARGET_ALIAS} ON {match} AND {open_row}\n"
        f"WHERE {parts.changed}"
    )
    on = write.on_clause(f"{SOURCE_ALIAS}.{ACTION_COLUMN} = 'match' AND {match} AND {open_row}")
    return (
        f"MERGE INTO {write.target} AS {TARGET_ALIAS}\n"
        f"USING ({tagged}\nUNION ALL\n{new_versions}) AS {SOURCE_ALIAS}\n"
        f"ON {on}\n"
        f"WHEN MATCHED AND ({parts.changed}) THEN UPDATE SET "
        f"{TARGET_ALIAS}.{quote(parts.valid_to)} = current_timestamp()\n"
        f"WHEN NOT MATCHED THEN INSERT ({column_list(parts.columns)}) "
        f"VALUES ({parts.new_row_values})"
    )


# --- Without MERGE (Iceberg's SQL extensions absent, or use_merge: false) ---------------
# Each fallback is one INSERT OVERWRITE of the whole table (static overwrite): the new
# table content is computed from the old content and the model's rows, and committed at
# once, so the single-commit rule holds on this path too.

MATCHED_COLUMN = "dbt_internal_matched"


def overwrite_table(write: IncrementalWrite, select: str) -> str:
    return f"INSERT OVERWRITE {write.target} ({column_list(write.target_columns)})\n{select}"


def rows_without_source_keys(write: IncrementalWrite, source: str) -> str:
    """Target rows no source row replaces (as MERGE: key match and predicates)."""
    match = write.on_clause(null_safe_equal(write.keys, TARGET_ALIAS, SOURCE_ALIAS))
    return (
        f"SELECT {column_list(write.target_columns, TARGET_ALIAS)} "
        f"FROM {write.target} AS {TARGET_ALIAS}\n"
        f"WHERE NOT EXISTS (SELECT 1 FROM ({source}) AS {SOURCE_ALIAS} WHERE {match})"
    )


def partition_values_overwrite_fallback_sql(write: IncrementalWrite) -> str:
    """partition_values_overwrite_sql without MERGE: the target rows outside the new rows'
    partition values, plus the new rows."""
    source = write.aligned_select()
    same_partition = " AND ".join(
        f"{target} <=> {source_value}"
        for target, source_value in zip(
            write.partition_values(TARGET_ALIAS), write.partition_values(SOURCE_ALIAS), strict=True
        )
    )
    kept = (
        f"SELECT {column_list(write.target_columns, TARGET_ALIAS)} "
        f"FROM {write.target} AS {TARGET_ALIAS}\n"
        f"WHERE NOT EXISTS (SELECT 1 FROM ({source}) AS {SOURCE_ALIAS} WHERE {same_partition})"
    )
    return overwrite_table(write, f"{kept}\nUNION ALL\n{source}")


def merge_fallback_sql(write: IncrementalWrite) -> str:
    updated = {c.lower() for c in write.columns_to_update} | {k.lower() for k in write.unique_key}
    source = write.unique_select()
    values = ", ".join(
        f"{SOURCE_ALIAS}.{quote(c)}"
        if c.lower() in updated
        else f"CASE WHEN {TARGET_ALIAS}.{MATCHED_COLUMN} THEN {TARGET_ALIAS}.{quote(c)} "
        f"ELSE {SOURCE_ALIAS}.{quote(c)} END"
        for c in write.target_columns
    )
    deletes = write.source_deletes
    merged = (
        f"SELECT {values} FROM ({source}) AS {SOURCE_ALIAS}\n"
        f"LEFT JOIN (SELECT *, true AS {MATCHED_COLUMN} FROM {write.target}) AS {TARGET_ALIAS} "
        f"ON {write.on_clause(null_safe_equal(write.keys, TARGET_ALIAS, SOURCE_ALIAS))}"
        + (f"\nWHERE NOT {deletes}" if deletes else "")
    )
    return overwrite_table(write, f"{rows_without_source_keys(write, source)}\nUNION ALL\n{merged}")


def delete_insert_fallback_sql(write: IncrementalWrite) -> str:
    source = write.aligned_select()
    return overwrite_table(write, f"{rows_without_source_keys(write, source)}\nUNION ALL\n{source}")


def scd2_fallback_sql(write: IncrementalWrite) -> str:
    parts = Scd2Parts.of(write)
    open_rows = f"{TARGET_ALIAS}.{quote(parts.valid_to)} IS NULL"
    closed_history = ", ".join(
        [f"{TARGET_ALIAS}.{quote(c)}" for c in parts.data_columns]
        + [
            f"{TARGET_ALIAS}.{quote(parts.valid_from)}",
            f"CASE WHEN {open_rows} AND {SOURCE_ALIAS}.{MATCHED_COLUMN} AND ({parts.changed}) "
            f"THEN current_timestamp() ELSE {TARGET_ALIAS}.{quote(parts.valid_to)} END",
        ]
    )
    match = null_safe_equal(parts.keys, TARGET_ALIAS, SOURCE_ALIAS)
    history = (
        f"SELECT {closed_history} FROM {write.target} AS {TARGET_ALIAS}\n"
        f"LEFT JOIN (SELECT *, true AS {MATCHED_COLUMN} FROM {parts.rows}) AS {SOURCE_ALIAS} "
        f"ON {match} AND {open_rows}"
    )
    additions = (
        f"SELECT {parts.new_row_values} FROM {parts.rows} AS {SOURCE_ALIAS}\n"
        f"LEFT JOIN (SELECT *, true AS {MATCHED_COLUMN} FROM {write.target} "
        f"WHERE {quote(parts.valid_to)} IS NULL) AS {TARGET_ALIAS} ON {match}\n"
        f"WHERE {TARGET_ALIAS}.{MATCHED_COLUMN} IS NULL OR ({parts.changed})"
    )
    return (
        f"INSERT OVERWRITE {write.target} ({column_list(parts.columns)})\n"
        f"{history}\nUNION ALL\n{additions}"
    )


# --- The registry: one record per built-in strategy (strategy_traits.Strategy) ---------

STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy(
            name="append",
            statement=append_sql,
            fallback=None,
            uses_merge=False,
            across_specs=None,
            statement_settings={},
            keyed=False,
            deduplicates=False,
            trusts_declared_key=False,
            counts_keys=False,
            replaces=Replaces.NOTHING,
            skipped_when_empty=True,
            counted_as=Counting.APPENDED,
            kept_column_values="append writes NULL in new rows",
            keeps_history=False,
            takes_delete_when=False,
            batched=False,
        ),
        Strategy(
            name="merge",
            statement=merge_sql,
            fallback=merge_fallback_sql,
            uses_merge=True,
            across_specs=None,
            statement_settings=HASH_JOIN_SETTINGS,
            keyed=True,
            deduplicates=True,
            trusts_declared_key=True,
            counts_keys=True,
            replaces=Replaces.ROWS_BY_KEY,
            skipped_when_empty=True,
            counted_as=Counting.MERGED,
            kept_column_values="merge keeps their values in updated rows and writes NULL in "
            "new rows",
            keeps_history=False,
            takes_delete_when=True,
            batched=False,
        ),
        Strategy(
            name="delete+insert",
            statement=delete_insert_sql,
            fallback=delete_insert_fallback_sql,
            uses_merge=True,
            across_specs=None,
            statement_settings=HASH_JOIN_SETTINGS,
            keyed=True,
            deduplicates=False,
            trusts_declared_key=True,
            counts_keys=False,
            replaces=Replaces.ROWS_BY_KEY,
            skipped_when_empty=True,
            counted_as=Counting.ROWS_REPLACED,
            kept_column_values="delete+insert writes NULL in the rows it replaces or adds",
            keeps_history=False,
            takes_delete_when=False,
            batched=False,
        ),
        Strategy(
            name="insert_overwrite",
            statement=insert_overwrite_sql,
            fallback=None,
            uses_merge=False,
            # Iceberg's dynamic overwrite drops only the current spec's files of a
            # partition: across specs, the partitions are replaced by their values.
            across_specs=(partition_values_overwrite_sql, partition_values_overwrite_fallback_sql),
            statement_settings={"spark.sql.sources.partitionOverwriteMode": "dynamic"},
            keyed=False,
            deduplicates=False,
            trusts_declared_key=False,
            counts_keys=False,
            replaces=Replaces.PARTITIONS,
            skipped_when_empty=True,
            counted_as=Counting.PARTITIONS_REPLACED,
            kept_column_values="insert_overwrite writes NULL in the partitions it replaces",
            keeps_history=False,
            takes_delete_when=False,
            batched=False,
        ),
        Strategy(
            name="scd2",
            statement=scd2_sql,
            fallback=scd2_fallback_sql,
            uses_merge=True,
            across_specs=None,
            statement_settings=HASH_JOIN_SETTINGS,
            keyed=True,
            deduplicates=True,
            trusts_declared_key=False,
            counts_keys=True,
            replaces=Replaces.ROWS_BY_KEY,
            skipped_when_empty=True,
            counted_as=Counting.MERGED,
            kept_column_values="scd2 does not compare them and writes NULL in new versions",
            keeps_history=True,
            takes_delete_when=False,
            batched=False,
        ),
        Strategy(
            name="microbatch",
            statement=microbatch_sql,
            fallback=None,
            uses_merge=True,
            across_specs=None,
            statement_settings=HASH_JOIN_SETTINGS,
            keyed=False,
            deduplicates=False,
            trusts_declared_key=False,
            counts_keys=False,
            replaces=Replaces.TIME_WINDOW,
            # An empty batch still replaces its window with nothing.
            skipped_when_empty=False,
            counted_as=Counting.ROWS_REPLACED,
            kept_column_values="microbatch writes NULL in the batch it replaces",
            keeps_history=False,
            takes_delete_when=False,
            batched=True,
        ),
    )
}
