"""dbt Python models in the dbt process's own SparkSession (`method: session`).

A Python model's DataFrame (Spark or pandas) becomes a temporary view the SQL
materializations write: `table`, every incremental strategy with a `dbt.is_incremental`
branch, `on_schema_change`, `dbt.ref` / `dbt.source` / `dbt.config.get` / `dbt.this`, and
the errors a broken model or an unsupported config gives.
"""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.harness import (
    assert_model_passed,
    batch_model,
    column_names,
    day,
    query_rows,
    relation,
    results_by_model,
    run_batches,
    sort_rows,
)

# --- models --------------------------------------------------------------------------

# The upstream rows: batch 2 changes key 2 and adds key 4 (`updated_in` = 2 for both).
PY_INPUT_SQL = batch_model(
    "materialized='table'",
    {
        1: "select id, label, cast(day as date) as day, updated_in from values "
        "(1, 'a', '2024-01-01', 1), (2, 'b', '2024-01-01', 1), (3, 'c', '2024-01-02', 1) "
        "as t(id, label, day, updated_in)",
        2: "select id, label, cast(day as date) as day, updated_in from values "
        "(1, 'a', '2024-01-01', 1), (2, 'B', '2024-01-01', 2), (3, 'c', '2024-01-02', 1), "
        "(4, 'd', '2024-01-03', 2) as t(id, label, day, updated_in)",
    },
)

# Incremental runs keep only the rows updated after the newest one in `dbt.this`, and
# mark every row with the kind of run that wrote it.
INCREMENTAL_PY = """
from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(materialized="incremental", {config})
    rows = dbt.ref("py_input")
    if dbt.is_incremental:
        last = session.sql(f"select max(updated_in) from {{dbt.this}}").collect()[0][0]
        rows = rows.filter(F.col("updated_in") > last)
        rows = rows.withColumn("run_kind", F.lit("incremental"))
    else:
        rows = rows.withColumn("run_kind", F.lit("initial"))
    return rows.select("id", "label", "day", "updated_in", "run_kind")
"""


def incremental_py(config: str) -> str:
    return INCREMENTAL_PY.format(config=config)


# Reads `dbt.this` as a DataFrame (session.table) instead of SQL.
APPEND_PY = """
from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    rows = dbt.ref("py_input")
    if dbt.is_incremental:
        this = session.table(str(dbt.this))
        last = this.agg(F.max("updated_in")).collect()[0][0]
        rows = rows.filter(rows.updated_in > last).withColumn("run_kind", F.lit("incremental"))
    else:
        rows = rows.withColumn("run_kind", F.lit("initial"))
    return rows.select("id", "label", "day", "updated_in", "run_kind")
"""

NEW_COLUMN_PY = """
from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        unique_key="id",
        on_schema_change="append_new_columns",
    )
    rows = dbt.ref("py_input").select("id", "label", "updated_in")
    if dbt.is_incremental:
        last = session.sql(f"select max(updated_in) from {dbt.this}").collect()[0][0]
        rows = rows.filter(rows.updated_in > last)
        rows = rows.withColumn("note", F.concat(F.lit("new-"), F.col("label")))
    return rows
"""

TABLE_SPARK_PY = """
def model(dbt, session):
    dbt.config(materialized="table", multiplier=10)
    factor = dbt.config.get("multiplier")
    fallback = dbt.config.get("no_such_key", "fallback")
    frame = session.createDataFrame([(1, "x"), (2, "y")], "id int, label string")
    return frame.selectExpr(
        "id", "label", f"id * {factor} as scaled", f"'{fallback}' as fallback"
    )
"""

TABLE_PANDAS_PY = """
import pandas as pd


def model(dbt, session):
    dbt.config(materialized="table")
    return pd.DataFrame(
        {"id": [1, 2, 3], "name": ["a", None, "c"], "amount": [1.5, 2.0, 2.5]}
    )
"""

REF_SOURCE_PY = """
def model(dbt, session):
    dbt.config(materialized="table")
    greeting = dbt.config.get("greeting")
    seed = dbt.source("raw", "py_seed")
    upstream = dbt.ref("py_table_spark")
    pandas_rows = dbt.ref("py_table_pandas").select("id", "name")
    joined = seed.join(upstream, "id").join(pandas_rows, "id", "left")
    return joined.selectExpr("id", "code", "label", "name", f"'{greeting}' as greeting")
"""

SCHEMA_YML = """
version: 2

sources:
  - name: raw
    schema: "{{ target.schema }}"
    tables:
      - name: py_seed

models:
  - name: py_ref_source
    config:
      greeting: hello
"""

SEED_CSV = "id,code\n1,one\n2,two\n3,three\n"

