"""Planning a keyed read file by file, against stand-ins for Iceberg's Java objects: each
data file's deletes are read by index (py4j ends a Java list's iteration with a Java
exception that PySpark converts at about 25 ms, a second per 40 files), and equality
deletes are found."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from dbt.adapters.s3tables.engines.file_changes import _Reader


class JavaList:
    """A py4j Java list: `size()` and `get(i)`; iterating it is the slow path refused."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items

    def size(self) -> int:
        return len(self.items)

    def get(self, index: int) -> Any:
        return self.items[index]

    def __iter__(self) -> Any:
        raise AssertionError("a Java list was iterated (one Java exception at its end)")


@dataclass
class Content:
    name: str

    def toString(self) -> str:  # noqa: N802 (Java's name)
        return self.name


@dataclass
class DeleteFile:
    path: str
    kind: str = "POSITION_DELETES"
    offset: int | None = None

    def content(self) -> Content:
        return Content(self.kind)

    def contentOffset(self) -> int | None:  # noqa: N802
        return self.offset

    def location(self) -> str:
        return self.path


@dataclass
class DataFile:
    path: str

    def location(self) -> str:
        return self.path


@dataclass
class Task:
    path: str
    delete_files: list[DeleteFile] = field(default_factory=list)

    def file(self) -> DataFile:
        return DataFile(self.path)

    def deletes(self) -> JavaList:
        return JavaList(self.delete_files)


class JavaIterator:
    def __init__(self, items: list[Any]) -> None:
        self.items = list(items)

    def hasNext(self) -> bool:  # noqa: N802
        return bool(self.items)

    def next(self) -> Any:
        return self.items.pop(0)


@dataclass
class Scan:
    tasks: list[Task]
    snapshot: int | None = None
    closed: bool = False

    def useSnapshot(self, snapshot: int) -> Scan:  # noqa: N802
        self.snapshot = snapshot
        return self

    def includeColumnStats(self) -> Scan:  # noqa: N802
        return self

    def planFiles(self) -> Scan:  # noqa: N802
        return self

    def iterator(self) -> JavaIterator:
        return JavaIterator(self.tasks)

    def close(self) -> None:
        self.closed = True


@dataclass
class Table:
    scan: Scan

    def newScan(self) -> Scan:  # noqa: N802
        return self.scan


def reader_of(tasks: list[Task]) -> tuple[_Reader, Scan]:
    reader = _Reader.__new__(_Reader)  # no Spark: only the table's planning is used
    scan = Scan(tasks)
    reader.jtable = Table(scan)
    return reader, scan


def test_each_files_deletes_are_read_by_index_with_their_identities() -> None:
    reader, scan = reader_of(
        [
            Task("s3://w/a.parquet", [DeleteFile("s3://w/a-deletes.parquet")]),
            Task("s3://w/b.parquet", [DeleteFile("s3://w/dv.puffin", "POSITION_DELETES", 4)]),
            Task("s3://w/c.parquet"),
        ]
    )
    files, equality = reader.files_at(7)
    assert (scan.snapshot, scan.closed, equality) == (7, True, False)
    assert {path: file.deletes for path, file in files.items()} == {
        "s3://w/a.parquet": frozenset({("s3://w/a-deletes.parquet", -1)}),
        "s3://w/b.parquet": frozenset({("s3://w/dv.puffin", 4)}),
        "s3://w/c.parquet": frozenset(),
    }


def test_equality_deletes_are_found() -> None:
    reader, _ = reader_of(
        [Task("s3://w/a.parquet", [DeleteFile("s3://w/eq.parquet", "EQUALITY_DELETES")])]
    )
    assert reader.files_at(1)[1] is True


def test_the_planned_files_are_closed_when_planning_fails() -> None:
    reader, scan = reader_of([Task("s3://w/a.parquet")])
    scan.tasks = [None]  # type: ignore[list-item]  # a task that cannot be read
    with pytest.raises(AttributeError):
        reader.files_at(1)
    assert scan.closed
