"""Row counts of an incremental commit from a format v3 table's row lineage."""

from __future__ import annotations

from dbt.adapters.s3tables.incremental.commit_counts import (
    CommitCounts,
    RowLineage,
    commit_counts,
    lineage_counts,
)
from dbt.adapters.s3tables.incremental.strategy_traits import Counting


def test_v3_row_lineage_gives_copy_on_write_counts() -> None:
    # A copy-on-write merge into a v3 table: one 5-row file replaced by one holding its 3
    # untouched rows (copied), 2 updated and 2 inserted.
    summary = {"added-records": "7", "deleted-records": "5"}
    assert commit_counts(Counting.MERGED, summary) == CommitCounts(2, None, 0)
    assert lineage_counts(RowLineage(inserted=2, updated=2, copied=3), summary) == CommitCounts(
        2, 2, 0
    )
    # A merge deleting 1 row and updating 1: 4 rows copied of the 6 in the rewritten file.
    summary = {"added-records": "5", "deleted-records": "6"}
    assert lineage_counts(RowLineage(inserted=0, updated=1, copied=4), summary) == CommitCounts(
        0, 1, 1
    )
    # Deletion vectors (merge-on-read): a DV that replaces an older one counts its
    # positions again; only the net new ones are deletes.
    summary = {"added-position-deletes": "5", "removed-position-deletes": "2"}
    assert lineage_counts(RowLineage(inserted=1, updated=2, copied=0), summary) == CommitCounts(
        1, 2, 1
    )


def test_a_merge_that_deletes_rows_is_counted_only_where_the_summary_tells() -> None:
    # Merge-on-read, `merge_delete_when`: 2 keys deleted and 1 inserted wrote 1 data row and
    # 2 position deletes, which without deletes would read as 2 updated and -1 inserted.
    summary = {"added-records": "1", "added-position-deletes": "2"}
    assert commit_counts(Counting.MERGED, summary, deletes_rows=True) == CommitCounts(
        None, None, None
    )
    assert commit_counts(Counting.MERGED, summary) == CommitCounts(-1, 2, 0)
    # Only inserts, or only deletes: exact.
    inserts = {"added-records": "3"}
    assert commit_counts(Counting.MERGED, inserts, deletes_rows=True) == CommitCounts(3, 0, 0)
    deletes = {"added-position-deletes": "2"}
    assert commit_counts(Counting.MERGED, deletes, deletes_rows=True) == CommitCounts(0, 0, 2)
    # Copy-on-write: rewritten files' rows hide which were deleted.
    rewritten = {"added-records": "4", "deleted-records": "5"}
    assert commit_counts(Counting.MERGED, rewritten, deletes_rows=True) == CommitCounts(
        None, None, None
    )
