"""Rebuild a lost embedded catalog from the warehouse's own files.

    dbt-s3tables-recover WAREHOUSE [--catalog NAME] [--dry-run]

Each folder `<namespace>/<table>/metadata/` holds the table's metadata files; the one
with the highest version number is the table's latest state, with its whole snapshot
history. Recovery moves an unreadable `catalog.db` aside (never deletes it), creates a
new catalog and registers every table (and view) at its latest metadata file. A table
dropped without PURGE comes back too: the list printed says what was registered.
"""

# The command sits above `iceberg`: it opens the catalog through IcebergCatalog, and the
# embedded catalog's recovery (`embedded.recovery`) sits below it.

from __future__ import annotations

import argparse
import os
import sys

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.description import LOCAL_CATALOG_FILE
from dbt.adapters.s3tables.catalogs.embedded.recovery import (
    FoundRelation,
    find_relations,
    move_aside_if_unreadable,
    register_missing,
)
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.keys import DEFAULT_CATALOG_NAME


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
    return register_missing(IcebergCatalog(config, recovering=True), catalog_name, found)


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
