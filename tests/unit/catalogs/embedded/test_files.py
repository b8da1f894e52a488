"""The embedded catalog's files: a new warehouse is told from a lost catalog, a damaged
file is named, folder-name limits are checked, and processes announce themselves."""

from __future__ import annotations

import multiprocessing
import sqlite3
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.embedded.files import (
    CATALOG_MARKER,
    PROCESSES_FOLDER,
    check_catalog_file,
    folder_name_problem,
    hold_process_lock,
    other_processes_running,
)
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.errors import CatalogError, CatalogFileError


def config(warehouse: Path, **kwargs) -> CatalogConfig:
    return CatalogConfig(name="local", catalog_type="local", warehouse=str(warehouse), **kwargs)


def with_table_files(warehouse: Path) -> None:
    metadata = warehouse / "analytics" / "orders" / "metadata"
    metadata.mkdir(parents=True)
    (metadata / "00003-abc.metadata.json").write_text("{}")


def test_a_new_warehouse_needs_no_catalog_yet(tmp_path: Path) -> None:
    check_catalog_file(config(tmp_path / "new"))
    check_catalog_file(config(tmp_path))


@pytest.mark.parametrize("damage", ["delete", "truncate"])
def test_a_lost_catalog_over_table_files_is_refused(tmp_path: Path, damage: str) -> None:
    with_table_files(tmp_path)
    if damage == "truncate":
        (tmp_path / "catalog.db").write_bytes(b"")
    with pytest.raises(CatalogFileError) as raised:
        check_catalog_file(config(tmp_path))
    message = str(raised.value)
    assert str(tmp_path / "catalog.db") in message
    assert "holds 1 tables' files" in message
    assert f"dbt-s3tables-recover {tmp_path}" in message
    assert not (tmp_path / "catalog.db").exists() or damage == "truncate"


def test_a_warehouse_that_had_a_catalog_is_refused_without_table_files(tmp_path: Path) -> None:
    (tmp_path / CATALOG_MARKER).write_text("had one")
    with pytest.raises(CatalogFileError, match="had a catalog"):
        check_catalog_file(config(tmp_path))


def test_a_catalog_file_without_catalog_tables_is_lost(tmp_path: Path) -> None:
    with_table_files(tmp_path)
    sqlite3.connect(tmp_path / "catalog.db").execute(
        "CREATE TABLE other (x int)"
    ).connection.close()
    with pytest.raises(CatalogFileError, match="has no catalog tables"):
        check_catalog_file(config(tmp_path))


def test_a_damaged_catalog_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "catalog.db").write_bytes(b"this is not a database" * 100)
    with pytest.raises(CatalogFileError) as raised:
        check_catalog_file(config(tmp_path))
    assert "cannot be read (file is not a database)" in str(raised.value)
    assert str(tmp_path / "catalog.db") in str(raised.value)


def test_pyiceberg_never_starts_a_fresh_catalog_over_lost_tables(tmp_path: Path) -> None:
    IcebergCatalog(config(tmp_path)).create_namespace("analytics")
    assert (tmp_path / CATALOG_MARKER).exists()
    (tmp_path / "catalog.db").unlink()
    with pytest.raises(CatalogFileError):
        IcebergCatalog(config(tmp_path)).list_namespaces()
    assert not (tmp_path / "catalog.db").exists()


def test_a_locked_catalog_names_catalog_lock_timeout(tmp_path: Path) -> None:
    catalog = IcebergCatalog(config(tmp_path, lock_timeout_seconds=1))
    catalog.create_namespace("analytics")
    holder = sqlite3.connect(tmp_path / "catalog.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(CatalogError) as raised:
            IcebergCatalog(config(tmp_path, lock_timeout_seconds=1)).create_namespace("other")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "`catalog_lock_timeout` (1 s)" in str(raised.value)


def open_catalog(warehouse: str) -> str:
    IcebergCatalog(config(Path(warehouse))).list_namespaces()
    return "ok"


def test_processes_creating_one_new_catalog_at_once_all_succeed(tmp_path: Path) -> None:
    # An executor, not a Pool: a worker that dies fails the test instead of hanging it.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(4, mp_context=context) as pool:
        for round_number in range(3):
            warehouse = str(tmp_path / f"w{round_number}")
            assert list(pool.map(open_catalog, [warehouse] * 4, timeout=120)) == ["ok"] * 4


@pytest.mark.parametrize(("size", "refused"), [(255, False), (256, True)])
def test_folder_names_over_255_bytes_are_refused(size: int, refused: bool) -> None:
    assert (folder_name_problem("x" * size) is not None) == refused


def test_multibyte_names_count_bytes() -> None:
    problem = folder_name_problem("é" * 128)  # 256 bytes
    assert problem is not None and "256 bytes" in problem


def hold_and_wait(warehouse: str, ready, done) -> None:
    hold_process_lock(warehouse)
    ready.set()
    done.wait(30)


def test_a_running_process_is_seen_and_an_ended_one_cleared(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    ready, done = context.Event(), context.Event()
    other = context.Process(target=hold_and_wait, args=(str(tmp_path), ready, done))
    other.start()
    assert ready.wait(120)
    assert other_processes_running(str(tmp_path))
    done.set()
    other.join(30)
    (tmp_path / PROCESSES_FOLDER / "999999.lock").write_text("")  # a killed process's file
    assert not other_processes_running(str(tmp_path))
    assert list((tmp_path / PROCESSES_FOLDER).glob("*.lock")) == []
