"""Logical row counts of one incremental commit, read from its Iceberg snapshot summary,
and the adapter response that reports them (with what the build read of its upstreams).

With merge-on-read (the default write mode) a MERGE writes one position delete per
target row it updates or deletes and one data row per row it writes, so the summary
gives exact logical counts, unless the MERGE also deletes rows (`merge_delete_when`): a
deleted row is a position delete without a data row, an updated one a position delete
with one, so the summary tells them apart only when the commit wrote no data rows or no
deletes; otherwise the counts are unknown (None). With copy-on-write, rewritten files
count every row they held, so an update count cannot be derived from the summary: on a
format v2 table it is reported as unknown (None). A format v3 table's row lineage gives
it (`lineage_counts`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from dbt.adapters.contracts.connection import AdapterResponse

from dbt.adapters.s3tables.incremental.strategy_traits import Counting


@dataclass
class IncrementalResponse(AdapterResponse):
    rows_inserted: int | None = None
    rows_updated: int | None = None
    rows_deleted: int | None = None
    snapshot_id: int | None = None
    # What the build read of each upstream through upstream_changes() (see
    # UpstreamRange.as_response).
    upstream_reads: list[dict[str, Any]] | None = None


def with_upstream_reads(
    response: AdapterResponse | None, reads: list[dict[str, Any]]
) -> IncrementalResponse:
    """`response` (a build's, or None) carrying what the build read of its upstreams."""
    if isinstance(response, IncrementalResponse):
        return replace(response, upstream_reads=reads)
    if response is None:
        return IncrementalResponse(_message="OK", upstream_reads=reads)
    return IncrementalResponse(
        _message=response._message,
        code=response.code,
        rows_affected=response.rows_affected,
        query_id=response.query_id,
        upstream_reads=reads,
    )


@dataclass(frozen=True)
class CommitCounts:
    inserted: int | None
    updated: int | None
    deleted: int | None


def _number(summary: Mapping[str, str], key: str) -> int:
    return int(summary.get(key, 0) or 0)


def commit_counts(
    counted_as: Counting, summary: Mapping[str, str] | None, deletes_rows: bool = False
) -> CommitCounts:
    """A commit's counts, read from the summary of the snapshot it committed (None: none)
    the way its strategy is counted; `deletes_rows`: a MERGE with a delete clause."""
    if summary is None:
        return CommitCounts(0, 0, 0)
    added = _number(summary, "added-records")
    removed_rows = _number(summary, "deleted-records")
    position_deletes = _number(summary, "added-position-deletes")
    if counted_as is Counting.APPENDED:
        return CommitCounts(added, 0, 0)
    if counted_as is Counting.PARTITIONS_REPLACED:
        return CommitCounts(added, 0, removed_rows)
    if counted_as is Counting.ROWS_REPLACED:
        if removed_rows and position_deletes == 0 and added:
            # Copy-on-write rewrote files: their surviving rows count as added too.
            return CommitCounts(None, 0, None)
        return CommitCounts(added, 0, position_deletes + removed_rows)
    # MERGED: an updated (or closed) row is a position delete plus a new data row.
    if deletes_rows:
        return _merged_with_deletes(added, removed_rows, position_deletes)
    if removed_rows:
        return CommitCounts(added - removed_rows if added >= removed_rows else None, None, 0)
    return CommitCounts(added - position_deletes, position_deletes, 0)


def _merged_with_deletes(added: int, removed_rows: int, position_deletes: int) -> CommitCounts:
    """A MERGE that may delete rows: exact when it wrote only data rows (all inserted) or
    only position deletes (all deleted); else unknown (an update and an insert plus a
    delete give the same summary)."""
    if removed_rows:
        return CommitCounts(None, None, None)
    if position_deletes == 0:
        return CommitCounts(added, 0, 0)
    if added == 0:
        return CommitCounts(0, 0, position_deletes)
    return CommitCounts(None, None, None)


@dataclass(frozen=True)
class RowLineage:
    """The rows of the data files one commit added, by their row lineage (format v3): a
    row the commit inserted has neither `_row_id` nor `_last_updated_sequence_number`
    written, one it updated keeps its `_row_id` only, one copied unchanged (copy-on-write)
    keeps both."""

    inserted: int
    updated: int
    copied: int


def lineage_counts(lineage: RowLineage, summary: Mapping[str, str]) -> CommitCounts:
    """Exact counts of a commit to a v3 table: inserted and updated rows from the added
    files' lineage; deleted rows are those the commit removed (rows of removed files not
    copied, plus net new position deletes) that it did not update."""
    removed = (
        _number(summary, "deleted-records")
        - lineage.copied
        + _number(summary, "added-position-deletes")
        - _number(summary, "removed-position-deletes")
    )
    return CommitCounts(lineage.inserted, lineage.updated, max(removed - lineage.updated, 0))
