"""`make dist DOCS_URL=...`'s tree (`scripts/dist_tree.py`): the READMEs' relative links
become absolute under DOCS_URL, and both distributions get project URLs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("dist_tree", REPO / "scripts" / "dist_tree.py")
assert _spec is not None and _spec.loader is not None
dist_tree = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dist_tree)

URL = "https://git.example.com/acme/dbt-s3tables/blob/v0.1.0"


def test_relative_links_become_absolute_and_others_stay() -> None:
    readme = (
        "[AWS](docs/aws.md), [jars](docs/engines.md#jars), [the top](#install), "
        "[dbt](https://docs.getdbt.com/) and [mail](mailto:a@b.c)"
    )
    assert dist_tree.absolute_links(readme, ".", URL) == (
        f"[AWS]({URL}/docs/aws.md), [jars]({URL}/docs/engines.md#jars), [the top](#install), "
        "[dbt](https://docs.getdbt.com/) and [mail](mailto:a@b.c)"
    )


def test_a_readme_in_a_folder_links_from_that_folder() -> None:
    assert dist_tree.absolute_links("[up](../../docs/aws.md)", "packaging/dbt-s3tables", URL) == (
        f"[up]({URL}/packaging/dbt-s3tables/../../docs/aws.md)"
    )


def test_project_urls_are_added_once() -> None:
    pyproject = dist_tree.with_urls('[project]\nname = "x"\n', URL + "/")
    assert pyproject.endswith(
        f'[project.urls]\nDocumentation = "{URL}/README.md"\nChangelog = "{URL}/CHANGELOG.md"\n'
    )
    with pytest.raises(SystemExit, match="already has"):
        dist_tree.with_urls(pyproject, URL)
