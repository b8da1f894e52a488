"""Which files the watch looks at, and which of them changed.

The watched files are the selected nodes' own files (`original_file_path`) and the YAML
files that describe them (`patch_path`), as `dbt ls` names them, of the root project only
(a package's files are installed by `dbt deps`, not edited). When dbt cannot list the
selection (the project does not parse, or the selection names none of its nodes yet),
every file of the project's source folders is watched instead, so the save that mends it
runs.

A file's stamp is its modification time, size and inode (an editor that saves by writing
a new file and renaming it changes the inode); a file that is gone has none. Reading the
stamps is the only input/output here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

# (modification time in ns, size, inode); None: the file is not there.
Stamp = tuple[int, int, int] | None
Stamps = dict[Path, Stamp]

# What dbt reads of a project: models, tests, seeds, snapshots, macros, docs, the YAML.
PROJECT_SUFFIXES = frozenset({".sql", ".py", ".yml", ".yaml", ".csv", ".md"})


def selected_files(lines: Iterable[str], project_dir: Path, root_package: str) -> frozenset[Path]:
    """The files of the nodes `dbt ls --output json` listed (one JSON object a line, with
    `package_name`, `original_file_path`, `patch_path`) that are the root project's, as
    absolute paths. A `patch_path` reads `<package>://<path>`."""
    files = set()
    for line in lines:
        try:
            node = json.loads(line)
        except ValueError:
            continue  # not a node's line
        if not isinstance(node, dict) or node.get("package_name") != root_package:
            continue
        if node.get("original_file_path"):
            files.add(project_dir / str(node["original_file_path"]))
        package, separator, path = str(node.get("patch_path") or "").partition("://")
        if separator and package == root_package and path:
            files.add(project_dir / path)
    return frozenset(files)


def project_files(sources: Iterable[Path]) -> frozenset[Path]:
    """Every file of the project dbt may read: `sources` are files (dbt_project.yml) and
    folders (the source folders), whose files of PROJECT_SUFFIXES count, hidden folders
    left out. Never a folder dbt writes to (target, logs), whose files change each run."""
    found = set()
    for source in sources:
        if source.is_file():
            found.add(source)
        for folder, folders, names in os.walk(source):
            folders[:] = [name for name in folders if not name.startswith(".")]
            here = Path(folder)
            found.update(here / name for name in names if Path(name).suffix in PROJECT_SUFFIXES)
    return frozenset(found)


def stamp(path: Path) -> Stamp:
    try:
        status = path.stat()
    except OSError:
        return None
    return (status.st_mtime_ns, status.st_size, status.st_ino)


def stamps(paths: Iterable[Path]) -> Stamps:
    return {path: stamp(path) for path in paths}


def changed(before: Mapping[Path, Stamp], now: Mapping[Path, Stamp]) -> list[Path]:
    """The files whose stamp differs (saved, replaced, removed or made again), sorted; a
    file only one side knows is not a change (it joined or left the watched set)."""
    return sorted(path for path in before.keys() & now.keys() if before[path] != now[path])


def carried_over(before: Mapping[Path, Stamp], paths: Iterable[Path]) -> Stamps:
    """The stamps to compare the next reading with, after a run that changed the watched
    set to `paths`: a file watched already keeps the stamp it had when the run started (a
    save during the run is still a change, and runs again), a new one is read now."""
    return {path: before[path] if path in before else stamp(path) for path in paths}
