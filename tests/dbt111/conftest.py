"""The dbt-core 1.11 install these tests drive: `.venv-dbt111`'s dbt (`make dbt111`).

pytest runs in `.venv` (dbt-core 1.12, the line the whole suite runs on); each dbt 1.11
build is a dbt subprocess of `.venv-dbt111` with its own JVM. `make test` then runs the
conformance classes and the dbt Cloud package's tests with `.venv-dbt111`'s pytest.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.installed_copy import other_install

DBT111_VENV = Path(__file__).resolve().parents[2] / ".venv-dbt111"


@pytest.fixture(scope="session")
def dbt111_dbt() -> Path:
    """`.venv-dbt111`'s dbt, once its dbt-core is 1.11 and its adapter the source tree's."""
    return other_install(DBT111_VENV, "dbt.version", "1.11.", "dbt111")
