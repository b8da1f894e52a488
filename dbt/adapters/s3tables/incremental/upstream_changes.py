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
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.s3tables.catalogs.range_files import RangePlan, plan_range_files
from dbt.adapters.s3tables.incremental.upstream_reads import (
    CHANGE_TYPE_COLUMN,
    READ_TAG_PREFIX,
    RangeKind,
    UpstreamRange,
    check_key_argument,
    last_read,
    plan_range,
    read_tag,
    refused_reader,
)
from dbt.adapters.s3tables.sql.text import quote

if TYPE_CHECKING:
    from dbt.adapters.base.relation import BaseRelation

    from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
    from dbt.adapters.s3tables.catalogs.snapshots import Lineage
    from dbt.adapters.s3tables.engines.base import Engine
    from dbt.adapters.s3tables.incremental.run_bases import RunBases
    from dbt.adapters.s3tables.incremental.strategy_traits import Strategy

logger = AdapterLogger("s3tables")

# dbt's run modes, as the macros name them (s3tables_run_mode): `--empty`, `--sample`.
EMPTY_RUN = "empty"
SAMPLED_RUN = "sample"


@dataclass(frozen=True)
class Reader:
    """The model whose SQL calls upstream_changes(): its node id and name, its table, and
    what decides whether a read can be exact in it (its materialization, its strategy and
    on_schema_change mode when incremental)."""

    model_id: str
    name: str
    target: BaseRelation
    materialized: str
    strategy: Strategy | None = None
    on_schema_change: str | None = None
    # The run it renders for (run_bases.run_key).
    run: str = ""


