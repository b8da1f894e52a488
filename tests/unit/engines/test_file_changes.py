"""Planning a keyed read file by file, against stand-ins for Iceberg's Java objects: each
data file's deletes are read by index (py4j ends a Java list's iteration with a Java
exception that PySpark converts at about 25 ms, a second per 40 files), and equality
deletes are found; then which files the probe for the changed keys' other rows reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from dbt.adapters.s3tables.engines.file_changes import _PRUNING_KEYS, _FileAt, _KeySummary, _Reader


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


# --- which files the probe for changed keys reads (`may_hold`) -------------------------------


@dataclass
class BoundedFile:
    """A data file's key column bounds, as Iceberg's metrics give them (by field id)."""

    lower: int | None
    upper: int | None

    def lowerBounds(self) -> dict[int, int] | None:  # noqa: N802
        return None if self.lower is None else {1: self.lower}

    def upperBounds(self) -> dict[int, int] | None:  # noqa: N802
        return None if self.upper is None else {1: self.upper}


@dataclass
class BoundedTask:
    bounded: BoundedFile

    def file(self) -> BoundedFile:
        return self.bounded


class Conversions:
    @staticmethod
    def fromByteBuffer(field_type: str, value: int) -> int:  # noqa: N802
        return value


class KeyField:
    def fieldId(self) -> int:  # noqa: N802
        return 1

    def type(self) -> str:
        return "long"


class ChangedKeys:
    """The changed keys' DataFrame: `collect()` is a Spark job, counted."""

    def __init__(self, keys: list[int]) -> None:
        self.keys, self.collects = keys, 0

    def collect(self) -> list[tuple[int]]:
        self.collects += 1
        return [(key,) for key in self.keys]


def probed(
    bounds: list[tuple[int | None, int | None]], keys: list[int], count: int, nulls: int = 0
) -> Any:
    """The bounds of the files `may_hold` keeps for `count` changed keys (`nulls` of them
    NULL) spanning `keys` (and all of them when so few), and the keys' fetches."""
    reader = _Reader.__new__(_Reader)  # no Spark: only the bounds and the keys are read
    iceberg = SimpleNamespace(types=SimpleNamespace(Conversions=Conversions))
    reader.jvm = SimpleNamespace(org=SimpleNamespace(apache=SimpleNamespace(iceberg=iceberg)))
    files = [_FileAt(BoundedTask(BoundedFile(*b)), frozenset()) for b in bounds]
    changed = ChangedKeys(keys)
    lowest, highest = (min(keys), max(keys)) if keys else (None, None)
    summary = _KeySummary(count, count - nulls, lowest, highest, 0)
    kept = reader.may_hold(files, KeyField(), changed, summary)  # type: ignore[arg-type]
    return [(f.task.bounded.lower, f.task.bounded.upper) for f in kept], changed.collects


def test_above_the_key_limit_every_file_overlapping_the_span_is_probed() -> None:
    """Many changed keys are pruned by their span: a file whose bounds lie inside it may
    hold one of them, however far its bounds are from the lowest and the highest key."""
    files = [(0, 9), (10, 19), (40, 59), (90, 99), (100, 120)]
    kept, collects = probed(files, [15, 95], count=_PRUNING_KEYS + 1)
    assert kept == [(10, 19), (40, 59), (90, 99)] and collects == 0


def test_up_to_the_key_limit_files_are_pruned_key_by_key() -> None:
    files = [(0, 9), (10, 19), (20, 29), (30, 39), (40, 49), (50, 59), (60, 69)]
    kept, collects = probed(files, [5, 65], count=2)
    assert kept == [(0, 9), (60, 69)] and collects == 1


def test_a_file_without_bounds_is_probed() -> None:
    kept, _ = probed([(None, None), (0, 9), (50, 59)], [55], count=1)
    assert kept == [(None, None), (50, 59)]


def test_every_file_is_probed_when_a_changed_key_is_null() -> None:
    files = [(0, 9), (50, 59)]
    kept, collects = probed(files, [55], count=2, nulls=1)
    assert kept == files and collects == 0


def test_no_file_is_probed_when_no_key_changed() -> None:
    kept, _ = probed([(0, 9)], [], count=0)
    assert kept == []
