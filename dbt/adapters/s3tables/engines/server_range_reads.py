"""A keyed `upstream_changes()` range read file by file on a Spark server (`method: thrift`
or `connect`), through SQL alone: the files the range changed, planned on dbt's host
(catalogs/range_files.py), read as Parquet with their position deletes (sql/file_reads.py),
and the other rows of the changed keys read from the upstream at the range's end with
the keys as a filter Iceberg prunes the files by: their values (one key column, up to
`PRUNED_KEYS` of them), else the span of an integer key's, with a join (several key
columns: the join alone, which reads the key columns of every file).

The parts are cached on the server (each file is read once: the netting refers to its
rows twice) and released when the connection closes (`release_views`). Each part's view
keeps the plan Spark analysed when it was made (`ANALYZED_VIEWS`): by default a temporary
view keeps its SQL text and is analysed again wherever it is named, and each analysis of
a Parquet file's read infers its schema with a Spark job; the model's statements name the
parts several times (measured on 1M rows: the read and merge took 39 s that way, 10-16 s
with the plans kept).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from dbt.adapters.s3tables.engines.file_changes import RangeFiles
from dbt.adapters.s3tables.sql.file_reads import (
    file_rows_sql,
    newly_deleted_rows_sql,
    undone_positions_sql,
    union_sql,
)
from dbt.adapters.s3tables.sql.text import quote, sql_string

if TYPE_CHECKING:
    from dbt.adapters.s3tables.catalogs.range_files import RangePlan

# The most changed keys written into the filter of the other rows' read (Iceberg prunes
# files by their key bounds with it); beyond, a join.
PRUNED_KEYS = 10_000
# Key values a filter can hold as SQL literals.
_LITERAL_TYPES = ("int", "bigint", "string")
# While the parts' views are made: each keeps its analysed plan, not its SQL text.
ANALYZED_VIEWS = {"spark.sql.legacy.storeAnalyzedPlanForView": "true"}


def _literal(value: Any, spark_type: str) -> str:
    return sql_string(str(value)) if spark_type == "string" else str(int(value))


class ServerRangeReader:
    """Reads one range on a server session: `run` a statement, `rows` of a query,
    `settings` for one block (the engine's, back as they were after it)."""

    def __init__(
        self,
        run: Callable[[str], None],
        rows: Callable[[str], list[Any]],
        settings: Callable[[dict[str, str]], AbstractContextManager[None]],
    ) -> None:
        self.run, self.rows, self.settings = run, rows, settings
        self.views: list[str] = []

    def cached(self, sql: str) -> str:
        """`sql`'s rows computed once, in a cached temporary view (its quoted name)."""
        view = quote(f"dbt_upstream_part_{uuid.uuid4().hex}")
        self.run(f"CACHE TABLE {view} AS {sql}")
        self.views.append(view)
        return view

    def appended(self, view_name: str, plan: RangePlan) -> None:
        """A cached view `view_name` of the rows a range of appends added: the added files'
        rows, less (as a multiset) the rows of the files it removed and of the positions it
        deleted, which a compaction or a rewrite of delete files in the range put back in
        files of their own (the rows an append adds are only in the files it adds)."""
        added = union_sql([file_rows_sql(f) for f in plan.added], plan.columns)
        if plan.removed or plan.touched:
            parts = [file_rows_sql(f) for f in plan.removed]
            parts += [newly_deleted_rows_sql(s, e) for s, e in plan.touched]
            removed = union_sql(parts, plan.columns)
            added = (
                f"SELECT * FROM ({added}) AS dbt_added\nEXCEPT ALL\n"
                f"SELECT * FROM ({removed}) AS dbt_removed"
            )
        view = quote(view_name)
        with self.settings(ANALYZED_VIEWS):
            self.run(f"CACHE TABLE {view} AS {added}")
        self.views.append(view)

    def read(self, table: str, end: int, plan: RangePlan, keys: Sequence[str]) -> RangeFiles:
        """The range's `before` and `after` rows (file_changes.py's), or why not."""
        if plan.fallback is not None:
            return RangeFiles(fallback=plan.fallback)
        with self.settings(ANALYZED_VIEWS):
            return self._read_files(table, end, plan, keys)

    def _read_files(self, table: str, end: int, plan: RangePlan, keys: Sequence[str]) -> RangeFiles:
        undone = [u for u in (undone_positions_sql(s, e) for s, e in plan.touched) if u]
        if undone and int(self.rows(f"SELECT count(*) FROM ({union_sql(undone, [])})")[0][0]):
            return RangeFiles(
                fallback="a deletion in the upstream was undone within the range (a rollback)"
            )
        parts = [file_rows_sql(f) for f in plan.removed]
        parts += [newly_deleted_rows_sql(s, e) for s, e in plan.touched]
        before = self.cached(union_sql(parts, plan.columns))
        after = self.cached(union_sql([file_rows_sql(f) for f in plan.added], plan.columns))
        key_list = ", ".join(quote(k) for k in keys)
        changed = self.cached(
            f"SELECT DISTINCT {key_list} FROM (SELECT {key_list} FROM {before} "
            f"UNION ALL SELECT {key_list} FROM {after}) AS dbt_keys"
        )
        names = ", ".join(quote(c.name) for c in plan.columns)
        # The other rows of the changed keys: the end's rows of them outside the added files.
        at_end = f"(SELECT {names}, _file FROM {table} VERSION AS OF {end}) AS dbt_end"
        outside = "true"
        if plan.added:
            added = ", ".join(sql_string(f.path) for f in plan.added)
            outside = f"dbt_end._file NOT IN ({added})"
        condition, exact = self._key_filter(changed, keys, plan)
        where = f"({condition}) AND {outside}" if condition is not None else outside
        if exact:
            elsewhere_sql = f"SELECT {names} FROM {at_end} WHERE {where}"
        else:
            matched = " AND ".join(f"dbt_end.{quote(k)} <=> dbt_changed.{quote(k)}" for k in keys)
            elsewhere_sql = (
                f"SELECT {names} FROM {at_end} LEFT SEMI JOIN {changed} AS dbt_changed "
                f"ON {matched} WHERE {where}"
            )
        elsewhere = self.cached(elsewhere_sql)
        return RangeFiles(
            before=f"(SELECT * FROM {before} UNION ALL SELECT * FROM {elsewhere})",
            after=f"(SELECT * FROM {after} UNION ALL SELECT * FROM {elsewhere})",
            described=f"{plan.described}, read as Parquet by the server",
        )

    def _key_filter(
        self, changed: str, keys: Sequence[str], plan: RangePlan
    ) -> tuple[str | None, bool]:
        """A filter on the one key column that Iceberg prunes files by, and whether it
        alone selects the changed keys' rows: their values as literals (up to
        `PRUNED_KEYS`), else the span of an integer key's (a join then selects them);
        (None, False) when a join must do alone."""
        if len(keys) != 1:
            return None, False
        key = next(c for c in plan.columns if c.name.lower() == keys[0].lower())
        if key.spark_type not in _LITERAL_TYPES:
            return None, False
        name = quote(key.name)
        column = f"dbt_end.{name}"
        # One more than the most a filter holds: whether the keys fit in one fetch.
        values = [
            row[0] for row in self.rows(f"SELECT {name} FROM {changed} LIMIT {PRUNED_KEYS + 1}")
        ]
        if len(values) <= PRUNED_KEYS:
            present = [_literal(v, key.spark_type) for v in values if v is not None]
            terms = [f"{column} IN ({', '.join(present)})"] if present else []
            if len(present) < len(values):
                terms.append(f"{column} IS NULL")
            return " OR ".join(terms) or "false", True
        if key.spark_type == "string":
            return None, False
        count, non_null, lowest, highest = self.rows(
            f"SELECT count(*), count({name}), min({name}), max({name}) FROM {changed}"
        )[0]
        if lowest is None:
            return None, False
        terms = [f"{column} BETWEEN {int(lowest)} AND {int(highest)}"]
        if int(non_null) < int(count):
            terms.append(f"{column} IS NULL")
        return " OR ".join(terms), False

    def release_views(self) -> None:
        """Forget the cached parts (a cache is the server's, beyond this session), the
        last made first: uncaching a part that a cached part is made from makes Spark
        plan that one again."""
        for view in reversed(self.views):
            self.run(f"UNCACHE TABLE IF EXISTS {view}")
        self.views.clear()
