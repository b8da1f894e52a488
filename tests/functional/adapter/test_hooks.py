"""dbt-tests-adapter's hooks suite: model, seed and snapshot pre/post hooks (project and
model config, kwargs, `+` prefix), on-run-start/end hooks and their order.

Adapted: the audit tables are created with Spark types; Postgres' `vacuum` (a hook run
outside the transaction) becomes `refresh table`; `::` casts become CAST; the audit rows
are read with backtick-quoted names (double quotes are string literals in Spark); and the
hooks' rendered target is checked against this adapter's profile instead of Postgres'.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dbt.tests.adapter.hooks import fixtures, test_model_hooks
from dbt.tests.adapter.hooks.test_model_hooks import (
    BaseDuplicateHooksInConfigs,
    BaseHookRefs,
    BaseHooksRefsOnSeeds,
    BasePrePostModelHooks,
    BasePrePostModelHooksInConfig,
    BasePrePostModelHooksInConfigKwargs,
    BasePrePostModelHooksInConfigWithCount,
    BasePrePostModelHooksOnSeeds,
    BasePrePostModelHooksOnSeedsPlusPrefixed,
    BasePrePostModelHooksOnSeedsPlusPrefixedWhitespace,
    BasePrePostModelHooksOnSnapshots,
    BasePrePostSnapshotHooksInConfigKwargs,
)
from dbt.tests.adapter.hooks.test_run_hooks import BaseAfterRunHooks, BasePrePostRunHooks

DATA_DIR = Path(fixtures.__file__).parent / "data"

FIELDS = [
    "test_state",
    "target_dbname",
    "target_host",
    "target_name",
    "target_schema",
    "target_threads",
    "target_type",
    "target_user",
    "target_pass",
    "run_started_at",
    "invocation_id",
    "thread_id",
]

# Postgres runs `vacuum` outside a transaction; Spark has no VACUUM. `refresh table` is a
# statement on the same table that is equally no-op for the rows the test checks.
OUTSIDE_TRANSACTION_HOOK = {
    "sql": "refresh table {{ this.schema }}.on_model_hook",
    "transaction": False,
}


def create_audit_table(project, data_file: str) -> None:
    """The base's audit-table DDL (read beside dbt-tests-adapter's module, not this one)
    with Spark's STRING for Postgres' TEXT."""
    project.run_sql((DATA_DIR / data_file).read_text().replace("TEXT", "STRING"))


def read_audit_rows(project, table: str, state: str) -> list[dict]:
    # Backticks: a double-quoted name is a string literal in Spark.
    field_list = ", ".join(f"`{f}`" for f in FIELDS)
    query = f"select {field_list} from {project.test_schema}.{table} where test_state = '{state}'"
    return [dict(zip(FIELDS, row, strict=True)) for row in project.run_sql(query, fetch="all")]


def check_target_context(ctx: dict, state: str, project, host) -> None:
    """The base's checks with this profile's values instead of Postgres' (dbname `dbt`,
    user `root`, type `postgres`): the profile has no dbname, user or password (each
    rendered as an empty string) and leaves host unset (rendered `None`)."""
    assert ctx["test_state"] == state
    assert ctx["target_dbname"] == ""
    assert ctx["target_host"] == str(host)
    assert ctx["target_name"] == "default"
    assert ctx["target_schema"] == project.test_schema
    assert ctx["target_threads"] == 4
    assert ctx["target_type"] == "s3tables"
    assert ctx["target_user"] == ""
    assert ctx["target_pass"] == ""

    assert ctx["run_started_at"] is not None and len(ctx["run_started_at"]) > 0, (
        "run_started_at was not set"
    )
    assert ctx["invocation_id"] is not None and len(ctx["invocation_id"]) > 0, (
        "invocation_id was not set"
    )


class SparkModelHookChecks:
    """The base's hook checks (get_ctx_vars, check_hooks) with the hook rows read with
    backticks (a double-quoted name is a string literal in Spark) and compared with this
    profile's target (check_target_context) instead of Postgres'."""

    @pytest.fixture(scope="class", autouse=True)
    def setUp(self, project):
        create_audit_table(project, "seed_model.sql")

    def get_ctx_vars(self, state, count, project):
        vals = read_audit_rows(project, "on_model_hook", state)
        assert len(vals) != 0, "nothing inserted into hooks table"
        assert len(vals) >= count, "too few rows in hooks table"
        assert len(vals) <= count, "too many rows in hooks table"
        return vals

    def check_hooks(self, state, project, host, count=1):
        for ctx in self.get_ctx_vars(state, count=count, project=project):
            check_target_context(ctx, state, project, host)
            assert ctx["thread_id"].startswith("Thread-")


SPARK_MODEL_HOOKS = {
    "models": {
        "test": {
            "pre-hook": [
                # inside transaction (runs second)
                test_model_hooks.MODEL_PRE_HOOK,
                # outside transaction (runs first)
                OUTSIDE_TRANSACTION_HOOK,
            ],
            "post-hook": [
                # outside transaction (runs second)
                OUTSIDE_TRANSACTION_HOOK,
                # inside transaction (runs first)
                test_model_hooks.MODEL_POST_HOOK,
            ],
        }
    }
}


class TestPrePostModelHooks(SparkModelHookChecks, BasePrePostModelHooks):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return SPARK_MODEL_HOOKS


class TestHookRefs(SparkModelHookChecks, BaseHookRefs):
    pass


class TestPrePostModelHooksInConfig(SparkModelHookChecks, BasePrePostModelHooksInConfig):
    pass


class TestPrePostModelHooksInConfigWithCount(
    SparkModelHookChecks, BasePrePostModelHooksInConfigWithCount
):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return SPARK_MODEL_HOOKS


class TestPrePostModelHooksInConfigKwargs(
    SparkModelHookChecks, BasePrePostModelHooksInConfigKwargs
):
    pass


class TestDuplicateHooksInConfigs(BaseDuplicateHooksInConfigs):
    pass


class TestPrePostModelHooksOnSeeds(BasePrePostModelHooksOnSeeds):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "seed-paths": ["seeds"],
            "models": {},
            "seeds": {
                "post-hook": [
                    "alter table {{ this }} add column new_col int",
                    "update {{ this }} set new_col = 1",
                    # call any macro to track dependency: dbt-core#6806 (Spark: CAST, not ::)
                    "select cast(null as {{ dbt.type_int() }}) as id",
                ],
                "quote_columns": False,
            },
        }


class TestHooksRefsOnSeeds(BaseHooksRefsOnSeeds):
    pass


class TestPrePostModelHooksOnSeedsPlusPrefixed(BasePrePostModelHooksOnSeedsPlusPrefixed):
    pass


class TestPrePostModelHooksOnSeedsPlusPrefixedWhitespace(
    BasePrePostModelHooksOnSeedsPlusPrefixedWhitespace
):
    pass


class TestPrePostModelHooksOnSnapshots(BasePrePostModelHooksOnSnapshots):
    pass


class TestPrePostSnapshotHooksInConfigKwargs(BasePrePostSnapshotHooksInConfigKwargs):
    pass


class TestPrePostRunHooks(BasePrePostRunHooks):
    """The base's run hooks with Spark's STRING for TEXT, and its checks (get_ctx_vars,
    check_hooks) reading the rows with backticks and comparing them with this profile's
    target (check_target_context) instead of Postgres'."""

    @pytest.fixture(scope="function")
    def setUp(self, project):
        create_audit_table(project, "seed_run.sql")
        project.run_sql(f"drop table if exists {project.test_schema}.schemas")
        project.run_sql(f"drop table if exists {project.test_schema}.db_schemas")
        os.environ["TERM_TEST"] = "TESTING"

    @pytest.fixture(scope="class")
    def project_config_update(self):
        # The base's hooks with Spark's STRING for Postgres' TEXT. This adapter has no
        # database: `database_schemas` holds None for it, written as NULL (not the string
        # 'None') so that the base's check `db == project.database` keeps its meaning.
        return {
            "on-run-start": [
                "{{ custom_run_hook('start', target, run_started_at, invocation_id) }}",
                "create table {{ target.schema }}.start_hook_order_test ( id int )",
                "drop table {{ target.schema }}.start_hook_order_test",
                "{{ log(env_var('TERM_TEST'), info=True) }}",
            ],
            "on-run-end": [
                "{{ custom_run_hook('end', target, run_started_at, invocation_id) }}",
                "create table {{ target.schema }}.end_hook_order_test ( id int )",
                "drop table {{ target.schema }}.end_hook_order_test",
                "create table {{ target.schema }}.schemas ( schema string )",
                "insert into {{ target.schema }}.schemas (schema) values"
                " {% for schema in schemas %}( '{{ schema }}' )"
                "{% if not loop.last %},{% endif %}{% endfor %}",
                "create table {{ target.schema }}.db_schemas ( db string, schema string )",
                "insert into {{ target.schema }}.db_schemas (db, schema) values"
                " {% for db, schema in database_schemas %}"
                "({{ 'null' if db is none else \"'\" ~ db ~ \"'\" }}, '{{ schema }}' )"
                "{% if not loop.last %},{% endif %}{% endfor %}",
            ],
            "seeds": {
                "quote_columns": False,
            },
        }

    def get_ctx_vars(self, state, project):
        vals = read_audit_rows(project, "on_run_hook", state)
        assert len(vals) != 0, "nothing inserted into on_run_hook table"
        assert len(vals) == 1, "too many rows in hooks table"
        return vals[0]

    def check_hooks(self, state, project, host):
        ctx = self.get_ctx_vars(state, project)
        check_target_context(ctx, state, project, host)
        assert ctx["thread_id"].startswith("Thread-") or ctx["thread_id"] == "MainThread"


class TestAfterRunHooks(BaseAfterRunHooks):
    pass
