"""`skip_when_unchanged`: a table or merge model whose SQL, config, views and upstream
snapshots are those its table's data was built from is not rebuilt (no commit, result
`UNCHANGED`); a change to any of them, `--full-refresh` or an undo of its upstream's run
rebuilds it with the rows a rebuild gives; a model whose rows could differ over the same
inputs is refused before anything is written."""

from __future__ import annotations

import json

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.harness import (
    last_invocation_id,
    query_rows,
    relation,
    results_by_model,
    snapshot_count,
)

SKIP = "skip_when_unchanged=true"
MODELS = {
    # The upstream: its rows are chosen by var `rows`.
    "src.sql": "{{ config(materialized='table') }}\n"
    "select id, id * {{ var('rows', 1) }} as v from range(1, 4) as r(id)",
    # A view over it whose SQL is chosen by var `factor`.
    "doubled.sql": "{{ config(materialized='view') }}\n"
    "select id, v * {{ var('factor', 2) }} as v from {{ ref('src') }}",
    "table_over_view.sql": f"{{{{ config(materialized='table', {SKIP}) }}}}\n"
    "select id, v from {{ ref('doubled') }}",
    "merged.sql": "{{ config(materialized='incremental', unique_key='id', "
    f"{SKIP}) }}}}\nselect id, v from {{{{ ref('src') }}}}",
}
SKIPPING = ("table_over_view", "merged")


def messages(results) -> dict[str, str]:
    return {name: result.message for name, result in results_by_model(results).items()}


class TestSkipWhenUnchanged:
    @pytest.fixture(scope="class")
    def models(self):
        return MODELS

    def snapshots(self, project) -> dict[str, int]:
        return {name: snapshot_count(project, relation(project, name)) for name in SKIPPING}

    def rows(self, project, name: str) -> list[tuple]:
        return query_rows(project, f"select id, v from {relation(project, name)}")

    def test_skipped_until_an_input_changes(self, project):
        run_dbt(["run"])
        # The merge's first incremental run has other SQL than its first build.
        run_dbt(["run", "--select", "merged"])
        before = self.snapshots(project)

        # Nothing changed: no commit, the rows as they were.
        results, log = run_dbt_and_capture(["run", "--select", *SKIPPING])
        assert set(messages(results).values()) == {"UNCHANGED"}, messages(results)
        assert self.snapshots(project) == before
        assert "not rebuilt (skip_when_unchanged)" in log
        assert self.rows(project, "table_over_view") == [(1, 2), (2, 4), (3, 6)]

        # The upstream's rows change: both rebuilt, naming the table that changed.
        run_dbt(["run", "--select", "src", "--vars", "rows: 2"])
        results, log = run_dbt_and_capture(["run", "--select", *SKIPPING])
        assert "UNCHANGED" not in messages(results).values(), messages(results)
        assert f"{relation(project, 'src')} (snapshot" in log
        assert self.rows(project, "table_over_view") == [(1, 4), (2, 8), (3, 12)]
        assert self.rows(project, "merged") == [(1, 2), (2, 4), (3, 6)]

        # The view's SQL changes (no upstream commit): only its reader is rebuilt.
        run_dbt(["run", "--select", "doubled", "--vars", "factor: 3"])
        results = run_dbt(["run", "--select", *SKIPPING])
        assert messages(results)["merged"] == "UNCHANGED"
        assert messages(results)["table_over_view"] != "UNCHANGED"
        assert self.rows(project, "table_over_view") == [(1, 6), (2, 12), (3, 18)]

        # --full-refresh always rebuilds.
        results = run_dbt(["run", "--select", *SKIPPING, "--full-refresh"])
        assert "UNCHANGED" not in messages(results).values()

    def test_an_undone_upstream_run_rebuilds_its_readers(self, project):
        run_dbt(["run"])
        run_dbt(["run", "--select", "merged"])
        run_dbt(["run", "--select", "src", "--vars", "rows: 5"])
        run_dbt(["run", "--select", "src", "--vars", "rows: 7"])
        undone = last_invocation_id(project)
        run_dbt(["run", "--select", *SKIPPING])
        assert self.rows(project, "merged") == [(1, 7), (2, 14), (3, 21)]

        # The upstream's last run undone: its readers see its older snapshot and rebuild.
        arguments = json.dumps({"invocation_id": undone})
        run_dbt(["run-operation", "s3tables_rollback", "--args", arguments])
        assert self.rows(project, "src") == [(1, 5), (2, 10), (3, 15)]
        results = run_dbt(["run", "--select", *SKIPPING])
        assert "UNCHANGED" not in messages(results).values(), messages(results)
        assert self.rows(project, "table_over_view") == [(1, 10), (2, 20), (3, 30)]
        # The merge's upsert of the older rows.
        assert self.rows(project, "merged") == [(1, 5), (2, 10), (3, 15)]


REFUSED = {
    "clock.sql": f"{{{{ config(materialized='table', {SKIP}) }}}}\n"
    "select current_timestamp() as built_at",
    "appended.sql": "{{ config(materialized='incremental', incremental_strategy='append', "
    f"{SKIP}) }}}}\nselect 1 as id",
    "random.sql": f"{{{{ config(materialized='table', {SKIP}) }}}}\nselect rand() as r",
    "reads_itself.sql": "{{ config(materialized='incremental', unique_key='id', "
    f"{SKIP}) }}}}\nselect 1 as id"
    "{% if is_incremental() %} union all select max(id) + 1 from {{ this }}{% endif %}",
}


class TestRefused:
    @pytest.fixture(scope="class")
    def models(self):
        return REFUSED

    def test_rows_that_can_differ_over_the_same_inputs_are_refused(self, project):
        run_dbt(["run", "--select", "reads_itself"])  # a first build does not read itself
        results = run_dbt(["run"], expect_pass=False)
        errors = {name: result.message for name, result in results_by_model(results).items()}
        for name in REFUSED:
            name = name.removesuffix(".sql")
            assert f"`{name}`" in errors[name] or name in errors[name], errors[name]
            assert "skip_when_unchanged" in errors[name], errors[name]
        assert "reads the clock (current_timestamp())" in errors["clock"]
        assert "non-deterministic" in errors["random"]
        assert "strategy `append`" in errors["appended"]
