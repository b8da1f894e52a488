"""A model's `maintenance` config through real dbt runs on the embedded catalog: below its
thresholds nothing is maintained (snapshots and delete files keep growing); the build that
crosses one is followed by the maintenance (no delete files left, fewer data files, the
same rows, old snapshots expired); a model can turn a project-wide config off; table
models, seeds and snapshots are maintained the same way; a bad key fails the model naming it, with
nothing written."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.harness import table_rows

# Every incremental run updates the same 5 rows: each merge-on-read merge writes one delete
# file against the data file the previous run wrote, so delete files grow by one a run.
MERGE_SQL = """
{{{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge'{extra}) }}}}
{{% if is_incremental() %}}
select id, 'round {{{{ var("round") }}}}' as kind from range(5)
{{% else %}}
select id, 'first' as kind from range(500)
{{% endif %}}
"""
EVENTS_SQL = MERGE_SQL.format(extra="")
UNMAINTAINED_SQL = MERGE_SQL.format(extra=", maintenance=none")
DAILY_SQL = """
{{ config(materialized='table', maintenance={'when': {'snapshots_above': 2},
          'operations': ['expire_snapshots'], 'retain_last': 1, 'snapshots_older_than_days': 0}) }}
select 1 as id
"""
COUNTRIES_CSV = "code,name\nfr,France\nde,Germany\n"
COUNTRIES_SNAPSHOT_SQL = """
{% snapshot countries_history %}
{{ config(target_schema=schema, unique_key='code', strategy='check', check_cols='all') }}
select * from {{ ref('countries') }}
{% endsnapshot %}
"""
THRESHOLD = 3


class TestMaintenanceAfterBuild:
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "models": {
                "+maintenance": {
                    "when": {"delete_files_above": THRESHOLD, "snapshots_above": 100},
                    "retain_last": 2,
                    "snapshots_older_than_days": 0,
                }
            },
            "snapshots": {
                "+maintenance": {"when": {"snapshots_above": 0}, "operations": ["expire_snapshots"]}
            },
            "seeds": {
                "+maintenance": {
                    "when": {"snapshots_above": 2},
                    "retain_last": 1,
                    "snapshots_older_than_days": 0,
                }
            },
        }

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "events.sql": EVENTS_SQL,
            "unmaintained.sql": UNMAINTAINED_SQL,
            "daily.sql": DAILY_SQL,
        }

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"countries.csv": COUNTRIES_CSV}

    @pytest.fixture(scope="class")
    def snapshots(self):
        return {"countries_history.sql": COUNTRIES_SNAPSHOT_SQL}

    def test_maintenance_runs_once_a_threshold_is_crossed(self, project) -> None:
        schema = project.test_schema
        iceberg = project.adapter.iceberg
        selected = ["--select", "events", "unmaintained"]
        run_dbt(["run", *selected, "--vars", "{round: 0}"])
        history = [iceberg.table_health(schema, "events")]
        for round_ in range(1, THRESHOLD + 1):
            run_dbt(["run", *selected, "--vars", f"{{round: {round_}}}"])
            history.append(iceberg.table_health(schema, "events"))
        # Below the threshold: nothing maintained, every run adds a snapshot and a delete file.
        assert [h.snapshots for h in history] == list(range(1, THRESHOLD + 2))
        assert [h.delete_files for h in history] == list(range(THRESHOLD + 1))
        below = history[-1]
        expected = [(i, "round 9" if i < 5 else "first") for i in range(500)]

        _, output = run_dbt_and_capture(["run", *selected, "--vars", "{round: 9}"])

        after = iceberg.table_health(schema, "events")
        assert after.delete_files == 0
        assert after.data_files < below.data_files
        assert after.snapshots == 2
        assert table_rows(project, "events", order_by="id") == expected
        assert f"(delete files {THRESHOLD + 1} > {THRESHOLD})" in output, output
        assert f"delete files {THRESHOLD + 1} -> 0" in output
        assert "orphan files removed" not in output  # not an after-build operation
        # The same runs without maintenance (`maintenance=none` over the project's config).
        unmaintained = iceberg.table_health(schema, "unmaintained")
        assert (unmaintained.snapshots, unmaintained.delete_files) == (THRESHOLD + 2, THRESHOLD + 1)
        assert table_rows(project, "unmaintained", order_by="id") == expected

    def test_table_models_seeds_and_snapshots(self, project) -> None:
        schema = project.test_schema
        iceberg = project.adapter.iceberg
        for build in range(1, 4):
            run_dbt(["seed"])
            run_dbt(["run", "--select", "daily"])
            seed, table = (iceberg.table_health(schema, t) for t in ("countries", "daily"))
            # The third build crosses `snapshots_above: 2` and expires down to one.
            assert seed.snapshots == table.snapshots == (build if build < 3 else 1)
        assert table_rows(project, "countries", order_by="code") == [
            ("de", "Germany"),
            ("fr", "France"),
        ]
        _, output = run_dbt_and_capture(["snapshot"])
        assert f"maintained `{schema}`.`countries_history` (snapshots 1 > 0)" in output, output


BAD_SCHEMA_YML = """
version: 2
models:
  - name: events
    config:
      maintenance:
        when: {delete_file_above: 10}
"""


class TestBadMaintenanceConfig:
    @pytest.fixture(scope="class")
    def models(self):
        return {"events.sql": EVENTS_SQL, "schema.yml": BAD_SCHEMA_YML}

    def test_fails_naming_model_and_key_before_anything_is_written(self, project) -> None:
        _, output = run_dbt_and_capture(["run", "--vars", "{round: 0}"], expect_pass=False)
        assert "Model `events`, config `maintenance.when.delete_file_above`" in output, output
        assert "Fix: use: delete_files_above, data_files_above, snapshots_above" in output
        assert project.adapter.iceberg.list_relations(project.test_schema) == []
