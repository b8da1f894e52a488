"""Whether a virtualenv's installed copy of the adapter is the source tree's: the tests run
installed copies (`make setup`, `make spark41` install it as a wheel)."""

from __future__ import annotations

import filecmp
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "dbt"
PACKAGES = ("adapters/s3tables", "include/s3tables")


def stale_files(site_packages: Path) -> list[str]:
    """The source files (`dbt/...`) whose copy under `site_packages` differs or is missing."""
    stale = []
    for package in PACKAGES:
        source = SOURCE / package
        for path in source.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                copy = site_packages / "dbt" / package / path.relative_to(source)
                if not copy.is_file() or not filecmp.cmp(path, copy, shallow=False):
                    stale.append(str(path.relative_to(SOURCE.parent)))
    return stale


def summary(stale: list[str]) -> str:
    """The first few stale files, for a message."""
    return ", ".join(stale[:3]) + (" ..." if len(stale) > 3 else "")


def other_install(venv: Path, module: str, version_prefix: str, make_target: str) -> Path:
    """The dbt of `venv`, another install the tests drive (`make <make_target>`), once its
    `module` is at `version_prefix` and its adapter the source tree's; a failure saying
    which `make` target mends it otherwise."""
    import os
    import subprocess

    import pytest

    dbt = venv / "bin" / "dbt"
    if not os.access(dbt, os.X_OK):
        pytest.fail(f"{dbt} is missing: run `make {make_target}`.")
    version = subprocess.run(
        [str(venv / "bin" / "python"), "-c", f"import {module} as m; print(m.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert version.startswith(version_prefix), f"{venv} has {module} {version}"
    [site_packages] = venv.glob("lib/python*/site-packages")
    stale = stale_files(site_packages)
    if stale:
        pytest.fail(
            f"{venv}'s dbt-s3tables differs from the source tree ({summary(stale)}): "
            f"run `make {make_target}` first."
        )
    return dbt
