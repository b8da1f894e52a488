"""Files a failed write left in the embedded catalog's warehouse, and their removal.

Iceberg deletes the files of a failed write itself, except the one a task was writing
when it failed: a full disk leaves a partial data file (tens of MB) that keeps the disk
full. After a failed statement, every file of a table folder written since the statement
began that none of the table's snapshots or metadata references is such a leftover; so
is a new table folder the catalog does not know (a first build that never committed).

Removal is safe only when nothing else can be writing to the warehouse: another model
of the same run (another dbt thread), or another dbt-s3tables process (seen by its lock,
see `local_catalog`), could own an uncommitted file. Then the files are reported with
their paths instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.table import Table

from dbt.adapters.s3tables.iceberg_catalog import IcebergCatalog
from dbt.adapters.s3tables.local_catalog import other_processes_running, relation_folders

# File times are whole seconds on some file systems.
CLOCK_SLACK_SECONDS = 2.0


@dataclass
class Leftovers:
    """What a failed write left: files removed, and files left (with why)."""

    removed: list[Path] = field(default_factory=list)
    removed_bytes: int = 0
    left: list[Path] = field(default_factory=list)
    reason: str = ""

    def describe(self) -> str | None:
        """One sentence for the person running dbt (None when nothing was left)."""
        if self.left:
            shown = ", ".join(str(p) for p in self.left[:5])
            more = f" and {len(self.left) - 5} more" if len(self.left) > 5 else ""
            return (
                f"The failed write left {len(self.left)} files no table references, not "
                f"removed because {self.reason}: {shown}{more}. Delete them once no job "
                "writes to the warehouse."
            )
        if self.removed:
            return (
                f"The {len(self.removed)} files the failed write left "
                f"({self.removed_bytes / 1e6:.1f} MB) were removed."
            )
        return None


def local_path(location: str) -> str:
    """A `file:` URI (or path) as a normalized local path."""
    parsed = urlparse(location)
    return os.path.normpath(parsed.path if parsed.scheme == "file" else location)


def referenced_files(table: Table) -> set[str]:
    """Every file the table's metadata reaches: metadata files, manifest lists,
    manifests, data and delete files of all snapshots."""
    metadata = table.metadata
    paths = {table.metadata_location, *(e.metadata_file for e in metadata.metadata_log)}
    paths.update(s.manifest_list for s in metadata.snapshots)
    if metadata.snapshots:
        paths.update(table.inspect.all_manifests().column("path").to_pylist())
        paths.update(table.inspect.all_files().column("file_path").to_pylist())
    return {local_path(p) for p in paths if p}


def new_files(folder: Path, since: float) -> list[Path]:
    """Files under `folder` changed since `since` (a time.time() value)."""
    found = []
    for root, _, names in os.walk(folder):
        for name in names:
            path = Path(root, name)
            try:
                if path.stat().st_mtime >= since - CLOCK_SLACK_SECONDS:
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


def find_leftovers(iceberg: IcebergCatalog, since: float) -> list[Path]:
    """Files written since `since` into the warehouse that no table references."""
    leftovers: list[Path] = []
    for folder in relation_folders(iceberg.config.warehouse):
        files = new_files(folder, since)
        if not files:
            continue
        try:
            table = iceberg.load_table(folder.parent.name, folder.name)
            referenced = referenced_files(table)
        except NoSuchTableError:
            if iceberg.find_columns(folder.parent.name, folder.name):
                continue  # a view: its files are its metadata
            referenced = set()  # a table no catalog entry ever committed
        leftovers.extend(unreferenced(files, referenced))
    return leftovers


def clean_up_failed_write(iceberg: IcebergCatalog, since: float, unsafe: str | None) -> Leftovers:
    """Remove what a write that failed after `since` left; when the caller knows removal
    is `unsafe` (the reason why), or another process writes here, only list it."""
    files = find_leftovers(iceberg, since)
    if not files:
        return Leftovers()
    if unsafe:
        return Leftovers(left=files, reason=unsafe)
    if other_processes_running(iceberg.config.warehouse):
        return Leftovers(left=files, reason="another dbt process works on this warehouse")
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
