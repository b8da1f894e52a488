"""`CatalogAccess`: the PyIceberg catalog a profile names, opened once, and every operation
on it run through `call`: retried while the catalog is busy, and a failure a person can
act on turned into one sentence saying what to do.

The relations, table changes and history of `iceberg.IcebergCatalog` all go through it.
"""

from __future__ import annotations

import errno
import importlib
import random
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, TypeVar

from dbt.adapters.events.logging import AdapterLogger
from pyiceberg.exceptions import CommitFailedException, NoSuchTableError

from dbt.adapters.s3tables.catalogs.base import file_io_module
from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.errors import CatalogError

# PyIceberg's catalog and table modules (pydantic, SQLAlchemy, pyarrow: a third of a
# second) are imported where first used, so `dbt parse` and `dbt ls` never load them.
if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table

logger = AdapterLogger("s3tables")

T = TypeVar("T")

LOCK_RETRY_ATTEMPTS = 8
LOCK_RETRY_BASE_SECONDS = 0.05


def is_retryable(config: CatalogConfig, error: BaseException) -> bool:
    """A PyIceberg commit that lost to another writer (each operation reloads the table, so
    it is re-run against the new state), or what the catalog's type says a retry clears
    (a lock; two processes creating the same thing at once)."""
    return isinstance(error, CommitFailedException) or config.kind.is_retryable(error)


def retry_on_lock(
    operation: Callable[[], T],
    what: str,
    retryable: Callable[[BaseException], bool],
    budget_seconds: float | None = None,
) -> T:
    """Run `operation`, retrying a bounded number of times on a `retryable` error, and not
    after `budget_seconds` have passed (the wait a lock is allowed in all).

    The busy timeout already waits for a lock; a retry covers the case SQLite refuses to
    wait for (a read transaction that must upgrade to a write while another writer won).
    """
    started = time.monotonic()
    for attempt in range(LOCK_RETRY_ATTEMPTS):
        try:
            return operation()
        except Exception as error:
            out_of_time = budget_seconds is not None and (
                time.monotonic() - started >= budget_seconds
            )
            if not retryable(error) or attempt == LOCK_RETRY_ATTEMPTS - 1 or out_of_time:
                raise
            delay = LOCK_RETRY_BASE_SECONDS * (2**attempt) * (1 + random.random())
            logger.debug(f"catalog busy ({what}): {error}; retry {attempt + 1} in {delay:.2f} s")
            time.sleep(delay)
    raise AssertionError("unreachable")


def explain_catalog_error(config: CatalogConfig, error: BaseException, what: str) -> str | None:
    """One sentence for a catalog failure a person can act on (None: not one of these)."""
    text = str(getattr(error, "orig", None) or error)
    if is_disk_full(error):
        return (
            f"The disk is full: {what} failed ({text}); nothing was changed, the table is at "
            "its last commit. Fix: free space on the disk holding the warehouse, then rerun"
        )
    explained = config.kind.explain_error(config, error, what)
    if explained is not None:
        return explained
    if isinstance(error, CommitFailedException):
        return (
            f"{what}: other writers kept committing to the table ({text}); nothing was changed. "
            "Fix: rerun when the other job has finished"
        )
    if _is_connection_error(error):
        return (
            f"Cannot reach the Iceberg catalog at {config.catalog_uri} during {what} ({text}). "
            "Fix: check `catalog_uri` (or `region`) in the profile and that the catalog "
            "service is up and reachable from this machine"
        )
    return None


def is_disk_full(error: BaseException) -> bool:
    return (isinstance(error, OSError) and error.errno == errno.ENOSPC) or (
        "No space left on device" in str(error)
    )


def _is_connection_error(error: BaseException) -> bool:
    import requests

    return isinstance(error, (requests.ConnectionError, requests.Timeout, ConnectionError))


class CatalogAccess:
    """Thread-safe PyIceberg access to the catalog a profile names."""

    def __init__(self, config: CatalogConfig, *, recovering: bool = False) -> None:
        self.config = config
        # Recovery opens a new catalog over a warehouse that holds tables, on purpose.
        self.recovering = recovering
        # Set by the connection: removes what a failed write left, says what it did.
        self.after_failed_write: Callable[[float], str | None] | None = None
        # Entered around every catalog operation: the connection manager counts them as
        # running, so a failed write's cleanup never removes the files of one in flight.
        self.operations: AbstractContextManager[object] = nullcontext()
        self._catalog: Catalog | None = None
        self._lock = threading.Lock()

    @property
    def catalog(self) -> Catalog:
        with self._lock:
            if self._catalog is None:
                from pyiceberg.catalog import load_catalog

                properties = self.config.pyiceberg_properties()
                # PyIceberg imports a table's FileIO at its first load, which can land
                # anywhere in a run (pyarrow's takes half a second); import it here.
                importlib.import_module(file_io_module(properties))

                def load() -> Catalog:
                    return self.call(
                        lambda: load_catalog(self.config.name, **properties), "catalog open"
                    )

                self._catalog = self.config.kind.open_catalog(
                    self.config, load, recovering=self.recovering
                )
            return self._catalog

    def call(self, operation: Callable[[], T], what: str) -> T:
        """Run a catalog operation, retried while the catalog is busy; a failure a person
        can act on (locked, unreachable, damaged) becomes one sentence saying what to do."""
        started = time.time()
        try:
            with self.operations:
                return retry_on_lock(
                    operation,
                    what,
                    lambda error: is_retryable(self.config, error),
                    self.config.lock_timeout_seconds,
                )
        except Exception as error:
            explained = explain_catalog_error(self.config, error, what)
            if explained is None:
                raise
            logger.debug(f"catalog error during {what}: {error!r}")
            if is_disk_full(error) and self.after_failed_write:
                note = self.after_failed_write(started)
                explained += f"\n  {note}" if note else ""
            raise CatalogError(explained) from None

    def ensure_initialized(self) -> None:
        """Open the catalog now (for SQLite: create its tables if the file is new)."""
        _ = self.catalog

    def load_table(self, namespace: str, name: str) -> Table:
        """The table, its name matched case-insensitively as Spark resolves names (dbt
        searches lower-cased; a JDBC catalog keeps `MODEL` as written)."""
        try:
            return self.catalog.load_table((namespace, name))
        except NoSuchTableError:
            wanted = name.lower()
            listed = [t[-1] for t in self.catalog.list_tables(namespace)]
            actual = next((t for t in listed if t.lower() == wanted and t != name), None)
            if actual is None:
                raise
            return self.catalog.load_table((namespace, actual))
