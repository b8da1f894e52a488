"""`local`: the embedded catalog, a SQLite file in a warehouse folder on this machine.

Spark reaches it through Iceberg's JDBC catalog, PyIceberg through its SQL catalog. Its
files are this machine's to look after: the catalog file is checked before use, each
process announces itself with a lock, and a failed write's leftovers are removed (see
`local_files` and `failed_writes`). PyIceberg's SQL catalog has no views: the type answers
for them from the catalog file's rows (`views`), and says which SQLite errors a retry
clears.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.s3tables.catalogs.base import (
    FSSPEC_FILE_IO,
    PY_IO_IMPL,
    CatalogType,
    Leftovers,
    OpenedCatalog,
    emulator_location_error,
    readable_size,
)
from dbt.adapters.s3tables.catalogs.description import CatalogDescription
from dbt.adapters.s3tables.catalogs.embedded.failed_writes import (
    clean_up_failed_write,
    sweep_leftovers,
)
from dbt.adapters.s3tables.catalogs.embedded.files import (
    RECOVERY_COMMAND,
    SPARK_SCRATCH,
    folder_name_problem,
    hold_process_lock,
    is_lock_error,
    locked_too_long,
    mark_catalog_created,
    prepare_local_catalog,
)
from dbt.adapters.s3tables.catalogs.embedded.views import drop_view, list_views, view_metadata
from dbt.adapters.s3tables.catalogs.jars import SQLITE_JDBC, Artifact
from dbt.adapters.s3tables.catalogs.keys import CatalogKeys
from dbt.adapters.s3tables.errors import ProfileError

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog

logger = AdapterLogger("s3tables")

DEFAULT_WAREHOUSE = "./warehouse"
# SQLite's words for a catalog file it cannot use.
_DAMAGED = re.compile(
    r"not a database|malformed|unable to open|disk I/O error|readonly database|"
    r"no such table: iceberg",
    re.IGNORECASE,
)


def resolve_warehouse(warehouse: str, project_root: str | None) -> str:
    """Absolute warehouse path: relative paths resolve against the dbt project folder."""
    path = os.path.expanduser(warehouse)
    if not os.path.isabs(path):
        path = os.path.join(project_root or os.getcwd(), path)
    return os.path.normpath(path)


class LocalCatalogType(CatalogType):
    name = "local"
    client_writes_metadata = True

    def __init__(self) -> None:
        # Leftovers of earlier failed writes are swept once per process.
        self._swept = False
        self._sweep_lock = threading.Lock()

    def check_profile(self, credentials: CatalogKeys) -> None:
        warehouse = credentials.warehouse
        if warehouse is not None and not str(warehouse).strip():
            raise ProfileError("warehouse", "is empty", f"omit it for `{DEFAULT_WAREHOUSE}`")
        credentials.warehouse = warehouse or DEFAULT_WAREHOUSE
        if credentials.emulator_table_location:
            raise emulator_location_error()

    def resolve_warehouse(self, warehouse: str, project_root: str | None) -> str:
        return resolve_warehouse(warehouse, project_root)

    def spark_settings(self, config: CatalogDescription, prefix: str) -> dict[str, str]:
        busy_ms = config.lock_timeout_seconds * 1000
        return {
            f"{prefix}.type": "jdbc",
            # WAL lets readers and one writer share the file across the JVM and Python;
            # busy_timeout makes a writer wait for the lock instead of failing at once.
            f"{prefix}.uri": (
                f"jdbc:sqlite:{config.sqlite_path}?journal_mode=WAL&busy_timeout={busy_ms}"
            ),
            # V1 schema stores views next to tables (Iceberg views in the JDBC catalog).
            f"{prefix}.jdbc.schema-version": "V1",
            # PyIceberg creates the catalog tables before Spark starts. Iceberg's own
            # creation check leaves a metadata ResultSet open, which pins an old read
            # snapshot on a pooled connection: every later JVM commit after a Python
            # write then fails with SQLITE_BUSY_SNAPSHOT.
            f"{prefix}.jdbc.init-catalog-tables": "false",
            f"{prefix}.warehouse": config.warehouse_uri,
        }

    def jar_artifacts(self, config: CatalogDescription) -> tuple[Artifact, ...]:
        return (*super().jar_artifacts(config), SQLITE_JDBC)

    def pyiceberg_properties(self, config: CatalogDescription) -> dict[str, str]:
        return {
            "type": "sql",
            "uri": f"sqlite:///{config.sqlite_path}?timeout={config.lock_timeout_seconds}",
            "warehouse": config.warehouse_uri,
            "schema_version": "v1",
            # The warehouse is a local folder: fsspec's local files cost 0.1 s to import
            # where PyIceberg's default (pyarrow's, with pyarrow.dataset and pandas) costs
            # 0.5 s, paid by every run, and PyIceberg never scans rows here.
            PY_IO_IMPL: FSSPEC_FILE_IO,
        }

    def location(self, config: CatalogDescription) -> str:
        return config.sqlite_path

    def scratch_dir(self, config: CatalogDescription) -> str:
        return os.path.join(config.warehouse, SPARK_SCRATCH)

    def open_connection(self, iceberg: OpenedCatalog, *, spark_in_process: bool) -> None:
        super().open_connection(iceberg, spark_in_process=spark_in_process)
        if spark_in_process:
            # Other processes must not remove files this one's Spark may be writing.
            hold_process_lock(iceberg.config.warehouse)
            self._sweep_leftovers_once(iceberg)

    def _sweep_leftovers_once(self, iceberg: OpenedCatalog) -> None:
        """Remove what earlier failed writes left while another process worked here."""
        with self._sweep_lock:
            if self._swept:
                return
            self._swept = True
            swept = sweep_leftovers(iceberg)
        if swept.removed:
            logger.info(
                f"removed {len(swept.removed)} files ({readable_size(swept.removed_bytes)}) "
                "that earlier failed writes left while another process worked on the warehouse"
            )

    def open_catalog(
        self, config: CatalogDescription, load: Callable[[], Catalog], *, recovering: bool
    ) -> Catalog:
        prepare_local_catalog(config, check_lost=not recovering)
        catalog = load()
        mark_catalog_created(config)
        return catalog

    def explain_error(
        self, config: CatalogDescription, error: BaseException, what: str
    ) -> str | None:
        if is_lock_error(error):
            return locked_too_long(config, what)
        text = str(getattr(error, "orig", None) or error)
        from sqlalchemy.exc import DatabaseError

        if isinstance(error, DatabaseError) and _DAMAGED.search(text):
            return (
                f"The embedded catalog file {config.sqlite_path} cannot be read during {what} "
                f"({text}); nothing was changed. Fix: restore it from a backup, or move it "
                f"aside and rebuild it with `{RECOVERY_COMMAND} {config.warehouse}`"
            )
        return None

    def is_retryable(self, error: BaseException) -> bool:
        # SQLite's lock, and a creation race: two processes creating a new catalog's
        # tables or a namespace at once (the loser's retry finds it there).
        from sqlalchemy.exc import IntegrityError, OperationalError

        if isinstance(error, IntegrityError):
            return "unique constraint" in str(error).lower()
        return isinstance(error, OperationalError) and (
            is_lock_error(error) or "already exists" in str(error).lower()
        )

    def name_length_problem(self, name: str) -> str | None:
        return folder_name_problem(name)

    def clean_up_failed_write(
        self, iceberg: OpenedCatalog, since: float, unsafe: str | None
    ) -> Leftovers:
        return clean_up_failed_write(iceberg, since, unsafe)

    def list_views(self, config: CatalogDescription, catalog: Catalog, namespace: str) -> list[str]:
        return list_views(config, catalog, namespace)

    def view_metadata(
        self, config: CatalogDescription, catalog: Catalog, namespace: str, name: str
    ) -> dict[str, Any]:
        return view_metadata(config, catalog, namespace, name)

    def drop_view(
        self, config: CatalogDescription, catalog: Catalog, identifier: tuple[str, str]
    ) -> None:
        drop_view(config, catalog, identifier)