class UpstreamChanges:
    """The upstream reads of one dbt invocation: planned, pinned and recorded per model."""

    def __init__(
        self,
        iceberg_for: Callable[[BaseRelation], IcebergCatalog],
        engine: Callable[[], Engine],
        catalog_name: Callable[[BaseRelation], str],
        bases: RunBases | None = None,
    ) -> None:
        self._iceberg_for = iceberg_for
        self._engine = engine
        self._catalog_name = catalog_name
        self._bases = bases
        # The models whose reads their run's own commit recorded (run_branch.py).
        self._recorded: set[str] = set()
        # (model, upstream) -> the upstream's history read at the model's first rendering.
        self._pinned: dict[tuple[str, str], Lineage] = {}
        self._planned: dict[str, dict[str, UpstreamRange]] = {}
        # (model, upstream range) -> its read's SQL: a model rendered twice in a run (its
        # whole-history query) reads through the same views, set up once.
        self._read: dict[tuple[str, UpstreamRange], str] = {}
        self._lock = threading.Lock()

    def upstream_name(self, upstream: BaseRelation) -> str:
        """`<catalog>.<namespace>.<table>`: the upstream as its read's record names it."""
        return f"{self._catalog_name(upstream)}.{upstream.schema}.{upstream.identifier}"

    def read_sql(
        self,
        reader: Reader,
        found: BaseRelation | None,
        upstream: BaseRelation,
        incremental: bool,
        unique_key: object = None,
        mode: str = "",
    ) -> str:
        """A parenthesised query of the rows of `upstream` (`found`: it, as the catalog
        has it) this run of `reader` reads (with `unique_key`, its row changes, each with
        its `_change_type`), on main or, while the upstream is staged for an audit in
        this build, on its audit branch; refused, before anything is read, where the read
        cannot be exact. dbt's run `mode`: `EMPTY_RUN` (`--empty`) reads no row,
        `SAMPLED_RUN` (`--sample`) a sample of a whole read; neither records a read."""
        keys = check_key_argument(reader.name, upstream, unique_key)
        refused = refused_reader(
            reader.name, reader.materialized, reader.strategy, reader.on_schema_change, bool(keys)
        )
        if refused is not None:
            if reader.strategy is not None and reader.strategy.batched:
                # dbt 1.11 logs a failed batch's error at debug level only, and prints
                # `ERROR` in its place: said here, or the console would not say why.
                logger.error(refused.msg)
            raise refused
        if found is None or not found.is_table:
            what = "does not exist" if found is None else "is a view"
            raise DbtRuntimeError(
                f"Model `{reader.name}`: upstream_changes({upstream}) reads an Iceberg "
                f"table's commits, and {upstream} {what}. Fix: build it first, or read it "
                "with ref()"
            )
        name = self.upstream_name(found)
        if mode == EMPTY_RUN:
            logger.info(f"{reader.name}: --empty: reads no row of {name} and records no read")
            return f"(SELECT *{insert_label(keys)} FROM {found} WHERE false)"
        if mode == SAMPLED_RUN and incremental:
            raise DbtRuntimeError(
                f"Model `{reader.name}`: upstream_changes({name}) under --sample would write "
                "a sample of the rows it has not read yet, leaving the others unread or read "
                "twice; nothing was read or written. Fix: run it without --sample, or rebuild "
                "it from a sample with --full-refresh --sample in a development schema (a "
                "sampled build records no read)"
            )
        branch: str | None = getattr(upstream, "audit_branch", None)
        lineage = self._lineage(reader.model_id, name, found, branch)
        mark = None
        target_holds_rows = True
        if incremental:
            target = reader.target
            target_lineage = self._iceberg_for(target).lineage(
                str(target.schema), str(target.identifier), READ_TAG_PREFIX
            )
            if self._bases is not None and reader.run:
                self._bases.note(
                    reader.run, f"upstream_changes({name})", lambda: target_lineage.current
                )
            mark = last_read(target_lineage, name, lineage)
            target_holds_rows = target_lineage.holds_rows
        planned = plan_range(reader.name, name, lineage, mark, incremental, keys, target_holds_rows)
        if mode == SAMPLED_RUN:
            logger.info(
                f"{reader.name}: --sample: reads a sample of {planned.describe()}, and "
                "records no read"
            )
            return upstream.render_event_time_filtered(self._sql(reader.name, planned, found, ()))
        with self._lock:
            self._planned.setdefault(reader.model_id, {})[name] = planned
        logger.info(f"{reader.name}: reads {planned.describe()}")
        if planned.mark is not None:
            tagged = self._engine().tag_node_commits({read_tag(name): planned.mark.text()})
            if not tagged:
                logger.info(
                    f"{reader.name}: this engine cannot record the read in the model's "
                    "commit: it is recorded in a table property after the build (a build "
                    "that fails between the two reads the range again)"
                )
        with self._lock:
            done = self._read.get((reader.model_id, planned))
        if done is None:
            done = self._sql(reader.name, planned, found, lineage.columns)
            with self._lock:
                self._read[(reader.model_id, planned)] = done
        return done

    def record(
        self,
        model_id: str,
        target: BaseRelation,
        branch: str | None = None,
        keep_for_publish: Callable[[dict[str, str]], None] | None = None,
    ) -> list[dict[str, object]]:
        """After a model's build: what it read, as table properties bound to the snapshot
        the build left (see upstream_reads.py); for a build staged on its audit `branch`,
        handed to `keep_for_publish` (main must not record rows it does not hold yet).
        Returns the reads as the adapter response lists them ([]: none)."""
        planned = self.planned(model_id)
        with self._lock:
            recorded = model_id in self._recorded
        if any(p.mark is not None for p in planned) and not recorded:
            iceberg = self._iceberg_for(target)
            namespace, table = str(target.schema), str(target.identifier)
            on = iceberg.table_state(namespace, table, branch).snapshot_id
            properties = self._properties(planned, on)
            if keep_for_publish is not None:
                keep_for_publish(properties)
            else:
                iceberg.set_properties_if_changed(namespace, table, properties)
        return [p.as_response() for p in planned]

    def records_to_publish(self, model_id: str, on: int | None) -> dict[str, str]:
        """What a model's run read, as the table properties its own commit sets, bound to
        the model's snapshot `on` that commit leaves (run_branch.py); the record after the
        build is then that commit's, never written again."""
        with self._lock:
            self._recorded.add(model_id)
        return self._properties(self.planned(model_id), on)

    @staticmethod
    def _properties(planned: Sequence[UpstreamRange], on: int | None) -> dict[str, str]:
        return {
            read_tag(p.upstream): p.mark.property_text(on) for p in planned if p.mark is not None
        }

    def reads_changes(self, model_id: str) -> bool:
        """Whether a model's run reads only part of an upstream (its changes since the
        model's last read), not the whole of every one."""
        return any(p.kind is not RangeKind.WHOLE for p in self.planned(model_id))

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

    def _sql(
        self, model: str, planned: UpstreamRange, upstream: BaseRelation, columns: Sequence[str]
    ) -> str:
        label = insert_label(planned.keys)
        if planned.end is None:
            return f"(SELECT *{label} FROM {upstream})"
        at = f"{upstream} VERSION AS OF {planned.end}"
        if planned.kind is RangeKind.WHOLE:
            return f"(SELECT *{label} FROM {at})"
        if planned.kind is RangeKind.NOTHING:
            return f"(SELECT *{label} FROM {at} WHERE false)"
        assert planned.start is not None
        # Three parts: Iceberg's reader resolves a two-part name in a catalog of its own.
        parts = (self._catalog_name(upstream), str(upstream.schema), str(upstream.identifier))
        table = ".".join(quote(part) for part in parts)
        start, end = planned.start, planned.end
        iceberg = self._iceberg_for(upstream)

        def range_files() -> RangePlan:
            loaded = iceberg.load_table(str(upstream.schema), str(upstream.identifier))
            return plan_range_files(loaded, start, end, columns)

        if planned.by_difference:
            files = self._engine().create_changed_rows_views(
                table, start, end, columns, planned.keys, range_files
            )
            if files.fallback is None:
                logger.info(f"{model}: {planned.upstream} read file by file: {files.described}")
                netting = row_changes_sql(
                    files.before, files.after, columns, planned.keys, whole_snapshots=False
                )
                return f"({netting})"
            logger.info(
                f"{model}: {planned.upstream} read as the difference of two whole snapshots, "
                f"not file by file: {files.fallback}"
            )
            before = f"{upstream} VERSION AS OF {planned.start}"
            netting = row_changes_sql(before, at, columns, planned.keys, whole_snapshots=True)
            return f"({netting})"
        view = f"dbt_upstream_changes_{uuid.uuid4().hex}"
        self._engine().create_appended_rows_view(view, table, start, end, range_files)
        return f"(SELECT *{label} FROM {quote(view)})"


