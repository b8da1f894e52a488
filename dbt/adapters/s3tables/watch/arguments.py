"""The watch's command line, and the dbt commands it runs in process:

    dbt-s3tables-watch -s SELECTOR [SELECTOR ...] [--exclude SELECTOR ...] [--build]
        [--project-dir DIR] [--profiles-dir DIR] [-t TARGET] [--vars YAML]
        [--interval SECONDS]

What this module owns: the arguments and their checks, the project folder (found as dbt
finds it, then given to every dbt command, so the watch and dbt read the same project),
and the argument lists of the two dbt commands: `run` (or `build`) of the selection, and
the `ls` that names the selected nodes' files. Nothing here runs anything.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from dbt.clients.yaml_helper import load_yaml_text
from dbt_common.exceptions import DbtValidationError

COMMAND = "dbt-s3tables-watch"
# How often the watched files' modification times are read.
DEFAULT_INTERVAL = 0.2
PROJECT_FILE = "dbt_project.yml"
# What `dbt ls` reports of each selected node: where its file and its YAML are, and
# whose they are (only the root project's files are watched).
LIST_KEYS = ("unique_id", "package_name", "original_file_path", "patch_path")

DESCRIPTION = """\
Run `dbt run -s SELECTOR` (or `dbt build` with --build) each time a selected node's file,
or the YAML file that describes it, is saved. One process keeps dbt's imports, its partial
parse, the catalog libraries and Spark (`method: session`) warm between runs; with a
`thrift` or `connect` profile the server runs the SQL, as with dbt. It runs once at start,
then watches the files `dbt ls` names for the selection (again after each run, so a
newly selected file is watched). A failed run is one line, and the watch goes on.
It listens on no port. Ctrl-C (or SIGTERM) stops it, and Spark with it; exit code 0.
The options after -s are dbt's, passed to every dbt command it runs."""


class UsageError(Exception):
    """Arguments that cannot work: one sentence naming the option and the fix."""


@dataclass(frozen=True)
class WatchArguments:
    """What the command line asks for, checked, with the project folder resolved."""

    select: tuple[str, ...]
    exclude: tuple[str, ...] = ()
    build: bool = False
    project_dir: Path = Path(".")
    profiles_dir: str | None = None
    target: str | None = None
    vars: str | None = None
    interval: float = DEFAULT_INTERVAL

    @property
    def verb(self) -> str:
        return "build" if self.build else "run"

    def selection_text(self) -> str:
        """`-s a b --exclude c`, as the user typed it, for the watch's lines."""
        text = f"-s {' '.join(self.select)}"
        return f"{text} --exclude {' '.join(self.exclude)}" if self.exclude else text

    def _selection(self) -> list[str]:
        arguments = ["--select", *self.select]
        return arguments + (["--exclude", *self.exclude] if self.exclude else [])

    def _common(self) -> list[str]:
        """The options every dbt command of the watch takes: dbt's, as given."""
        arguments = ["--project-dir", str(self.project_dir)]
        if self.profiles_dir is not None:
            arguments += ["--profiles-dir", self.profiles_dir]
        if self.target is not None:
            arguments += ["--target", self.target]
        if self.vars is not None:
            arguments += ["--vars", self.vars]
        return arguments

    def run_command(self) -> list[str]:
        """`dbt run` (or `build`) of the selection."""
        return [self.verb, *self._selection(), *self._common()]

    def list_command(self) -> list[str]:
        """`dbt ls` of what the run runs (for `run`: its models), as JSON lines of
        LIST_KEYS, printing nothing (its output is the watch's, not the user's)."""
        kinds = [] if self.build else ["--resource-type", "model"]
        return [
            "ls",
            *self._selection(),
            *kinds,
            *self._common(),
            "--log-level",
            "none",
            "--output",
            "json",
            # Last: dbt's option takes every value up to the next option.
            "--output-keys",
            *LIST_KEYS,
        ]


