"""The two distributions: `dbt-s3tables` (packaging/dbt-s3tables/, what users install) is
`dbt-s3tables-core` (the repository root, the code) on the default Spark line, and each
Spark line jars.py supports has the extra that installs its pyspark; the console commands
the code installs."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 has no tomllib; the dev extra installs tomli there
    import tomli as tomllib

from dbt.adapters.s3tables.__version__ import version
from dbt.adapters.s3tables.catalogs.jars import SCALA_VERSION_BY_SPARK_LINE

ROOT = Path(__file__).resolve().parents[2]
CORE = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
DEFAULT = tomllib.loads((ROOT / "packaging" / "dbt-s3tables" / "pyproject.toml").read_text())[
    "project"
]
# A release of each line around the supported ones.
RELEASES = ["3.4.4", "3.5.0", "3.5.9", "4.0.5", "4.1.0", "4.1.4", "4.2.1", "4.3.0"]


def pyspark_releases(requirements: list[str]) -> list[str]:
    """The releases of RELEASES the pyspark requirement among `requirements` allows."""
    (pyspark,) = [r for r in map(Requirement, requirements) if r.name == "pyspark"]
    assert pyspark.extras == {"connect"}, "the Spark Connect client comes with every line"
    return list(pyspark.specifier.filter(RELEASES, prereleases=False))


def line(release: str) -> str:
    return ".".join(release.split(".")[:2])


def test_dbt_s3tables_is_the_code_on_spark_35_at_the_same_version() -> None:
    assert CORE["name"] == "dbt-s3tables-core" and DEFAULT["name"] == "dbt-s3tables"
    assert DEFAULT["version"] == version
    # pyspark first, and the extra's own: pip reads it before the code's wider range.
    assert DEFAULT["dependencies"] == [
        *CORE["optional-dependencies"]["spark35"],
        f"dbt-s3tables-core[spark35]=={version}",
    ]
    assert DEFAULT["requires-python"] == CORE["requires-python"]


def test_the_code_allows_exactly_the_supported_lines() -> None:
    allowed = pyspark_releases(CORE["dependencies"])
    assert sorted({line(r) for r in allowed}) == sorted(SCALA_VERSION_BY_SPARK_LINE)


@pytest.mark.parametrize("spark_line", sorted(SCALA_VERSION_BY_SPARK_LINE))
def test_each_supported_line_has_its_extra(spark_line: str) -> None:
    extra = CORE["optional-dependencies"][f"spark{spark_line.replace('.', '')}"]
    assert {line(r) for r in pyspark_releases(extra)} == {spark_line}


def test_the_console_commands_are_installed_and_name_a_function() -> None:
    scripts = CORE["scripts"]
    assert set(scripts) == {
        "dbt-s3tables-jars",
        "dbt-s3tables-recover",
        "dbt-s3tables-engine",
        "dbt-s3tables-watch",
    }
    for name, target in scripts.items():
        module, function = target.split(":")
        assert callable(getattr(importlib.import_module(module), function)), name
        # Installed beside the interpreter, as pip installs them for a user.
        assert (Path(sys.executable).parent / name).is_file(), name


@pytest.mark.parametrize("folder", [ROOT, ROOT / "packaging" / "dbt-s3tables"])
def test_each_distribution_carries_its_readme_and_the_license(folder: Path) -> None:
    project = tomllib.loads((folder / "pyproject.toml").read_text())["project"]
    assert (folder / project["readme"]).is_file()
    (license_file,) = project["license-files"]
    # The default distribution's LICENSE is a link to the repository's one file.
    assert (folder / license_file).read_text() == (ROOT / "LICENSE").read_text()