def insert_label(keys: Sequence[str]) -> str:
    """A keyed read's rows all carry `_change_type`: a whole table's and appended rows are
    INSERT."""
    return f", 'INSERT' AS {CHANGE_TYPE_COLUMN}" if keys else ""


def unit_test_rows(given: str, keys: Sequence[str]) -> str:
    """upstream_changes() in a dbt unit test: the rows the test gives for the upstream
    (`given`, the fixture's relation), as the whole range; with a key, each an INSERT."""
    return f"(SELECT *{insert_label(keys)} FROM {given})"


def row_changes_sql(
    before: str,
    after: str,
    columns: Sequence[str],
    keys: Sequence[str],
    whole_snapshots: bool,
) -> str:
    """The row changes between the tables `before` and `after` (of the same `columns`), per
    key whose rows differ: each row `after` holds of it (as often as it holds it), as
    INSERT when `before` held no row of the key, else UPDATE; a key `after` holds no row
    of, as DELETE, with each distinct row `before` held of it. A key is changed, and
    deleted, as a whole: one of its two rows removed is an UPDATE to the row left, never a
    DELETE of the key. Rows are compared whole, as multisets (each distinct row counted at
    each end), so rewritten files, delete files and deletion vectors make no difference;
    each table is scanned once.

    How the rows are grouped depends on how many there are. Two `whole_snapshots` hold
    every row of the table: only the changed keys' rows are windowed (a semi join), the
    others are never sorted. The rows of the changed files alone (file_changes.py) are
    few: they are shuffled once, by key, and the rows' and keys' counts are taken in that
    one partitioning (a shuffle is a Spark job of its own, whose fixed cost outweighs
    such rows' sorting)."""
    column_list = ", ".join(quote(c) for c in columns)
    by_key = ", ".join(quote(k) for k in keys)
    both = (
        f"SELECT {column_list}, 1 AS dbt_after, 0 AS dbt_before FROM {after}\n"
        f"UNION ALL SELECT {column_list}, 0 AS dbt_after, 1 AS dbt_before FROM {before}"
    )
    key_counts = (
        f"sum(dbt_after) OVER (PARTITION BY {by_key}) AS dbt_key_after, "
        f"sum(dbt_before) OVER (PARTITION BY {by_key}) AS dbt_key_before"
    )
    # Whole snapshots are grouped as they come; the changed files' few rows are first
    # partitioned by key, which grouping by every column (the key among them) and the
    # window keep: one shuffle in all.
    rows_from = (
        f"({both}) AS dbt_both\n"
        if whole_snapshots
        else f"(SELECT * FROM ({both}) AS dbt_both DISTRIBUTE BY {by_key}) AS dbt_by_key\n"
    )
    grouped = (
        "WITH dbt_rows AS (\n"
        f"SELECT {column_list}, sum(dbt_after) AS dbt_after, sum(dbt_before) AS dbt_before\n"
        f"FROM {rows_from}GROUP BY {column_list}),\n"
    )
    if whole_snapshots:
        on_key = " AND ".join(f"dbt_rows.{quote(k)} <=> dbt_changed.{quote(k)}" for k in keys)
        grouped += (
            f"dbt_changed AS (SELECT DISTINCT {by_key} FROM dbt_rows "
            "WHERE dbt_after <> dbt_before),\n"
            f"dbt_key_rows AS (\nSELECT dbt_rows.*, {key_counts}\n"
            f"FROM dbt_rows LEFT SEMI JOIN dbt_changed ON {on_key})\n"
        )
        changed = ""
    else:
        grouped += (
            f"dbt_key_rows AS (\nSELECT dbt_rows.*, {key_counts}, "
            "max(CASE WHEN dbt_after <> dbt_before THEN 1 ELSE 0 END) "
            f"OVER (PARTITION BY {by_key}) AS dbt_key_changed\n"
            "FROM dbt_rows)\n"
        )
        changed = "dbt_key_changed = 1 AND "
    return (
        grouped + f"SELECT {column_list}, CASE WHEN dbt_key_after = 0 THEN 'DELETE' "
        f"WHEN dbt_key_before = 0 THEN 'INSERT' ELSE 'UPDATE' END AS {CHANGE_TYPE_COLUMN}\n"
        "FROM dbt_key_rows\n"
        # A kept key's rows, each as often as `after` holds it; a deleted key's, once each.
        "LATERAL VIEW explode(sequence(1, CASE WHEN dbt_key_after = 0 THEN 1 "
        "ELSE greatest(dbt_after, 1) END)) dbt_copies AS dbt_copy\n"
        f"WHERE {changed}((dbt_key_after > 0 AND dbt_after > 0) OR "
        "(dbt_key_after = 0 AND dbt_before > 0))"
    )
