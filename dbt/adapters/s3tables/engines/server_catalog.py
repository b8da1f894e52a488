"""A Spark server's catalog against the profile's (`method: thrift` and `connect`): the
server writes the tables in the catalog it was started with, and dbt's process reads and
commits their metadata (model state, run branches, records) with the profile's. Two
different catalogs fail later and far from the cause ("Table does not exist" at the first
incremental run), so a server whose default catalog holds its tables in another warehouse
is named in one sentence when dbt first connects to it, with both sides and the fix.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from dbt_common.exceptions import DbtRuntimeError

if TYPE_CHECKING:
    from dbt.adapters.s3tables.catalogs.config import CatalogConfig

# Servers whose catalog matched, by (host, port, profile catalog, its warehouse): checked
# once per dbt process, not per connection (a server's catalogs are fixed where it starts).
_MATCHED: set[tuple[str, int, str, str]] = set()
_LOCK = threading.Lock()


def normalized_warehouse(value: str) -> str:
    """A warehouse as one spelling: a local path with or without `file:`, no trailing `/`."""
    text = value.strip()
    if text.startswith("file:"):
        text = "/" + text[len("file:") :].lstrip("/")
    return text.rstrip("/") or "/"


def check_server_catalog(
    catalog: CatalogConfig,
    address: tuple[str, int],
    server: str,
    setting: Callable[[str], str | None],
) -> None:
    """Refuse a server whose default catalog stores its tables in another warehouse than
    the profile's catalog (`setting`: the server session's value of a key, None if it has
    none). A server that says no warehouse for it cannot be compared, and passes."""
    wanted = catalog.catalog_spark_settings().get(f"spark.sql.catalog.{catalog.name}.warehouse")
    if wanted is None:
        return
    key = (*address, catalog.name, normalized_warehouse(wanted))
    with _LOCK:
        if key in _MATCHED:
            return
    default = setting("spark.sql.defaultCatalog") or "spark_catalog"
    theirs = setting(f"spark.sql.catalog.{default}.warehouse")
    if theirs is not None and normalized_warehouse(theirs) != normalized_warehouse(wanted):
        host, port = address
        raise DbtRuntimeError(
            f"The {server} at {host}:{port} writes its tables in its catalog `{default}`, "
            f"warehouse `{theirs}`, and the profile's catalog `{catalog.name}` is warehouse "
            f"`{wanted}`: dbt would read and commit the tables' metadata in one and the "
            "server write them in the other. Fix: point the profile at the server's "
            "warehouse (`warehouse`, or its `table_bucket_arn`), or start the server on the "
            "profile's"
        )
    with _LOCK:
        _MATCHED.add(key)
