"""A range of appends read on a Spark server through SQL alone (engines/server_range_reads.py,
`ServerRangeReader.appended`): the statements it sends. Run for real over a Thrift server
by the promises' keyed walk (test_engines.py), whose readers read ranges of appends."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dbt.adapters.s3tables.catalogs.range_files import FileAt, FileColumn, RangePlan
from dbt.adapters.s3tables.engines.server_range_reads import ANALYZED_VIEWS, ServerRangeReader

COLUMNS = (FileColumn("id", "bigint", "id"), FileColumn("v", "int", "v"))


class Session:
    """What the reader sends, and the settings each statement ran under."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, str]]] = []
        self.current: dict[str, str] = {}

    def run(self, sql: str) -> None:
        self.sent.append((sql, dict(self.current)))

    def rows(self, sql: str) -> list[Any]:
        raise AssertionError(f"no query expected: {sql}")

    @contextmanager
    def settings(self, values: dict[str, str]) -> Iterator[None]:
        self.current = dict(values)
        yield
        self.current = {}


def file(name: str, deletes: tuple[str, ...] = ()) -> FileAt:
    return FileAt(f"s3://b/data/{name}.parquet", deletes, COLUMNS)


def appended(plan: RangePlan) -> tuple[Session, ServerRangeReader]:
    session = Session()
    reader = ServerRangeReader(session.run, session.rows, session.settings)
    reader.appended("dbt_upstream_changes_1", plan)
    return session, reader


def test_the_appended_files_rows_are_one_cached_view_released_with_the_connection() -> None:
    session, reader = appended(RangePlan(columns=COLUMNS, added=(file("a"), file("b"))))
    [(sql, settings)] = session.sent
    assert sql.startswith("CACHE TABLE `dbt_upstream_changes_1` AS SELECT * FROM (")
    assert "parquet.`s3://b/data/a.parquet`" in sql and "parquet.`s3://b/data/b.parquet`" in sql
    assert "EXCEPT ALL" not in sql
    # The view keeps its analysed plan: each name of it is not a new schema inference.
    assert settings == ANALYZED_VIEWS
    reader.release_views()
    assert session.sent[-1][0] == "UNCACHE TABLE IF EXISTS `dbt_upstream_changes_1`"


def test_a_compaction_in_the_range_takes_the_rows_it_rewrote_out_of_the_added_files() -> None:
    # An append, then a compaction of an older file and the appended one into `c`: `c`
    # holds the old rows again, which the removed older file's rows (at the start, with
    # its deletes) take out.
    older = file("old", deletes=("s3://b/data/del.parquet",))
    plan = RangePlan(columns=COLUMNS, added=(file("c"), file("d")), removed=(older, file("e")))
    session, _ = appended(plan)
    [(sql, _)] = session.sent
    added, removed = sql.split("\nEXCEPT ALL\n")
    # Each side whole, in parentheses: UNION ALL and EXCEPT ALL bind alike, left to right.
    assert added.endswith(") AS dbt_added") and removed.startswith("SELECT * FROM (")
    assert removed.endswith(") AS dbt_removed")
    assert "c.parquet" in added and "d.parquet" in added and "old.parquet" not in added
    assert "old.parquet" in removed and "del.parquet" in removed and "e.parquet" in removed


def test_a_range_that_added_no_file_is_no_rows_of_the_tables_columns() -> None:
    session, _ = appended(RangePlan(columns=COLUMNS))
    [(sql, _)] = session.sent
    assert sql.endswith("SELECT CAST(NULL AS bigint) AS `id`, CAST(NULL AS int) AS `v` WHERE false")
