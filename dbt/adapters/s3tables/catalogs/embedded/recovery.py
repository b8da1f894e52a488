"""Rebuild a lost embedded catalog from the warehouse's own files.

    dbt-s3tables-recover WAREHOUSE [--catalog NAME] [--dry-run]

Each folder `<namespace>/<table>/metadata/` holds the table's metadata files; the one
with the highest version number is the table's latest state, with its whole snapshot
history. Recovery moves an unreadable `catalog.db` aside (never deletes it), creates a
new catalog and registers every table (and view) at its latest metadata file. A table
dropped without PURGE comes back too: the list printed says what was registered.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import text

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.description import LOCAL_CATALOG_FILE
from dbt.adapters.s3tables.catalogs.embedded.files import (
    catalog_file_problem,
    local_path,
    table_folders,
)
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.keys import DEFAULT_CATALOG_NAME
from dbt.adapters.s3tables.errors import CatalogFileError

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


def recover(warehouse: str, catalog_name: str, dry_run: bool = False) -> list[FoundRelation]:
    """Register every table and view of the warehouse missing from its catalog."""
    warehouse = os.path.abspath(warehouse)
    found = find_relations(warehouse)
    if dry_run:
        return [r for r in found if not r.problem]
    config = CatalogConfig(name=catalog_name, catalog_type="local", warehouse=warehouse)
    aside = move_aside_if_unreadable(config.sqlite_path)
    if aside:
        print(f"moved the unreadable catalog file aside to {aside}")
    iceberg = IcebergCatalog(config, recovering=True)
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
            with catalog.engine.begin() as connection:  # type: ignore[attr-defined]  # a SqlCatalog
                connection.execute(
                    text(
                        "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                        "metadata_location, previous_metadata_location, iceberg_type) "
                        "VALUES (:catalog, :namespace, :name, :location, NULL, 'VIEW')"
                    ),
                    {
                        "catalog": catalog_name,
                        "namespace": relation.namespace,
                        "name": relation.name,
                        "location": location,
                    },
                )
        else:
            catalog.register_table((relation.namespace, relation.name), location)
        registered.append(relation)
    return registered


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dbt-s3tables-recover", description=__doc__)
    parser.add_argument("warehouse", help="the warehouse folder (holds catalog.db)")
    parser.add_argument(
        "--catalog",
        default=DEFAULT_CATALOG_NAME,
        help=f"the profile's `catalog` name (default {DEFAULT_CATALOG_NAME})",
    )
    parser.add_argument("--dry-run", action="store_true", help="list, register nothing")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.warehouse):
        print(f"{args.warehouse} is not a folder", file=sys.stderr)
        return 2
    for relation in find_relations(os.path.abspath(args.warehouse)):
        if relation.problem:
            print(f"skipped {relation.namespace}.{relation.name}: {relation.problem}")
    relations = recover(args.warehouse, args.catalog, args.dry_run)
    verb = "would register" if args.dry_run else "registered"
    for relation in relations:
        kind = "view" if relation.is_view else "table"
        print(f"{verb} {kind} {relation.namespace}.{relation.name} at {relation.metadata_file}")
    where = os.path.join(os.path.abspath(args.warehouse), LOCAL_CATALOG_FILE)
    print(f"{len(relations)} relations {verb} in {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
