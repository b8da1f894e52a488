"""The files the watch looks at (the selected nodes' own files and YAML, of the root project,
from `dbt ls`; every source file when dbt cannot list), and which of them changed."""

from __future__ import annotations

import json
import os
from pathlib import Path

from dbt.adapters.s3tables.watch.files import (
    carried_over,
    changed,
    project_files,
    selected_files,
    stamp,
    stamps,
)


def node(package: str, path: str, patch: str | None = None) -> str:
    """One line of `dbt ls --output json --output-keys ...`."""
    return json.dumps(
        {
            "unique_id": f"model.{package}.{Path(path).stem}",
            "package_name": package,
            "original_file_path": path,
            "patch_path": patch,
        }
    )


def test_the_selected_nodes_files_and_their_yaml_are_watched() -> None:
    root = Path("/project")
    lines = [
        node("shop", "models/orders.sql", "shop://models/schema.yml"),
        node("shop", "models/customers.sql", "shop://models/schema.yml"),
        node("shop", "models/new_one.sql"),  # no YAML describes it yet
        # A package's node: its files are installed by `dbt deps`, not edited here.
        node("dbt_utils", "models/helper.sql", "dbt_utils://models/helper.yml"),
        "not json: a line dbt printed",
        json.dumps(["not", "a", "node"]),
    ]
    assert selected_files(lines, root, "shop") == {
        root / "models/orders.sql",
        root / "models/customers.sql",
        root / "models/new_one.sql",
        root / "models/schema.yml",
    }
    assert selected_files([], root, "shop") == frozenset()


def test_every_source_file_of_the_project_when_dbt_cannot_list(tmp_path: Path) -> None:
    for name in (
        "dbt_project.yml",
        "models/a.sql",
        "models/staging/b.py",
        "models/schema.yml",
        "models/docs.md",
        "models/.hidden/c.sql",
        "models/notes.txt",
        "seeds/s.csv",
        "target/compiled/a.sql",  # dbt writes there: never watched
        "logs/dbt.log",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    sources = [tmp_path / "dbt_project.yml", tmp_path / "models", tmp_path / "seeds"]
    sources.append(tmp_path / "macros")  # not there: nothing
    found = {p.relative_to(tmp_path).as_posix() for p in project_files(sources)}
    assert found == {
        "dbt_project.yml",
        "models/a.sql",
        "models/staging/b.py",
        "models/schema.yml",
        "models/docs.md",
        "seeds/s.csv",
    }


def test_a_save_a_replacement_and_a_removal_are_changes(tmp_path: Path) -> None:
    saved, replaced, removed, kept = (tmp_path / n for n in ("a.sql", "b.sql", "c.sql", "d.sql"))
    for path in (saved, replaced, removed, kept):
        path.write_text("select 1")
    before = stamps([saved, replaced, removed, kept])
    saved.write_text("select 2")
    os.utime(saved, ns=(1, 1))  # a different time, whatever the clock's resolution
    # An editor that writes a new file and renames it over the old one.
    (tmp_path / "b.new").write_text("select 1")
    os.replace(tmp_path / "b.new", replaced)
    removed.unlink()
    now = stamps([saved, replaced, removed, kept])
    assert now[removed] is None and stamp(removed) is None
    assert changed(before, now) == [saved, replaced, removed]
    assert changed(now, stamps(now)) == []


def test_a_file_joining_or_leaving_the_watched_set_is_no_change(tmp_path: Path) -> None:
    one, two = tmp_path / "one.sql", tmp_path / "two.sql"
    one.write_text("1")
    two.write_text("2")
    assert changed(stamps([one]), stamps([two])) == []


def test_after_a_run_a_file_keeps_the_stamp_the_run_started_from(tmp_path: Path) -> None:
    watched, new = tmp_path / "watched.sql", tmp_path / "new.sql"
    watched.write_text("select 1")
    at_start = stamps([watched])
    # Saved while the run ran, and a file newly selected by it.
    watched.write_text("select 22")
    new.write_text("select 3")
    after = carried_over(at_start, [watched, new])
    assert after == {watched: at_start[watched], new: stamp(new)}
    # So the next reading sees the save made during the run: it runs again.
    assert changed(after, stamps([watched, new])) == [watched]
