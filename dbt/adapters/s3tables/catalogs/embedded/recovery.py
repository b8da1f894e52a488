"""Rebuilding a lost embedded catalog from the warehouse's own files (the command is
`recover_command`'s `dbt-s3tables-recover`).

Each folder `<namespace>/<table>/metadata/` holds the table's metadata files; the one
with the highest version number is the table's latest state, with its whole snapshot
history. An unreadable `catalog.db` is moved aside (never deleted), and every table (and
view) missing from the new catalog is registered at its latest metadata file.
"""

from __future__ import annotations

import gzip
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dbt.adapters.s3tables.catalogs.embedded.files import (
    catalog_file_problem,
    local_path,
    table_folders,
)
from dbt.adapters.s3tables.catalogs.embedded.views import register_view
from dbt.adapters.s3tables.errors import CatalogFileError

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog

GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class FoundRelation:
    namespace: str
    name: str
    metadata_file: Path
    is_view: bool
    # Why it cannot be registered (its current snapshot's files are gone), or None.
    problem: str | None = None


def metadata_version(path: Path) -> int:
    """The version number a metadata file name starts with (`00012-<uuid>.metadata.json`);
    -1 for a name without one."""
    prefix = path.name.split("-", 1)[0]
    return int(prefix) if prefix.isdigit() else -1


def latest_metadata_file(folder: Path) -> Path:
    """The table's latest metadata file: highest version number, then newest."""
    files = list((folder / "metadata").glob("*.metadata.json"))
    return max(files, key=lambda p: (metadata_version(p), p.stat().st_mtime))


def find_relations(warehouse: str) -> list[FoundRelation]:
    found = []
    for folder in table_folders(warehouse):
        latest = latest_metadata_file(folder)
        raw = latest.read_bytes()
        if raw[:2] == GZIP_MAGIC:  # `*.gz.metadata.json` (views' metadata)
            raw = gzip.decompress(raw)
        metadata = json.loads(raw)
        is_view = "view-uuid" in metadata
        problem = None if is_view else missing_snapshot_files(metadata)
        found.append(FoundRelation(folder.parent.name, folder.name, latest, is_view, problem))
    return found


def missing_snapshot_files(metadata: dict[str, Any]) -> str | None:
    """Why a table metadata document cannot be read (its current snapshot's manifest list
    is gone: a purged table's older metadata files stay behind), or None."""
    current = metadata.get("current-snapshot-id")
    snapshots = {s["snapshot-id"]: s for s in metadata.get("snapshots") or []}
    if current is None or current == -1 or current not in snapshots:
        return None
    manifest_list = local_path(snapshots[current]["manifest-list"])
    if not os.path.exists(manifest_list):
        return f"its current snapshot's manifest list {manifest_list} is gone (a purged table?)"
    return None


def move_aside_if_unreadable(path: str) -> str | None:
    """Move a damaged or table-less catalog file (and its WAL files) aside; return where."""
    try:
        problem = catalog_file_problem(path)
    except CatalogFileError:
        problem = "unreadable"
    if problem is None or not os.path.exists(path):
        return None
    aside = f"{path}.unreadable-{time.strftime('%Y%m%d-%H%M%S')}"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.replace(path + suffix, aside + suffix)
    return aside


class NamedRelation(Protocol):
    @property
    def namespace(self) -> str: ...

    @property
    def name(self) -> str: ...


class RecoveringCatalog(Protocol):
    """What recovery uses of the adapter's PyIceberg access (`iceberg.IcebergCatalog`,
    which is built on the catalog types and so cannot be named here)."""

    @property
    def catalog(self) -> Catalog: ...

    def list_namespaces(self) -> list[str]: ...

    def list_relations(self, namespace: str) -> Sequence[NamedRelation]: ...

    def create_namespace(self, namespace: str) -> None: ...


def register_missing(
    iceberg: RecoveringCatalog, catalog_name: str, found: list[FoundRelation]
) -> list[FoundRelation]:
    """Register each relation of `found` the catalog lacks (and can be registered) at its
    latest metadata file; returns those registered."""
    catalog = iceberg.catalog  # a new catalog when the file is missing or was moved aside
    registered = []
    namespaces = iceberg.list_namespaces()
    existing = {(r.namespace, r.name) for ns in namespaces for r in iceberg.list_relations(ns)}
    for relation in found:
        if (relation.namespace, relation.name) in existing or relation.problem:
            continue
        iceberg.create_namespace(relation.namespace)
        location = relation.metadata_file.as_uri()
        if relation.is_view:
            # PyIceberg's SQL catalog cannot register views: write the JDBC catalog's row.
            register_view(catalog, catalog_name, relation.namespace, relation.name, location)
        else:
            catalog.register_table((relation.namespace, relation.name), location)
        registered.append(relation)
    return registered
