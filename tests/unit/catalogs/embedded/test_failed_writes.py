"""Leftovers of a failed write in the embedded warehouse: found by time and by what no
metadata references, removed only when no other process could own them."""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path

import pyarrow as pa
import pytest

from dbt.adapters.s3tables.catalogs.base import readable_size
from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.embedded.failed_writes import (
    clean_up_failed_write,
    referenced_files,
    remember_leftovers,
    sweep_leftovers,
    unreferenced,
)
from dbt.adapters.s3tables.catalogs.embedded.files import hold_process_lock, local_path
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog


@pytest.mark.parametrize(
    ("location", "path"),
    [
        ("file:/w/a/t/data/x.parquet", "/w/a/t/data/x.parquet"),
        ("file:///w/a/t/data/x.parquet", "/w/a/t/data/x.parquet"),
        ("/w/a//t/data/x.parquet", "/w/a/t/data/x.parquet"),
    ],
)
def test_locations_become_local_paths(location: str, path: str) -> None:
    assert local_path(location) == path


def test_checksum_files_follow_their_data_file() -> None:
    files = [
        Path("/t/data/a.parquet"),
        Path("/t/data/.a.parquet.crc"),
        Path("/t/data/.b.parquet.crc"),
    ]
    assert unreferenced(files, {"/t/data/a.parquet"}) == [Path("/t/data/.b.parquet.crc")]


@pytest.fixture
def table_with_rows(tmp_path: Path) -> tuple[IcebergCatalog, Path]:
    iceberg = IcebergCatalog(
        CatalogConfig(name="local", catalog_type="local", warehouse=str(tmp_path))
    )
    iceberg.create_namespace("analytics")
    rows = pa.table({"id": pa.array([1, 2], pa.int64())})
    table = iceberg.catalog.create_table(("analytics", "orders"), schema=rows.schema)
    table.append(rows)
    return iceberg, tmp_path / "analytics" / "orders"


def test_every_file_of_a_committed_table_is_referenced(table_with_rows) -> None:
    iceberg, folder = table_with_rows
    table = iceberg.load_table("analytics", "orders")
    on_disk = {os.path.normpath(str(p)) for p in folder.rglob("*") if p.is_file()}
    assert on_disk <= referenced_files(table)


def test_a_table_whose_snapshots_hold_no_file_references_its_metadata(tmp_path: Path) -> None:
    # A first build of no rows commits a snapshot without a manifest (PyIceberg 0.12's
    # `inspect.all_files()` fails on it: the cleanup after a failed statement did).
    iceberg = IcebergCatalog(
        CatalogConfig(name="local", catalog_type="local", warehouse=str(tmp_path))
    )
    iceberg.create_namespace("analytics")
    empty = pa.table({"id": pa.array([], pa.int64())})
    table = iceberg.catalog.create_table(("analytics", "orders"), schema=empty.schema)
    table.append(empty)
    table = iceberg.load_table("analytics", "orders")
    assert len(table.snapshots()) == 1
    folder = tmp_path / "analytics" / "orders"
    on_disk = {os.path.normpath(str(p)) for p in folder.rglob("*") if p.is_file()}
    assert on_disk and on_disk <= referenced_files(table)
    write_partial_files(folder)
    assert len(clean_up_failed_write(iceberg, time.time() - 5, None).removed) == 2


def write_partial_files(folder: Path) -> list[Path]:
    (folder / "data").mkdir(exist_ok=True)
    partial = folder / "data" / "00000-7-dead-0-00001.parquet"
    partial.write_bytes(b"PAR1" + b"x" * 1000)
    checksum = folder / "data" / ".00000-7-dead-0-00001.parquet.crc"
    checksum.write_bytes(b"crc")
    return [partial, checksum]


def test_a_failed_writes_partial_files_are_removed(table_with_rows) -> None:
    iceberg, folder = table_with_rows
    started = time.time()
    partial = write_partial_files(folder)
    new_table = folder.parent / "never_committed" / "data"
    new_table.mkdir(parents=True)
    (new_table / "00000-1-x.parquet").write_bytes(b"x" * 10)
    report = clean_up_failed_write(iceberg, started, None)
    assert sorted(report.removed) == sorted([*partial, new_table / "00000-1-x.parquet"])
    assert not any(p.exists() for p in partial)
    assert report.left == []
    assert "KB) were removed" in (report.describe() or "")
    # The committed table is untouched and still reads.
    assert iceberg.load_table("analytics", "orders").scan().to_arrow().num_rows == 2


