"""threads 8 over 30+ models while PyIceberg writes to the same SQLite catalog: no
"database is locked", no lost or duplicated rows."""

from __future__ import annotations

import threading

import pytest
from dbt.tests.util import run_dbt

SCHEMA_GROUPS = ("alpha", "beta", "gamma", "delta")
MODELS_PER_KIND = 8


def model_files() -> dict[str, str]:
    files = {}
    for i in range(MODELS_PER_KIND):
        group = SCHEMA_GROUPS[i % len(SCHEMA_GROUPS)]
        files[f"table_{i}.sql"] = (
            f"{{{{ config(materialized='table', schema='{group}') }}}}\n"
            f"select id, id * {i} as value from {{{{ ref('numbers') }}}}"
        )
        files[f"view_{i}.sql"] = (
            f"{{{{ config(materialized='view', schema='{group}') }}}}\n"
            f"select id, value + 1 as value from {{{{ ref('table_{i}') }}}}"
        )
        files[f"merge_{i}.sql"] = (
            f"{{{{ config(materialized='incremental', unique_key='id', schema='{group}') }}}}\n"
            f"select id, value from {{{{ ref('view_{i}') }}}}"
        )
        files[f"append_{i}.sql"] = (
            f"{{{{ config(materialized='incremental', schema='{group}') }}}}\n"
            f"select id, value from {{{{ ref('table_{i}') }}}}\n"
            "{% if is_incremental() %} where id > (select max(id) from {{ this }}) {% endif %}"
        )
    return files


class TestThreadsEightWhilePyIcebergWrites:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, dbt_profile_target: dict) -> dict:
        return {**dbt_profile_target, "threads": 8}

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"numbers.csv": "id\n" + "\n".join(str(i) for i in range(1, 21)) + "\n"}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return model_files()

    def test_parallel_runs_do_not_lock(self, project) -> None:
        schemas = [f"{project.test_schema}_{group}" for group in SCHEMA_GROUPS]
        project.created_schemas.extend(schemas)
        iceberg = project.adapter.iceberg
        done = threading.Event()
        errors: list[BaseException] = []
        writes = 0

        def write_catalog_from_python() -> None:
            nonlocal writes
            while not done.is_set():
                namespace = f"{project.test_schema}_pywrite"
                try:
                    iceberg.create_namespace(namespace)
                    iceberg.drop_namespace(namespace)
                    writes += 2
                except BaseException as error:  # any failure is the test's finding
                    errors.append(error)
                    return

        writer = threading.Thread(target=write_catalog_from_python)
        writer.start()
        try:
            run_dbt(["seed"])
            first = run_dbt(["run"])
            second = run_dbt(["run"])
        finally:
            done.set()
            writer.join()

        assert not errors, errors
        assert writes > 0
        assert len(first) == 4 * MODELS_PER_KIND
        assert all(r.status == "success" for r in [*first, *second])
        for i in range(MODELS_PER_KIND):
            schema = schemas[i % len(SCHEMA_GROUPS)]
            for kind in ("merge", "append"):
                rows = project.run_sql(
                    f"select count(*), count(distinct id) from {schema}.{kind}_{i}", fetch="one"
                )
                assert tuple(rows) == (20, 20), f"{kind}_{i}: {rows}"
