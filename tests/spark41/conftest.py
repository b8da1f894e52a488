"""The Spark 4.1 install these tests drive: `.venv-spark41`'s dbt (`make spark41`).

pytest runs in `.venv` (Spark 3.5) like the rest of the suite; each Spark 4.1 build is a dbt
subprocess of `.venv-spark41` with its own JVM.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.installed_copy import other_install

SPARK41_VENV = Path(__file__).resolve().parents[2] / ".venv-spark41"


@pytest.fixture(scope="session")
def spark41_dbt() -> Path:
    """`.venv-spark41`'s dbt, once its pyspark is 4.1 and its adapter the source tree's."""
    return other_install(SPARK41_VENV, "pyspark", "4.1.", "spark41")
