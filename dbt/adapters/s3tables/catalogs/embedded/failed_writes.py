"""Files a failed write left in the embedded catalog's warehouse, and their removal.

Iceberg deletes the files of a failed write itself, except the one a task was writing
when it failed: a full disk leaves a partial data file (tens of MB) that keeps the disk
full. After a failed statement, every file of a table folder written since the statement
began that none of the table's snapshots or metadata references is such a leftover; so
is a new table folder the catalog does not know (a first build that never committed).

Removal is safe only when nothing else can be writing to the warehouse: another model
of the same run (another dbt thread), or another dbt-s3tables process (seen by its lock,
see `local_files`), could own an uncommitted file. Then the files are reported with
their paths instead, and listed in the warehouse: the next process that finds itself
alone on the warehouse removes those that no table has come to reference meanwhile.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from dbt.adapters.s3tables.catalogs.base import Leftovers, OpenedCatalog
from dbt.adapters.s3tables.catalogs.embedded.files import (
    PROCESSES_FOLDER,
    local_path,
    other_processes_running,
    relation_folders,
)

if TYPE_CHECKING:
    from pyiceberg.table import Table

# File times come from the kernel's coarse clock, a few milliseconds behind time.time().
COARSE_CLOCK_SECONDS = 0.1
# Under PROCESSES_FOLDER: leftovers reported but not removed, one path per line.
PENDING_FILE = "leftovers.txt"


def referenced_files(table: Table) -> set[str]:
    """Every file the table's metadata reaches: metadata files, manifest lists,
    manifests, data and delete files of all snapshots."""
    metadata = table.metadata
    paths = {table.metadata_location, *(e.metadata_file for e in metadata.metadata_log)}
    paths.update(s.manifest_list for s in metadata.snapshots)
    if metadata.snapshots:
        manifests = table.inspect.all_manifests().column("path").to_pylist()
        paths.update(manifests)
        # PyIceberg 0.12's all_files() fails on snapshots without any manifest (a first
        # build of no rows, empty appends): they reference no data file.
        if manifests:
            paths.update(table.inspect.all_files().column("file_path").to_pylist())
    return {local_path(p) for p in paths if p}


def new_files(folder: Path, since: float) -> list[Path]:
    """Files under `folder` changed since `since` (a time.time() value)."""
    found = []
    for root, _, names in os.walk(folder):
        for name in names:
            path = Path(root, name)
            try:
                # Only what changed since the statement began (less the file system
                # clock's coarseness): other statements' files are not taken.
                if path.stat().st_mtime >= since - COARSE_CLOCK_SECONDS:
                    found.append(path)
            except FileNotFoundError:
                continue
    return found


def unreferenced(files: list[Path], referenced: set[str]) -> list[Path]:
    """The files no metadata references; a Hadoop checksum file `.<name>.crc` goes with
    its file."""

    def owner(path: Path) -> str:
        name = path.name
        if name.startswith(".") and name.endswith(".crc"):
            name = name[1:-4]
        return os.path.normpath(str(path.with_name(name)))

    return [p for p in files if owner(p) not in referenced]


def find_leftovers(iceberg: OpenedCatalog, since: float) -> list[Path]:
    """Files written since `since` into the warehouse that no table references."""
    leftovers: list[Path] = []
    for folder in relation_folders(iceberg.config.warehouse):
        files = new_files(folder, since)
        if not files:
            continue
        referenced = referenced_in(iceberg, folder)
        if referenced is not None:
            leftovers.extend(unreferenced(files, referenced))
    return leftovers


def referenced_in(iceberg: OpenedCatalog, folder: Path) -> set[str] | None:
    """The files the table of `folder` references: none for a table no catalog entry
    ever committed; None for a view (its files are its metadata, left alone)."""
    from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

    try:
        return referenced_files(iceberg.load_table(folder.parent.name, folder.name))
    except (NoSuchTableError, NoSuchNamespaceError):
        if iceberg.find_columns(folder.parent.name, folder.name):
            return None
        return set()


def clean_up_failed_write(iceberg: OpenedCatalog, since: float, unsafe: str | None) -> Leftovers:
    """Remove what a write that failed after `since` left; when the caller knows removal
    is `unsafe` (the reason why), or another process writes here, only list it."""
    # Asked before the files are listed and their tables read, and again after: a process
    # that ended in between may have committed, after the read, a file listed here.
    running = other_processes_running(iceberg.config.warehouse)
    files = find_leftovers(iceberg, since)
    if not files:
        return Leftovers()
    if not unsafe and (running or other_processes_running(iceberg.config.warehouse)):
        unsafe = "another dbt process works on this warehouse"
    if unsafe:
        remember_leftovers(iceberg.config.warehouse, files)
        return Leftovers(left=files, reason=unsafe)
    report = Leftovers()
    for path in files:
        try:
            size = path.stat().st_size
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as error:
            report.left.append(path)
            report.reason = f"they could not be deleted ({error.strerror})"
        else:
            report.removed.append(path)
            report.removed_bytes += size
    return report


def remember_leftovers(warehouse: str, files: list[Path]) -> None:
    """List files a failed write left but could not remove, for `sweep_leftovers`."""
    folder = Path(warehouse, PROCESSES_FOLDER)
    folder.mkdir(exist_ok=True)
    with open(folder / PENDING_FILE, "a", encoding="utf-8") as listing:
        listing.writelines(f"{path}\n" for path in files)


def sweep_leftovers(iceberg: OpenedCatalog) -> Leftovers:
    """Remove the listed leftovers of earlier failed writes that no table references,
    when this process is alone on the warehouse (nothing else can be committing them);
    otherwise keep the list for later."""
    warehouse = Path(iceberg.config.warehouse)
    listing = warehouse / PROCESSES_FOLDER / PENDING_FILE
    if not listing.exists() or other_processes_running(str(warehouse)):
        return Leftovers()
    paths = {Path(line) for line in listing.read_text(encoding="utf-8").splitlines() if line}
    report = Leftovers()
    by_folder: dict[Path, list[Path]] = {}
    for path in paths:
        if path.exists() and path.is_relative_to(warehouse):
            folder = warehouse.joinpath(*path.relative_to(warehouse).parts[:2])
            by_folder.setdefault(folder, []).append(path)
    for folder, files in by_folder.items():
        referenced = referenced_in(iceberg, folder)
        for path in unreferenced(files, referenced) if referenced is not None else []:
            size = path.stat().st_size
            path.unlink()
            report.removed.append(path)
            report.removed_bytes += size
    listing.unlink()
    return report
