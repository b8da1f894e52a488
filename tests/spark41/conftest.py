"""The Spark 4.1 install these tests drive: `.venv-spark41`'s dbt (`make spark41`).

pytest runs in `.venv` (Spark 3.5) like the rest of the suite; each Spark 4.1 build is a dbt
subprocess of `.venv-spark41` with its own JVM.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.installed_copy import stale_files, summary

SPARK41_VENV = Path(__file__).resolve().parents[2] / ".venv-spark41"


@pytest.fixture(scope="session")
def spark41_dbt() -> Path:
    """`.venv-spark41`'s dbt, once its pyspark is 4.1 and its adapter the source tree's."""
    dbt = SPARK41_VENV / "bin" / "dbt"
    if not os.access(dbt, os.X_OK):
        pytest.fail(f"{dbt} is missing: run `make spark41` (the Spark 4.1 install).")
    version = subprocess.run(
        [str(SPARK41_VENV / "bin" / "python"), "-c", "import pyspark; print(pyspark.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert version.startswith("4.1."), f"{SPARK41_VENV} has pyspark {version}"
    [site_packages] = SPARK41_VENV.glob("lib/python*/site-packages")
    stale = stale_files(site_packages)
    if stale:
        pytest.fail(
            f"{SPARK41_VENV}'s dbt-s3tables differs from the source tree ({summary(stale)}): "
            "run `make spark41` first."
        )
    return dbt
