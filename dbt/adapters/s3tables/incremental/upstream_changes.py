"""`upstream_changes(relation)` in a model: the SQL reading the part of an upstream Iceberg
table this run has not read yet (see upstream_reads.py for what that is and what is
refused), and the record of the read in the model's own commit.

Each (model, upstream) is planned once per run: the upstream's history is read when the
model's SQL is first rendered, which pins the snapshot the run reads up to, so a second
rendering (an incremental model's whole-history query) reads up to the same snapshot.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.s3tables.incremental.upstream_reads import (
    CHANGE_TYPE_COLUMN,
    READ_TAG_PREFIX,
    RangeKind,
    UpstreamRange,
    last_read,
    plan_range,
    read_tag,
)
from dbt.adapters.s3tables.sql.text import quote

if TYPE_CHECKING:
    from dbt.adapters.base.relation import BaseRelation

    from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
    from dbt.adapters.s3tables.catalogs.snapshots import Lineage
    from dbt.adapters.s3tables.engines.base import Engine

logger = AdapterLogger("s3tables")


class UpstreamChanges:
    """The upstream reads of one dbt invocation: planned, pinned and recorded per model."""

    def __init__(
        self,
        iceberg_for: Callable[[BaseRelation], IcebergCatalog],
        engine: Callable[[], Engine],
        catalog_name: Callable[[BaseRelation], str],
    ) -> None:
        self._iceberg_for = iceberg_for
        self._engine = engine
        self._catalog_name = catalog_name
        # (model, upstream) -> the upstream's history read at the model's first rendering.
        self._pinned: dict[tuple[str, str], Lineage] = {}
        self._planned: dict[str, dict[str, UpstreamRange]] = {}
        self._lock = threading.Lock()

    def upstream_name(self, upstream: BaseRelation) -> str:
        """`<catalog>.<namespace>.<table>`: the upstream as its read's record names it."""
        return f"{self._catalog_name(upstream)}.{upstream.schema}.{upstream.identifier}"

    def read_sql(
        self,
        model_id: str,
        model_name: str,
        target: BaseRelation,
        upstream: BaseRelation,
        incremental: bool,
        keys: Sequence[str] = (),
        branch: str | None = None,
    ) -> str:
        """A parenthesised query of the upstream's rows this run reads (with `keys`, its
        row changes, each with its `_change_type`), on main or, while the upstream is
        staged for an audit in this build, on its audit `branch`."""
        name = self.upstream_name(upstream)
        lineage = self._lineage(model_id, name, upstream, branch)
        mark = None
        if incremental:
            target_lineage = self._iceberg_for(target).lineage(
                str(target.schema), str(target.identifier), READ_TAG_PREFIX
            )
            mark = last_read(target_lineage, name, lineage)
        planned = plan_range(model_name, name, lineage, mark, incremental, keys)
        with self._lock:
            self._planned.setdefault(model_id, {})[name] = planned
        logger.info(f"{model_name}: reads {planned.describe()}")
        if planned.mark is not None:
            tagged = self._engine().tag_node_commits({read_tag(name): planned.mark.text()})
            if not tagged:
                logger.info(
                    f"{model_name}: this engine cannot record the read in the model's "
                    "commit: it is recorded in a table property after the build (a build "
                    "that fails between the two reads the range again)"
                )
        return self._sql(planned, upstream, lineage.columns)

    def planned(self, model_id: str) -> list[UpstreamRange]:
        """The ranges a model's run reads, one per upstream."""
        with self._lock:
            return list(self._planned.get(model_id, {}).values())

    def _lineage(
        self, model_id: str, name: str, upstream: BaseRelation, branch: str | None
    ) -> Lineage:
        with self._lock:
            pinned = self._pinned.get((model_id, name))
        if pinned is None:
            # An upstream staged on its audit branch in this build is read there, as its
            # ref() is (the branch's commits become main's when it is published).
            pinned = self._iceberg_for(upstream).lineage(
                str(upstream.schema),
                str(upstream.identifier),
                READ_TAG_PREFIX,
                branch,
            )
            with self._lock:
                pinned = self._pinned.setdefault((model_id, name), pinned)
        return pinned

    def _sql(self, planned: UpstreamRange, upstream: BaseRelation, columns: Sequence[str]) -> str:
        # A keyed read's rows all carry `_change_type`; whole tables and appends are INSERT.
        label = f", 'INSERT' AS {CHANGE_TYPE_COLUMN}" if planned.keys else ""
        if planned.end is None:
            return f"(SELECT *{label} FROM {upstream})"
        at = f"{upstream} VERSION AS OF {planned.end}"
        if planned.kind is RangeKind.WHOLE:
            return f"(SELECT *{label} FROM {at})"
        if planned.kind is RangeKind.NOTHING:
            return f"(SELECT *{label} FROM {at} WHERE false)"
        assert planned.start is not None
        if planned.by_difference:
            before = f"{upstream} VERSION AS OF {planned.start}"
            return f"({row_changes_sql(before, at, columns, planned.keys)})"
        view = f"dbt_upstream_changes_{uuid.uuid4().hex}"
        # Three parts: Iceberg's reader resolves a two-part name in a catalog of its own.
        parts = (self._catalog_name(upstream), str(upstream.schema), str(upstream.identifier))
        table = ".".join(quote(part) for part in parts)
        self._engine().create_appended_rows_view(view, table, planned.start, planned.end)
        return f"(SELECT *{label} FROM {quote(view)})"


def row_changes_sql(before: str, after: str, columns: Sequence[str], keys: Sequence[str]) -> str:
    """One row per key whose rows differ between the tables `before` and `after` (of the
    same `columns`): the row `after` holds, as INSERT (the key had no row before) or
    UPDATE; else the row `before` held, as DELETE. Rows are compared whole, as multisets
    (each distinct row's count after less its count before), so rewritten files, delete
    files and deletion vectors make no difference; each table is scanned once."""
    column_list = ", ".join(quote(c) for c in columns)
    by_key = ", ".join(quote(k) for k in keys)
    return (
        f"SELECT {column_list}, CASE WHEN dbt_net < 0 THEN 'DELETE' WHEN dbt_key_removed "
        f"THEN 'UPDATE' ELSE 'INSERT' END AS {CHANGE_TYPE_COLUMN}\n"
        "FROM (SELECT *, "
        f"max(dbt_net < 0) OVER (PARTITION BY {by_key}) AS dbt_key_removed, "
        f"max(dbt_net > 0) OVER (PARTITION BY {by_key}) AS dbt_key_added\n"
        f"FROM (SELECT {column_list}, sum(dbt_side) AS dbt_net\n"
        f"FROM (SELECT {column_list}, 1 AS dbt_side FROM {after}\n"
        f"UNION ALL SELECT {column_list}, -1 AS dbt_side FROM {before}) AS dbt_both\n"
        f"GROUP BY {column_list} HAVING sum(dbt_side) <> 0) AS dbt_net_rows) AS dbt_changed\n"
        # A key's removed row is its DELETE only when no row of it was added.
        "WHERE dbt_net > 0 OR NOT dbt_key_added"
    )