def parser() -> argparse.ArgumentParser:
    command = argparse.ArgumentParser(
        prog=COMMAND, description=DESCRIPTION, formatter_class=argparse.RawTextHelpFormatter
    )
    command.add_argument(
        "-s",
        "--select",
        nargs="+",
        required=True,
        metavar="SELECTOR",
        help="the nodes to run, as dbt's --select takes them",
    )
    command.add_argument("--exclude", nargs="+", default=[], metavar="SELECTOR")
    command.add_argument(
        "--build", action="store_true", help="run `dbt build` (models, tests, seeds, snapshots)"
    )
    command.add_argument("--project-dir", metavar="DIR")
    command.add_argument("--profiles-dir", metavar="DIR")
    command.add_argument("-t", "--target", metavar="TARGET")
    command.add_argument("--vars", metavar="YAML", help="dbt's --vars, a YAML mapping")
    command.add_argument(
        "--interval",
        type=float,
        default=DEFAULT_INTERVAL,
        metavar="SECONDS",
        help=f"how often the files are looked at (default {DEFAULT_INTERVAL})",
    )
    return command


def find_project_dir(given: str | None, environ: Mapping[str, str], cwd: Path) -> Path:
    """The project folder as dbt finds it: --project-dir, else DBT_PROJECT_DIR, else the
    nearest of the working folder and its parents with a dbt_project.yml."""
    chosen = given or environ.get("DBT_PROJECT_DIR")
    if chosen:
        folder = (cwd / chosen).resolve()
        where = "--project-dir" if given else "DBT_PROJECT_DIR"
    else:
        folder = next((p for p in (cwd, *cwd.parents) if (p / PROJECT_FILE).is_file()), cwd)
        where = "the working folder or its parents"
    if not (folder / PROJECT_FILE).is_file():
        raise UsageError(
            f"No {PROJECT_FILE} in {folder} ({where}): run the watch in your project's "
            "folder, or name it with --project-dir"
        )
    return folder


def check_vars(text: str | None) -> None:
    """`--vars` must be a YAML mapping, as dbt requires (checked once here: no save could
    mend it)."""
    if text is None:
        return
    try:
        value = load_yaml_text(text)
    except DbtValidationError:
        value = None
    if not isinstance(value, dict):
        raise UsageError(
            f"`--vars {text}` is not a YAML mapping: give one, e.g. --vars '{{key: value}}'"
        )


def parse(
    argv: Sequence[str] | None, environ: Mapping[str, str] = os.environ, cwd: Path | None = None
) -> WatchArguments:
    """The checked arguments (argparse exits on a malformed command line; UsageError for
    arguments that parse but cannot work)."""
    given = parser().parse_args(argv)
    if not given.interval > 0:
        raise UsageError(f"`--interval {given.interval}` is not a duration: give seconds above 0")
    check_vars(given.vars)
    return WatchArguments(
        select=tuple(given.select),
        exclude=tuple(given.exclude),
        build=given.build,
        project_dir=find_project_dir(given.project_dir, environ, cwd or Path.cwd()),
        profiles_dir=given.profiles_dir,
        target=given.target,
        vars=given.vars,
        interval=given.interval,
    )


# dbt_project.yml's keys of the folders dbt reads sources from, and their defaults.
SOURCE_FOLDER_KEYS = {
    "model-paths": ["models"],
    "seed-paths": ["seeds"],
    "test-paths": ["tests"],
    "analysis-paths": ["analyses"],
    "macro-paths": ["macros"],
    "snapshot-paths": ["snapshots"],
}


@dataclass(frozen=True)
class ProjectLayout:
    """What the watch reads of dbt_project.yml: the root project's name (its nodes' files
    are watched, a package's are not), and its sources: dbt_project.yml and the folders
    dbt reads models, seeds, tests, analyses, macros and snapshots from."""

    name: str
    sources: tuple[Path, ...]


def read_project(project_dir: Path) -> ProjectLayout:
    """The project's name and sources, as its dbt_project.yml gives them (dbt's
    defaults for a folder key it leaves out; no name when it gives none: dbt itself then
    refuses the project)."""
    try:
        project = load_yaml_text((project_dir / PROJECT_FILE).read_text())
    except (OSError, DbtValidationError):
        project = None
    if not isinstance(project, dict):  # empty, or not a mapping: dbt refuses it itself
        project = {}
    name = project.get("name")
    sources = [project_dir / PROJECT_FILE]
    for key, default in SOURCE_FOLDER_KEYS.items():
        given = project.get(key)
        paths = given if isinstance(given, list) else default
        sources += [project_dir / str(path) for path in paths]
    return ProjectLayout(name if isinstance(name, str) else "", tuple(sources))
