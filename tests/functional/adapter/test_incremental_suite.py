"""dbt-tests-adapter's incremental suite on the embedded local catalog."""

import pytest
from dbt.artifacts.schemas.results import RunStatus
from dbt.tests.adapter.basic.test_incremental import BaseIncrementalBadStrategy
from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import (
    BaseMergeExcludeColumns,
)
from dbt.tests.adapter.incremental.test_incremental_microbatch import BaseMicrobatch
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates
from dbt.tests.adapter.incremental.test_incremental_predicates import (
    TestPredicatesDeleteInsert as PredicatesDeleteInsertUpstream,
)
from dbt.tests.adapter.incremental.test_incremental_unique_id import (
    BaseIncrementalUniqueKey,
    seeds__seed_csv,
)
from dbt.tests.util import run_dbt

# The base fixtures insert '2022-02-14' into the DATE column: Postgres casts the string
# implicitly, Spark's ANSI store assignment refuses it, so these use DATE literals.
seeds__duplicate_insert_sql = """
-- Insert statement which when applied to seed.csv triggers the inplace
--   overwrite strategy of incremental models. Seed and incremental model
--   diverge.

-- insert new row, which should not be in incremental model
--  with primary or first three columns unique
insert into {schema}.seed
    (state, county, city, last_visit_date)
values ('CT','Hartford','Hartford',DATE '2022-02-14');

"""

seeds__add_new_rows_sql = """
-- Insert statement which when applied to seed.csv sees incremental model
--   grow in size while not (necessarily) diverging from the seed itself.

-- insert two new rows, both of which should be in incremental model
--   with any unique columns
insert into {schema}.seed
    (state, county, city, last_visit_date)
values ('WA','King','Seattle',DATE '2022-02-01');

insert into {schema}.seed
    (state, county, city, last_visit_date)
values ('CA','Los Angeles','Los Angeles',DATE '2022-02-01');

"""

macros__create_table_from_seed_sql = """
{% macro create_table_from_seed(name) %}
  {% do run_query("create table " ~ target.schema ~ "." ~ name
                  ~ " using iceberg as select * from " ~ target.schema ~ ".seed") %}
{% endmacro %}
"""


class TestIncrementalUniqueKey(BaseIncrementalUniqueKey):
    """A unique_key naming a column the model lacks: dbt's default materialization only
    notices on the second (incremental) run, so the base test expects the first build to
    succeed. This adapter checks the incremental config against the model's output
    columns before the first build writes anything (`validate_incremental` in the
    materialization), so the first build already fails, naming the model, the config key
    and the column. The helper asserts that, then creates the table directly and checks
    the base test's case too: the incremental run on the existing table fails."""

    @pytest.fixture(scope="class")
    def seeds(self):
        # Spark SQL inserts: DATE literals where the base relies on Postgres' implicit cast.
        return {
            "duplicate_insert.sql": seeds__duplicate_insert_sql,
            "seed.csv": seeds__seed_csv,
            "add_new_rows.sql": seeds__add_new_rows_sql,
        }

    @pytest.fixture(scope="class")
    def macros(self):
        return {"create_table_from_seed.sql": macros__create_table_from_seed_sql}

    def fail_to_build_inc_missing_unique_key_column(self, incremental_model_name):
        assert len(run_dbt(["seed", "--select", "seed", "--full-refresh"])) == 1
        first = run_dbt(
            ["run", "--select", incremental_model_name, "--full-refresh"], expect_pass=False
        ).results[0]
        assert first.status == RunStatus.Error
        assert f"Model `{incremental_model_name}`, config `unique_key`" in first.message
        assert "thisisnotacolumn" in first.message.lower()

        # With the table in place (built outside dbt) the incremental run refuses it too.
        args = f"{{name: {incremental_model_name}}}"
        run_dbt(["run-operation", "create_table_from_seed", "--args", args])
        run_result = run_dbt(
            ["run", "--select", incremental_model_name], expect_pass=False
        ).results[0]
        return run_result.status, run_result.message


class TestIncrementalUniqueKeyWithoutMerge(TestIncrementalUniqueKey):
    """The same on the one-statement INSERT OVERWRITE path (no MERGE INTO)."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+use_merge": False}}


class TestMergeExcludeColumns(BaseMergeExcludeColumns):
    pass


class TestMergeExcludeColumnsWithoutMerge(BaseMergeExcludeColumns):
    """The same on the one-statement INSERT OVERWRITE path (no MERGE INTO)."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+use_merge": False}}


class TestIncrementalPredicates(BaseIncrementalPredicates):
    # Upstream's unqualified `id != 2`: its bare names are resolved against the target.
    pass


class TestPredicatesDeleteInsert(PredicatesDeleteInsertUpstream):
    """dbt's legacy `predicates` config, which dbt-core reads as `incremental_predicates`."""


class TestIncrementalPredicatesWithoutMerge(BaseIncrementalPredicates):
    """The same on the one-statement INSERT OVERWRITE path (no MERGE INTO)."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "models": {
                "+incremental_predicates": ["id != 2"],
                "+incremental_strategy": "delete+insert",
                "+use_merge": False,
            }
        }


class TestMicrobatch(BaseMicrobatch):
    pass


# Every strategy the adapter implements (incremental.config.KNOWN_STRATEGIES).
VALID_STRATEGIES = ("append", "merge", "delete+insert", "insert_overwrite", "scd2", "microbatch")


class TestIncrementalBadStrategy(BaseIncrementalBadStrategy):
    """dbt-core looks an incremental strategy up as a macro `get_incremental_<name>_sql`,
    and its error names that macro. This adapter has no per-strategy macros: each strategy
    is a SQL builder in strategies.py, chosen by the adapter, and the materialization
    checks the config before the first build. So the first run fails (as in the base
    test) with a compilation error that names the model, the config key and the bad value
    and lists every valid strategy, and no table is written."""

    def test_incremental_invalid_strategy(self, project):
        results = run_dbt(["seed"])
        assert len(results) == 2

        # try to run the incremental model, it should fail on the first attempt
        results = run_dbt(["run"], expect_pass=False)
        assert len(results.results) == 1
        result = results.results[0]
        assert result.status == RunStatus.Error
        message = result.message
        assert "Model `incremental`, config `incremental_strategy`" in message
        assert "unknown strategy `bad_strategy`" in message
        fix = message.split("Fix:")[1]
        assert all(f" {name}" in fix for name in VALID_STRATEGIES), message

        tables = project.run_sql(f"show tables in {project.test_schema}", fetch="all")
        names = {row[1] for row in tables}
        assert {"base", "added"} <= names and "incremental" not in names, names
