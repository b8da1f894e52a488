"""The embedded catalog's files: a writable warehouse folder, a SQLite file in WAL mode,
and the check that tells a new warehouse from one whose catalog file was lost.

Iceberg keeps each table's data and metadata files in the warehouse, but only the
catalog file says which metadata file is current. PyIceberg would silently create an
empty catalog in place of a missing one: the tables' history would be orphaned and every
incremental model rebuilt from nothing. So a warehouse that has had a catalog (its
marker file) or that holds table metadata must have a readable catalog with its tables.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import random
import sqlite3
import time
from pathlib import Path
from urllib.parse import urlparse

from dbt.adapters.s3tables.catalogs.description import CatalogDescription
from dbt.adapters.s3tables.errors import CatalogFileError, ProfileError

# The SQLite file of the catalog, in the warehouse folder.
# Written beside the catalog file once the catalog exists: its absence later means the
# warehouse never had one here.
CATALOG_MARKER = ".catalog-created"
CATALOG_TABLE = "iceberg_tables"
RECOVERY_COMMAND = "dbt-s3tables-recover"
# Each process using the warehouse holds a lock on its own file here while it runs.
PROCESSES_FOLDER = ".processes"
# Spark's own (unused) session catalog folder inside the warehouse.
SPARK_SCRATCH = "spark-warehouse"


# The longest file or folder name common file systems allow (ext4, APFS, NTFS: 255).
MAX_FOLDER_NAME_BYTES = 255


def folder_name_problem(name: str) -> str | None:
    """Why `name` cannot be a folder of the warehouse (each namespace and table is one)."""
    size = len(name.encode("utf-8"))
    if size > MAX_FOLDER_NAME_BYTES:
        return (
            f"`{name[:40]}...` is {size} bytes long, and the embedded catalog keeps it as a "
            f"folder whose name can hold at most {MAX_FOLDER_NAME_BYTES} bytes"
        )
    return None


def locked_too_long(config: CatalogDescription, during: str = "") -> str:
    """The sentence for a catalog file another process kept locked past the timeout."""
    when = f" during {during}" if during else ""
    return (
        f"The catalog file {config.sqlite_path} stayed locked by another process for more "
        f"than `catalog_lock_timeout` ({config.lock_timeout_seconds} s){when}; nothing was "
        "changed. Fix: let the other dbt or Spark process finish, or raise "
        "`catalog_lock_timeout` in the profile"
    )


def check_writable_folder(path: str, key: str = "warehouse") -> None:
    """Raise unless `path` exists as a writable folder or can be created; create nothing."""
    probe = path
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if not os.path.isdir(probe):
        raise ProfileError(key, f"`{probe}` is a file, not a folder", "point it at a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ProfileError(
            key,
            f"`{path}` cannot be written (no write permission on `{probe}`)",
            "choose a folder you can write to, or fix its permissions",
        )


def local_path(location: str) -> str:
    """A `file:` URI (or path) as a normalized local path."""
    parsed = urlparse(location)
    return os.path.normpath(parsed.path if parsed.scheme == "file" else location)


def relation_folders(warehouse: str) -> list[Path]:
    """Folders `<namespace>/<table or view>` of the warehouse."""
    root = Path(warehouse)
    if not root.is_dir():
        return []
    namespaces = sorted(
        p for p in root.iterdir() if p.is_dir() and p.name not in (SPARK_SCRATCH, PROCESSES_FOLDER)
    )
    return [
        table for namespace in namespaces for table in sorted(namespace.iterdir()) if table.is_dir()
    ]


def table_folders(warehouse: str) -> list[Path]:
    """Folders `<namespace>/<table>` of the warehouse that hold Iceberg metadata files."""
    return [f for f in relation_folders(warehouse) if any((f / "metadata").glob("*.metadata.json"))]


def catalog_file_problem(path: str) -> str | None:
    """Why the SQLite file at `path` holds no catalog (missing, empty, no catalog tables),
    or None when it does. Raises CatalogFileError when it is not a SQLite database."""
    if not os.path.exists(path):
        return "is missing"
    if os.path.getsize(path) == 0:
        return "is empty (0 bytes)"
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        try:
            names = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        if "locked" in str(error).lower():
            raise
        raise CatalogFileError(
            f"The embedded catalog file {path} cannot be read ({error}): it is damaged or "
            "not a catalog. Nothing was read or written. Fix: restore it from a backup; "
            f"or move it aside and rebuild it from the tables' metadata files with "
            f"`{RECOVERY_COMMAND} {os.path.dirname(path)}`"
        ) from None
    if CATALOG_TABLE not in names:
        return "has no catalog tables"
    return None


def check_catalog_file(config: CatalogDescription) -> None:
    """Raise when this warehouse had a catalog, or holds tables, but its catalog file is
    missing, emptied or unreadable: never start a fresh catalog over lost tables."""
    problem = catalog_file_problem(config.sqlite_path)
    if problem is None:
        return
    had_catalog = os.path.exists(os.path.join(config.warehouse, CATALOG_MARKER))
    tables = table_folders(config.warehouse)
    if not had_catalog and not tables:
        return  # a new warehouse
    held = f"holds {len(tables)} tables' files" if tables else "had a catalog"
    raise CatalogFileError(
        f"The embedded catalog file {config.sqlite_path} {problem}, but the warehouse "
        f"{config.warehouse} {held}: starting a new catalog would orphan them and lose their "
        "history. Nothing was written. Fix: restore catalog.db from a backup; or rebuild "
        f"it by registering each table's latest metadata file with `{RECOVERY_COMMAND} "
        f"{config.warehouse}`; or, to really start afresh, delete the warehouse folder"
    )


def prepare_local_catalog(config: CatalogDescription, check_lost: bool = True) -> None:
    """Check the catalog file, create the warehouse folder and switch the SQLite file to
    WAL mode.

    WAL is a property of the file, so setting it once serves the JVM and Python alike.
    """
    check_writable_folder(config.warehouse)
    if check_lost:
        check_catalog_file(config)
    os.makedirs(config.warehouse, exist_ok=True)
    enable_wal(config)


def enable_wal(config: CatalogDescription) -> None:
    """Switch the catalog file to WAL mode unless it is already. The switch needs the
    file to itself, and SQLite refuses it at once (no busy wait) while another process
    opens the same new catalog: retried within `catalog_lock_timeout`."""
    deadline = time.monotonic() + config.lock_timeout_seconds
    delay = 0.05
    while True:
        connection = sqlite3.connect(config.sqlite_path, timeout=config.lock_timeout_seconds)
        try:
            if connection.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                connection.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error).lower():
                raise
            if time.monotonic() > deadline:
                raise CatalogFileError(locked_too_long(config)) from None
        finally:
            connection.close()
        time.sleep(delay * (1 + random.random()))
        delay = min(delay * 2, 1.0)


def mark_catalog_created(config: CatalogDescription) -> None:
    """Record that this warehouse has a catalog (see `check_catalog_file`)."""
    marker = Path(config.warehouse, CATALOG_MARKER)
    if not marker.exists():
        marker.write_text(f"The Iceberg catalog of this warehouse is {config.sqlite_path}\n")


_held_locks: dict[str, int] = {}


def hold_process_lock(warehouse: str) -> None:
    """Hold, for this process's lifetime, a lock saying it writes to this warehouse with
    Spark (the operating system releases it when the process ends, however it ends)."""
    folder = os.path.join(warehouse, PROCESSES_FOLDER)
    path = os.path.join(folder, f"{os.getpid()}.lock")
    if path in _held_locks:
        return
    os.makedirs(folder, exist_ok=True)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    _held_locks[path] = descriptor
    # A process that ends normally takes its file along; a killed one leaves it unlocked,
    # for `other_processes_running` to remove.
    atexit.register(Path(path).unlink, missing_ok=True)


def other_processes_running(warehouse: str) -> bool:
    """Whether another dbt-s3tables process holds its lock on this warehouse; lock files
    of processes that have ended are removed on the way."""
    folder = Path(warehouse, PROCESSES_FOLDER)
    running = False
    for path in folder.glob("*.lock") if folder.is_dir() else ():
        if str(path) in _held_locks:
            continue
        try:
            descriptor = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            continue
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            running = True
        else:
            path.unlink(missing_ok=True)
        finally:
            os.close(descriptor)
    return running


def is_lock_error(error: BaseException) -> bool:
    """Whether SQLAlchemy's error is SQLite's "database is locked"."""
    from sqlalchemy.exc import OperationalError

    return isinstance(error, OperationalError) and "locked" in str(error).lower()
