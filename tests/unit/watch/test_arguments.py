"""`dbt-s3tables-watch`'s command line: its options and their checks, the project folder
found as dbt finds it, what it reads of dbt_project.yml, and the two dbt commands it runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt.adapters.s3tables.watch.arguments import (
    DEFAULT_INTERVAL,
    LIST_KEYS,
    UsageError,
    WatchArguments,
    find_project_dir,
    parse,
    read_project,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "dbt_project.yml").write_text("name: shop\nprofile: shop\n")
    return tmp_path


def test_the_options_are_dbt_s_and_reach_every_dbt_command(project: Path) -> None:
    arguments = parse(
        [
            "-s",
            "orders+",
            "tag:daily",
            "--exclude",
            "legacy",
            "--profiles-dir",
            "profiles",
            "-t",
            "prod",
            "--vars",
            "{day: 3}",
        ],
        environ={},
        cwd=project,
    )
    common = ["--project-dir", str(project), "--profiles-dir", "profiles"]
    common += ["--target", "prod", "--vars", "{day: 3}"]
    selection = ["--select", "orders+", "tag:daily", "--exclude", "legacy"]
    assert arguments.run_command() == ["run", *selection, *common]
    listing = arguments.list_command()
    assert listing[: len(selection) + 3] == ["ls", *selection, "--resource-type", "model"]
    assert all(option in listing for option in common)
    # Quiet, JSON, and the keys last (dbt's option takes every value up to the next one).
    assert listing[-len(LIST_KEYS) - 1 :] == ["--output-keys", *LIST_KEYS]
    assert ["--log-level", "none"] == listing[listing.index("--log-level") :][:2]
    assert arguments.selection_text() == "-s orders+ tag:daily --exclude legacy"
    assert arguments.interval == DEFAULT_INTERVAL


def test_build_runs_dbt_build_and_lists_every_resource_type(project: Path) -> None:
    arguments = parse(["--select", "orders", "--build"], environ={}, cwd=project)
    assert arguments.run_command()[:3] == ["build", "--select", "orders"]
    assert "--resource-type" not in arguments.list_command()
    # Nothing given is nothing passed: dbt's own defaults and environment apply.
    assert arguments.run_command()[3:] == ["--project-dir", str(project)]


def test_a_selector_is_required() -> None:
    with pytest.raises(SystemExit) as exit:
        parse([], environ={}, cwd=Path("/"))
    assert exit.value.code == 2


def test_the_project_folder_is_found_as_dbt_finds_it(project: Path) -> None:
    inner = project / "models" / "staging"
    inner.mkdir(parents=True)
    # The nearest folder with a dbt_project.yml, from the working folder up.
    assert find_project_dir(None, {}, inner) == project
    # DBT_PROJECT_DIR, relative to the working folder; --project-dir before it.
    assert find_project_dir(None, {"DBT_PROJECT_DIR": ".."}, project / "models") == project
    assert find_project_dir(str(project), {"DBT_PROJECT_DIR": "/nowhere"}, Path("/")) == project


def test_a_folder_without_a_project_is_one_sentence_naming_the_fix(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as refused:
        find_project_dir(str(tmp_path), {}, Path("/"))
    assert str(refused.value) == (
        f"No dbt_project.yml in {tmp_path} (--project-dir): run the watch in your project's "
        "folder, or name it with --project-dir"
    )


@pytest.mark.parametrize("given", ["3", "[a, b]", "{unclosed: "])
def test_vars_must_be_a_yaml_mapping(project: Path, given: str) -> None:
    with pytest.raises(UsageError, match="is not a YAML mapping: give one, e.g. --vars"):
        parse(["-s", "x", "--vars", given], environ={}, cwd=project)


def test_the_interval_must_be_a_duration(project: Path) -> None:
    with pytest.raises(UsageError, match=r"`--interval 0.0` is not a duration"):
        parse(["-s", "x", "--interval", "0"], environ={}, cwd=project)


def test_the_project_s_name_and_source_folders(project: Path) -> None:
    layout = read_project(project)
    assert layout.name == "shop"
    assert [p.relative_to(project).as_posix() for p in layout.sources] == [
        "dbt_project.yml",
        "models",
        "seeds",
        "tests",
        "analyses",
        "macros",
        "snapshots",
    ]
    (project / "dbt_project.yml").write_text("name: shop\nmodel-paths: [src, more]\n")
    assert [p.name for p in read_project(project).sources][1:3] == ["src", "more"]
    # Not a mapping: no name (dbt refuses the project itself), dbt's default folders.
    (project / "dbt_project.yml").write_text("- a list\n")
    assert read_project(project).name == ""


def test_a_watch_without_options_runs_the_selection_in_the_given_project() -> None:
    arguments = WatchArguments(select=("a",), project_dir=Path("/p"))
    assert arguments.run_command() == ["run", "--select", "a", "--project-dir", "/p"]
    assert arguments.verb == "run"
