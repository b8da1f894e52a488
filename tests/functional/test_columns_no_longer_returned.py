"""A column the model stops returning, on every strategy that keeps existing rows: the
table keeps the column (this adapter never drops one) and what each strategy does with
its values is exactly what the "Schema evolution" section of docs/incremental.md says.

Run 1 returns `(id, v, legacy)`; run 2 returns `(id, v)` only.
"""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

from tests.functional.harness import (
    batch_model,
    query_rows,
    relation,
    run_vars,
)

RUNS = {
    1: "select * from values (1, 'a', 'L1'), (2, 'b', 'L2') as t(id, v, legacy)",
    # Row 2 comes back unchanged (it matters to scd2, which must not see a change).
    2: "select * from values (1, 'a2'), (2, 'b'), (3, 'c') as t(id, v)",
}
MERGE = "materialized='incremental', incremental_strategy='merge', unique_key='id'"

MODELS = {
    "merge_append_new_columns": f"{MERGE}, on_schema_change='append_new_columns'",
    "merge_sync_all_columns": f"{MERGE}, on_schema_change='sync_all_columns'",
    "merge_ignore": f"{MERGE}, on_schema_change='ignore'",
    "merge_without_merge_into": f"{MERGE}, on_schema_change='append_new_columns', use_merge=false",
    "merge_excluding": f"{MERGE}, on_schema_change='append_new_columns', "
    "merge_exclude_columns=['v']",
    "merge_audited": f"{MERGE}, on_schema_change='append_new_columns', audit_before_publish=true",
    "delete_insert": "materialized='incremental', incremental_strategy='delete+insert', "
    "unique_key='id', on_schema_change='append_new_columns'",
    "scd2": "materialized='incremental', incremental_strategy='scd2', unique_key='id', "
    "on_schema_change='append_new_columns'",
}

SCHEMA_YML = """
version: 2
models:
  - name: merge_audited
    columns:
      - name: id
        data_tests: [not_null]
"""

# Matched rows keep `legacy`, new rows get NULL.
KEPT = [(1, "a2", "L1"), (2, "b", "L2"), (3, "c", None)]


class TestColumnNoLongerReturned:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        files = {f"{name}.sql": batch_model(config, RUNS) for name, config in MODELS.items()}
        return {**files, "schema.yml": SCHEMA_YML}

    def test_each_strategy_does_what_the_readme_says(self, project) -> None:
        for batch in (1, 2):
            results = run_dbt(["build", *run_vars(batch=batch)])
            assert len(results) == len(MODELS) + 1

        def rows(name: str, columns: str = "id, v, legacy") -> list[tuple]:
            return query_rows(project, f"select {columns} from {relation(project, name)}")

        for name in (
            "merge_append_new_columns",
            "merge_sync_all_columns",
            "merge_ignore",
            "merge_without_merge_into",
            "merge_audited",
        ):
            assert rows(name) == KEPT, name
        # `v` excluded from the update: matched rows keep both.
        assert rows("merge_excluding") == [(1, "a", "L1"), (2, "b", "L2"), (3, "c", None)]
        # delete+insert replaces a key's rows with the model's: no value to keep.
        assert rows("delete_insert") == [(1, "a2", None), (2, "b", None), (3, "c", None)]
        # scd2 compares only the columns the model returns: row 2 is unchanged and keeps
        # its one open version; row 1's new version has no `legacy`.
        assert rows("scd2", "id, v, legacy, valid_to is null") == [
            (1, "a", "L1", False),
            (1, "a2", None, True),
            (2, "b", "L2", True),
            (3, "c", None, True),
        ]
