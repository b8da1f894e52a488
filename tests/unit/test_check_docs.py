"""The docs check (`scripts/check_docs.py`, part of `make lint`): a broken link, a link to an
anchor no heading has, and a key the code accepts but no page mentions each fail it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def load_check_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_docs", REPO / "scripts" / "check_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


check_docs = load_check_docs()


def write_docs(root: Path, readme: str, **pages: str) -> list[Path]:
    """README.md and docs/<name>.md pages under `root`; the pages the check reads."""
    (root / "docs").mkdir()
    (root / "README.md").write_text(readme)
    for name, text in pages.items():
        (root / "docs" / f"{name}.md").write_text(text)
    return check_docs.doc_pages(root)


def test_links_to_existing_pages_and_headings_pass(tmp_path: Path) -> None:
    pages = write_docs(
        tmp_path,
        "# Title\n\nSee [engines](docs/engines.md), [jars](docs/engines.md#jars) and "
        "[the title](#title).\n",
        engines="# Engines\n\n## Jars\n\nBack to the [README](../README.md#title).\n",
    )
    assert check_docs.link_problems(pages, tmp_path) == []


def test_a_link_to_a_missing_file_fails(tmp_path: Path) -> None:
    pages = write_docs(tmp_path, "# Title\n\nSee [profile](docs/profile.md).\n")
    problems = check_docs.link_problems(pages, tmp_path)
    assert problems == [
        "README.md:3: link `docs/profile.md`: docs/profile.md does not exist",
    ]


def test_a_link_to_a_missing_anchor_fails(tmp_path: Path) -> None:
    pages = write_docs(
        tmp_path,
        "# Title\n\n[jars](docs/engines.md#jar) and [here](#titel)\n",
        engines="# Engines\n\n## Jars\n",
    )
    problems = check_docs.link_problems(pages, tmp_path)
    assert problems == [
        "README.md:3: link `docs/engines.md#jar`: no heading of docs/engines.md has the "
        "anchor `#jar`",
        "README.md:3: link `#titel`: no heading of README.md has the anchor `#titel`",
    ]


def test_links_and_headings_in_code_do_not_count(tmp_path: Path) -> None:
    readme = (
        "# Title\n\n```yaml\n# dbt_project.yml\n[not a link](nowhere.md)\n```\n\n"
        "`[not a link either](nowhere.md)` and [a heading in code](#dbt_projectyml)\n"
    )
    pages = write_docs(tmp_path, readme)
    assert check_docs.link_problems(pages, tmp_path) == [
        "README.md:8: link `#dbt_projectyml`: no heading of README.md has the anchor "
        "`#dbt_projectyml`",
    ]


def test_a_link_over_two_lines_is_checked_at_its_first_line(tmp_path: Path) -> None:
    pages = write_docs(tmp_path, "# Title\n\nsee [Failure\nbehaviour](docs/failure.md)\n")
    assert check_docs.link_problems(pages, tmp_path) == [
        "README.md:3: link `docs/failure.md`: docs/failure.md does not exist",
    ]


def test_external_links_are_not_checked(tmp_path: Path) -> None:
    pages = write_docs(tmp_path, "[dbt](https://docs.getdbt.com/x#y) [mail](mailto:a@b.c)\n")
    assert check_docs.link_problems(pages, tmp_path) == []


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        (
            "## Write-audit-publish (`audit_before_publish`)",
            "write-audit-publish-audit_before_publish",
        ),
        ("### Several catalogs (catalogs.yml)", "several-catalogs-catalogsyml"),
        ("## Fault soak (`make soak`)", "fault-soak-make-soak"),
        ("## **Bold** and [a link](x.md) ##", "bold-and-a-link"),
        ("## Failure behaviour", "failure-behaviour"),
    ],
)
def test_anchors_are_githubs_slugs(heading: str, anchor: str) -> None:
    assert anchor in check_docs.heading_anchors(heading + "\n")


def test_a_repeated_heading_gets_a_numbered_anchor() -> None:
    anchors = check_docs.heading_anchors("# Setup\n\n## Setup\n\nSetup\n-----\n")
    assert anchors == {"setup", "setup-1", "setup-2"}


def test_an_undocumented_key_fails(tmp_path: Path) -> None:
    pages = write_docs(
        tmp_path,
        "| `warehouse` | the folder |\n",
        incremental="`unique_key` and unique_key_is_unique (not in backticks)\n",
    )
    keys = {
        "profile key": {"warehouse", "catalog_lock_timeout"},
        "model config key": {"unique_key", "unique_key_is_unique"},
    }
    assert check_docs.key_problems(pages, keys) == [
        "profile key `catalog_lock_timeout` is not mentioned (as `catalog_lock_timeout`) in "
        "README.md or docs/",
        "model config key `unique_key_is_unique` is not mentioned (as `unique_key_is_unique`) "
        "in README.md or docs/",
    ]


def test_the_accepted_keys_come_from_the_code() -> None:
    keys = check_docs.accepted_keys()
    assert {"unique_key", "audit_before_publish", "maintenance"} <= keys["model config key"]
    # Declared by the profile class itself, not dbt-spark's inherited keys.
    assert {"warehouse", "spark_conf", "class_data_sharing"} <= keys["profile key"]
    assert not {"host", "schema", "connect_timeout"} & keys["profile key"]
    assert {"table_bucket_arn", "catalog_uri", "emulator_table_location"} <= keys["catalog key"]


def test_main_prints_each_problem_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_docs(tmp_path, "[gone](docs/gone.md)\n")
    assert check_docs.main([str(tmp_path)]) == 1
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "README.md:1: link `docs/gone.md`: docs/gone.md does not exist"
    assert "profile key `warehouse` is not mentioned (as `warehouse`) in README.md or docs/" in (
        printed
    )


def test_the_repository_docs_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_docs.main([str(REPO)]) == 0, capsys.readouterr().out


def code_tree(root: Path, page: str) -> list[Path]:
    """A repository of one docs page, with a Makefile, a pyproject and one macro."""
    (root / "docs").mkdir(parents=True)
    (root / "dbt" / "include" / "x" / "macros").mkdir(parents=True)
    (root / "dbt" / "include" / "x" / "macros" / "m.sql").write_text(
        "{% macro s3tables_maintain() %}{% endmacro %}"
    )
    (root / "Makefile").write_text("VENV := .venv\ntest: lint\n\tpytest\nlint:\n\truff\n")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "dbt-s3tables-core"\n[project.scripts]\ndbt-s3tables-jars = "x:main"\n'
    )
    (root / "docs" / "profile.md").write_text(page)
    return [root / "docs" / "profile.md"]


def test_what_the_docs_name_must_exist_in_the_code(tmp_path: Path) -> None:
    page = (
        "| `schema` | | ok |\n| `warehous` | | a typo |\n"
        "`dbt run-operation s3tables_maintain` and `dbt run-operation s3tables_vacuum`\n"
        "`make test`, `make demo`, `dbt-s3tables-jars`, `dbt-s3tables-core`, "
        "`dbt-s3tables-engine`\n"
        "`iceberg-aws-bundle:1.12.0` and `iceberg-spark-runtime-3.5_2.12:1.10.1`\n"
        "as issue 27 said\n"
    )
    pages = code_tree(tmp_path, page)
    problems = check_docs.code_problems(pages, tmp_path, {"schema"}, "1.12.0")
    assert problems == [
        "docs/profile.md: profile key `warehous` is not a profile key",
        "docs/profile.md: `run-operation s3tables_vacuum` names no macro of the adapter",
        "docs/profile.md: `make demo` is no target of the Makefile",
        "docs/profile.md: `dbt-s3tables-engine` is no command the adapter installs",
        "docs/profile.md: `iceberg-spark-runtime-3.5_2.12:1.10.1` disagrees with the pinned "
        "Iceberg 1.12.0",
        "docs/profile.md:6: development-log words: `issue 27`",
    ]


def test_what_the_code_offers_must_be_named_in_the_docs(tmp_path: Path) -> None:
    pages = code_tree(tmp_path, "`dbt run-operation s3tables_maintain`\n")
    macros = tmp_path / "dbt" / "include" / "x" / "macros"
    (macros / "maintenance.sql").write_text(
        "{% macro s3tables_maintain() %}{% endmacro %}\n"
        "{% macro s3tables_rollback() %}{% endmacro %}\n"
        "{% macro s3tables__dispatched() %}{% endmacro %}\n"
    )
    (macros / "build_steps.sql").write_text("{% macro s3tables_pre_hooks() %}{% endmacro %}")
    assert check_docs.undocumented_problems(pages, tmp_path) == [
        "operation `s3tables_rollback` (maintenance.sql) is named after `dbt run-operation` "
        "on no page",
        "command `dbt-s3tables-jars` is mentioned on no page",
    ]


def test_a_version_outside_the_pins_fails(tmp_path: Path) -> None:
    pages = write_docs(
        tmp_path,
        "Python 3.10+, PySpark 3.5 or pyspark 4.1.x, dbt-core 1.11, PyIceberg 0.12.\n"
        "pyspark 3.6 and pyspark 4.0 are not lines; dbt-core 1.12, `dbt-tests-adapter` 1.21.\n"
        "Figures are no versions: pyspark 318 MB, PyIceberg 0.55 s, cold/dbt-spark 0.56.\n"
        "```\npip install pyspark==9.9\n```\n",
    )
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\nrequires-python = ">=3.10"\n'
        'dependencies = ["dbt-core>=1.11,<1.12", "pyspark>=3.5,!=4.0.*,<4.2",'
        ' "pyiceberg>=0.12,<0.13"]\n'
        "[project.optional-dependencies]\n"
        'spark35 = ["pyspark>=3.5,<3.6"]\nspark41 = ["pyspark>=4.1,<4.2"]\n'
        'dev = ["dbt-tests-adapter>=1.11,<1.21"]\n'
    )
    problems = check_docs.pin_problems(pages, tmp_path, tmp_path / "pyproject.toml")
    assert problems == [
        "README.md:2: `pyspark 3.6` is outside the requirement !=4.0.*,<4.2,>=3.5 and "
        "<3.6,>=3.5 and <4.2,>=4.1",
        "README.md:2: `pyspark 4.0` is outside the requirement !=4.0.*,<4.2,>=3.5 and "
        "<3.6,>=3.5 and <4.2,>=4.1",
        "README.md:2: `dbt-core 1.12` is outside the requirement <1.12,>=1.11",
        "README.md:2: `dbt-tests-adapter 1.21` is outside the requirement <1.21,>=1.11",
    ]