SUCCESS_MODELS = {
    "py_input.sql": PY_INPUT_SQL,
    "py_append.py": APPEND_PY,
    "py_merge.py": incremental_py('incremental_strategy="merge", unique_key="id"'),
    # Keyed by day: every row of a day the run brings is replaced.
    "py_delete_insert.py": incremental_py('incremental_strategy="delete+insert", unique_key="day"'),
    "py_insert_overwrite.py": incremental_py(
        'incremental_strategy="insert_overwrite", partition_by=["day"]'
    ),
    "py_scd2.py": incremental_py('incremental_strategy="scd2", unique_key="id"'),
    "py_new_column.py": NEW_COLUMN_PY,
    "py_table_spark.py": TABLE_SPARK_PY,
    "py_table_pandas.py": TABLE_PANDAS_PY,
    "py_ref_source.py": REF_SOURCE_PY,
    "schema.yml": SCHEMA_YML,
}

ROW_QUERY = "select id, label, day, updated_in, run_kind from {table}"

INITIAL_ROWS = [
    (1, "a", day(1), 1, "initial"),
    (2, "b", day(1), 1, "initial"),
    (3, "c", day(2), 1, "initial"),
]

INCREMENTAL_MODELS = ("py_append", "py_merge", "py_delete_insert", "py_insert_overwrite")


class TestPythonModels:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"py_seed.csv": SEED_CSV}

    @pytest.fixture(scope="class")
    def models(self):
        return SUCCESS_MODELS

    @pytest.fixture(scope="class")
    def history(self, project):
        """Seed, then run every model twice (the second run is incremental); each
        model's outcomes and the rows the incremental models held after the first run."""
        assert len(run_dbt(["seed"])) == 1
        first_run = run_batches([1])
        first_rows = {}
        for name in (*INCREMENTAL_MODELS, "py_scd2"):
            if first_run[0][name][0] == "success":
                table = relation(project, name)
                first_rows[name] = query_rows(project, ROW_QUERY.format(table=table))
        if first_run[0]["py_new_column"][0] == "success":
            table = relation(project, "py_new_column")
            first_rows["py_new_column"] = (
                column_names(project, table),
                query_rows(project, f"select * from {table}"),
            )
        outcomes = first_run + run_batches([2])
        return outcomes, first_rows

    def rows(self, project, history, name: str, query: str = ROW_QUERY) -> list[tuple]:
        outcomes, _ = history
        assert_model_passed(outcomes, name)
        return query_rows(project, query.format(table=relation(project, name)))

    def first_rows(self, history, name: str):
        outcomes, first_rows = history
        assert_model_passed(outcomes, name)
        return first_rows[name]

    # --- table ---

    def test_table_from_spark_dataframe_with_config_get(self, project, history):
        table = relation(project, "py_table_spark")
        rows = self.rows(project, history, "py_table_spark", "select * from {table}")
        assert column_names(project, table) == ["id", "label", "scaled", "fallback"]
        # `multiplier` from dbt.config(...), the default for a key that is not set.
        assert rows == [(1, "x", 10, "fallback"), (2, "y", 20, "fallback")]

    def test_table_from_pandas_dataframe(self, project, history):
        table = relation(project, "py_table_pandas")
        rows = self.rows(
            project, history, "py_table_pandas", "select id, name, amount from {table}"
        )
        assert rows == [(1, "a", 1.5), (2, None, 2.0), (3, "c", 2.5)]
        types = {r[0]: r[1] for r in project.run_sql(f"describe {table}", fetch="all") if r[0]}
        assert (types["id"], types["name"], types["amount"]) == ("bigint", "string", "double")

    def test_ref_source_and_config_from_yaml(self, project, history):
        rows = self.rows(
            project,
            history,
            "py_ref_source",
            "select id, code, label, name, greeting from {table}",
        )
        assert rows == [(1, "one", "x", "a", "hello"), (2, "two", "y", None, "hello")]

    # --- incremental ---

    def test_first_run_builds_every_row(self, project, history):
        for name in INCREMENTAL_MODELS:
            assert self.first_rows(history, name) == INITIAL_ROWS, name

    def test_append(self, project, history):
        rows = self.rows(project, history, "py_append")
        # Only rows updated after the first run are appended: keys 1 and 3 stay once.
        assert rows == sort_rows(
            INITIAL_ROWS + [(2, "B", day(1), 2, "incremental"), (4, "d", day(3), 2, "incremental")]
        )

    def test_merge(self, project, history):
        assert self.rows(project, history, "py_merge") == [
            (1, "a", day(1), 1, "initial"),
            (2, "B", day(1), 2, "incremental"),
            (3, "c", day(2), 1, "initial"),
            (4, "d", day(3), 2, "incremental"),
        ]

    def test_delete_insert(self, project, history):
        # Days 1 and 3 come in: key 1 (day 1) goes with key 2's old row; day 2 untouched.
        assert self.rows(project, history, "py_delete_insert") == [
            (2, "B", day(1), 2, "incremental"),
            (3, "c", day(2), 1, "initial"),
            (4, "d", day(3), 2, "incremental"),
        ]

    def test_insert_overwrite(self, project, history):
        # Partitions day 1 and day 3 replaced, day 2 untouched.
        assert self.rows(project, history, "py_insert_overwrite") == [
            (2, "B", day(1), 2, "incremental"),
            (3, "c", day(2), 1, "initial"),
            (4, "d", day(3), 2, "incremental"),
        ]

    def test_scd2(self, project, history):
        query = (
            "select id, label, day, updated_in, run_kind, valid_to is null, valid_from from {table}"
        )
        first = {r[0]: r for r in self.first_rows(history, "py_scd2")}
        assert sorted(first) == [1, 2, 3]
        rows = self.rows(project, history, "py_scd2", query)
        # Key 2's first version is closed, its new version open; keys 1 and 3, absent
        # from the incremental run, stay open.
        assert [r[:6] for r in rows] == sort_rows(
            [
                (1, "a", day(1), 1, "initial", True),
                (2, "b", day(1), 1, "initial", False),
                (2, "B", day(1), 2, "incremental", True),
                (3, "c", day(2), 1, "initial", True),
                (4, "d", day(3), 2, "incremental", True),
            ]
        )
        assert all(r[6] is not None for r in rows)

    def test_append_new_columns(self, project, history):
        first_columns, first = self.first_rows(history, "py_new_column")
        assert first_columns == ["id", "label", "updated_in"]
        assert first == [(1, "a", 1), (2, "b", 1), (3, "c", 1)]
        table = relation(project, "py_new_column")
        rows = self.rows(project, history, "py_new_column", "select * from {table}")
        assert column_names(project, table) == ["id", "label", "updated_in", "note"]
        # Rows the incremental run did not bring keep NULL in the new column.
        assert rows == [
            (1, "a", 1, None),
            (2, "B", 2, "new-B"),
            (3, "c", 1, None),
            (4, "d", 2, "new-d"),
        ]