def test_nothing_is_reported_after_a_failure_that_wrote_nothing(table_with_rows) -> None:
    iceberg, _ = table_with_rows
    report = clean_up_failed_write(iceberg, time.time() + 5, None)
    assert report.describe() is None


def hold_and_wait(warehouse: str, ready, done) -> None:
    hold_process_lock(warehouse)
    ready.set()
    done.wait(30)


def test_files_are_only_reported_while_another_process_works_here(table_with_rows) -> None:
    iceberg, folder = table_with_rows
    context = multiprocessing.get_context("spawn")
    ready, done = context.Event(), context.Event()
    other = context.Process(target=hold_and_wait, args=(iceberg.config.warehouse, ready, done))
    other.start()
    try:
        assert ready.wait(120)
        started = time.time()
        partial = write_partial_files(folder)
        report = clean_up_failed_write(iceberg, started, None)
    finally:
        done.set()
        other.join(30)
    assert sorted(report.left) == sorted(partial) and report.removed == []
    assert all(p.exists() for p in partial)
    message = report.describe() or ""
    assert "another dbt process works on this warehouse" in message
    assert str(partial[0]) in message


def test_a_process_that_ends_while_the_files_are_listed_still_stops_their_removal(
    table_with_rows, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process at work when the listing begins may commit a listed file after its
    table was read, and end before the listing does (seen in a suite: a concurrent first
    build removed the winner's metadata file, its table's current one)."""
    from dbt.adapters.s3tables.catalogs.embedded import failed_writes

    iceberg, folder = table_with_rows
    listed = []  # the other process runs until the files have been listed
    find_leftovers = failed_writes.find_leftovers
    monkeypatch.setattr(
        failed_writes, "find_leftovers", lambda *a: listed.append(1) or find_leftovers(*a)
    )
    monkeypatch.setattr(failed_writes, "other_processes_running", lambda _: not listed)
    started = time.time()
    partial = write_partial_files(folder)
    report = clean_up_failed_write(iceberg, started, None)
    assert report.removed == [] and all(p.exists() for p in partial)
    assert "another dbt process works on this warehouse" in (report.describe() or "")


def test_files_are_only_reported_when_the_caller_says_removal_is_unsafe(table_with_rows) -> None:
    iceberg, folder = table_with_rows
    started = time.time()
    partial = write_partial_files(folder)
    report = clean_up_failed_write(iceberg, started, "other models of this run are writing")
    assert sorted(report.left) == sorted(partial) and all(p.exists() for p in partial)
    assert "other models of this run are writing" in (report.describe() or "")


def test_reported_leftovers_are_swept_by_the_next_process_alone(table_with_rows) -> None:
    iceberg, folder = table_with_rows
    started = time.time()
    partial = write_partial_files(folder)
    report = clean_up_failed_write(iceberg, started, "other models of this run are writing")
    assert sorted(report.left) == sorted(partial)
    swept = sweep_leftovers(iceberg)
    assert sorted(swept.removed) == sorted(partial)
    assert not any(p.exists() for p in partial)
    # Files a table has come to reference meanwhile are kept.
    table_files = {Path(p) for p in referenced_files(iceberg.load_table("analytics", "orders"))}
    remember_leftovers(iceberg.config.warehouse, sorted(table_files))
    assert sweep_leftovers(iceberg).removed == []
    assert all(p.exists() for p in table_files)


def test_size_reads_in_kb_below_a_megabyte() -> None:
    assert readable_size(20_480) == "20.5 KB" and readable_size(8_100_000) == "8.1 MB"


def test_after_a_lost_conflict_files_are_only_listed(table_with_rows) -> None:
    # Another writer's uncommitted files look exactly like the lost attempt's: a
    # conflict proves such a writer is at work, so nothing may be removed then.
    from dbt.adapters.s3tables.catalogs.catalog_set import CatalogSet
    from dbt.adapters.s3tables.catalogs.config import catalog_config_for
    from dbt.adapters.s3tables.connections import clean_up_after_failure
    from dbt.adapters.s3tables.credentials import S3TablesCredentials

    iceberg, folder = table_with_rows
    credentials = S3TablesCredentials.from_dict(
        {"schema": "analytics", "warehouse": iceberg.config.warehouse}
    )
    catalogs = CatalogSet(catalog_config_for(credentials))
    started = time.time()
    partial = write_partial_files(folder)
    note = clean_up_after_failure(credentials, catalogs, started, lost_a_conflict=True) or ""
    assert all(p.exists() for p in partial)
    assert "another writer is committing to this table" in note
    note = clean_up_after_failure(credentials, catalogs, started) or ""
    assert not any(p.exists() for p in partial) and "were removed" in note
