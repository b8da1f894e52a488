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
        return self._sql(planned, upstream)

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

    def _sql(self, planned: UpstreamRange, upstream: BaseRelation) -> str:
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
            return f"({row_changes_sql(before, at, planned.keys)})"
        view = f"dbt_upstream_changes_{uuid.uuid4().hex}"
        # Three parts: Iceberg's reader resolves a two-part name in a catalog of its own.
        parts = (self._catalog_name(upstream), str(upstream.schema), str(upstream.identifier))
        table = ".".join(quote(part) for part in parts)
        self._engine().create_appended_rows_view(view, table, planned.start, planned.end)
        return f"(SELECT *{label} FROM {quote(view)})"


def row_changes_sql(before: str, after: str, keys: Sequence[str]) -> str:
    """One row per key whose rows differ between the tables `before` and `after`: the row
    `after` holds, as INSERT (the key had no row before) or UPDATE; else the row `before`
    held, as DELETE. Rows are compared whole, as multisets (EXCEPT ALL), so rewritten
    files, delete files and deletion vectors make no difference."""
    added = f"(SELECT * FROM {after} EXCEPT ALL SELECT * FROM {before})"
    removed = f"(SELECT * FROM {before} EXCEPT ALL SELECT * FROM {after})"
    key_list = ", ".join(quote(k) for k in keys)

    def same_key(left: str, right: str) -> str:
        return " AND ".join(f"{left}.{quote(k)} <=> {right}.{quote(k)}" for k in keys)

    return (
        f"SELECT dbt_added.*, CASE WHEN dbt_removed_keys.dbt_found IS NULL THEN 'INSERT' "
        f"ELSE 'UPDATE' END AS {CHANGE_TYPE_COLUMN}\n"
        f"FROM {added} AS dbt_added\n"
        f"LEFT JOIN (SELECT DISTINCT {key_list}, true AS dbt_found FROM {removed} AS r) "
        f"AS dbt_removed_keys ON {same_key('dbt_added', 'dbt_removed_keys')}\n"
        "UNION ALL\n"
        f"SELECT dbt_removed.*, 'DELETE' AS {CHANGE_TYPE_COLUMN}\n"
        f"FROM {removed} AS dbt_removed\n"
        f"LEFT ANTI JOIN {added} AS dbt_added ON {same_key('dbt_removed', 'dbt_added')}"
    )