# --- errors ----------------------------------------------------------------------------

BAD_RETURN_PY = """
def model(dbt, session):
    dbt.config(materialized="table")
    return [1, 2, 3]
"""

# dbt's parser wants exactly one `return` of a DataFrame.
RAISING_PY = """
def model(dbt, session):
    dbt.config(materialized="table")
    frame = session.createDataFrame([(1,)], "id int")
    if frame.count() > 0:
        raise ValueError("custom boom 42")
    return frame
"""

# Its code would leave a marker table if it ran.
WHOLE_HISTORY_PY = """
def model(dbt, session):
    dbt.config(materialized="incremental", unique_key="id", on_schema_change="{mode}")
    session.sql(
        f"create table `{{dbt.this.schema}}`.`ran_{{dbt.this.identifier}}` (x int) using iceberg"
    )
    return session.createDataFrame([(1, "a")], "id int, label string")
"""

ERROR_MODELS = {
    "py_bad_return.py": BAD_RETURN_PY,
    "py_raising.py": RAISING_PY,
    "py_full_refresh.py": WHOLE_HISTORY_PY.format(mode="full_refresh"),
    "py_full_incremental_refresh.py": WHOLE_HISTORY_PY.format(mode="full_incremental_refresh"),
}


class TestPythonModelErrors:
    @pytest.fixture(scope="class")
    def models(self):
        return ERROR_MODELS

    @pytest.fixture(scope="class")
    def failed_run(self, project):
        results, log = run_dbt_and_capture(["run"], expect_pass=False)
        return results_by_model(results), log

    def tables(self, project) -> list[str]:
        rows = project.run_sql("show tables in {schema}", fetch="all")
        return sorted(r[1] for r in rows)

    def test_non_dataframe_return(self, project, failed_run):
        by_model, log = failed_run
        result = by_model["py_bad_return"]
        assert str(result.status) == "error"
        message = result.message or ""
        assert "py_bad_return" in message
        assert "return a Spark DataFrame" in message
        assert "list" in message
        assert "py_bad_return" not in self.tables(project)

    def test_raising_model(self, project, failed_run):
        by_model, log = failed_run
        result = by_model["py_raising"]
        assert str(result.status) == "error"
        assert "ValueError: custom boom 42" in (result.message or "")
        assert "py_raising" in (result.message or "")
        assert "ValueError: custom boom 42" in log
        assert "py_raising" not in self.tables(project)

    @pytest.mark.parametrize("mode", ["full_refresh", "full_incremental_refresh"])
    def test_whole_history_modes_refused(self, project, failed_run, mode):
        by_model, log = failed_run
        name = f"py_{mode}"
        result = by_model[name]
        assert str(result.status) == "error"
        message = result.message or ""
        assert "Python model" in message
        assert name in message
        assert "on_schema_change" in message
        assert mode in message
        # Nothing created: neither the table nor the marker its code would write.
        assert self.tables(project) == []
