"""The embedded catalog's files: a writable warehouse folder and a SQLite file in WAL mode."""

from __future__ import annotations

import os
import sqlite3

from dbt.adapters.s3tables.catalog_config import CatalogConfig
from dbt.adapters.s3tables.credentials import ProfileError


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


def prepare_local_catalog(config: CatalogConfig) -> None:
    """Create the warehouse folder and switch the SQLite catalog file to WAL mode.

    WAL is a property of the file, so setting it once serves the JVM and Python alike.
    """
    check_writable_folder(config.warehouse)
    os.makedirs(config.warehouse, exist_ok=True)
    connection = sqlite3.connect(config.sqlite_path, timeout=config.lock_timeout_seconds)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
    finally:
        connection.close()
