"""Columns of every shape across runs: nested types that Iceberg stores wider than the
model returns them (`array<smallint>` is kept as `array<int>`), a struct of more than 25
fields (which Spark's DESCRIBE prints cut short), every `partition_by` alias, a
`sql_header` of several `SET` statements, and an enforced contract's types, exact and on
nested columns. Each is no change on the next run, as the model did not change.

The classes run on the adapter here and on dbt-spark plus the `s3tables_spark` package
(tests/functional/test_spark_package.py), where each of these broke every run.
"""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, write_file

from tests.functional.harness import batch_model, table_rows

NESTED_ROWS = (
    "select {id} as id, array(cast(1 as smallint)) as a, map('k', cast(1 as tinyint)) as m, "
    "array(named_struct('x', cast(1 as smallint))) as s"
)
NESTED_MODES = ["fail", "sync_all_columns", "recreate_empty", "append_new_columns"]


class TestNestedTypesAreNoChange:
    """A model returning `array<smallint>`, `map<string,tinyint>` and
    `array<struct<x:smallint>>` (stored as int) runs again with its schema unchanged
    under every mode: `fail` does not refuse it, `recreate_empty` does not replace the
    table with one run's rows."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            f"nested_{mode}.sql": batch_model(
                f"materialized='incremental', incremental_strategy='append', "
                f"on_schema_change='{mode}'",
                {1: NESTED_ROWS.format(id=1), 2: NESTED_ROWS.format(id=2)},
            )
            for mode in NESTED_MODES
        }

    def test_the_second_run_appends(self, project):
        run_dbt(["run"])
        run_dbt(["run", "--vars", "batch: 2"])
        for mode in NESTED_MODES:
            assert table_rows(project, f"nested_{mode}", "id") == [(1,), (2,)], mode


def wide_struct(fields: int, row_id: int) -> str:
    pairs = ", ".join(f"'f{i}', {i}" for i in range(fields))
    return f"select {row_id} as id, named_struct({pairs}) as s"


class TestAStructOfMoreThan25Fields:
    """Spark's DESCRIBE cuts a struct of more than 25 fields short (`... 6 more
    fields`); the table's and the model's whole types are compared, so a 31st field is
    added under `sync_all_columns`, and the unchanged struct is no change."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "wide.sql": batch_model(
                "materialized='incremental', incremental_strategy='append', "
                "on_schema_change='sync_all_columns'",
                {1: wide_struct(30, 1), 2: wide_struct(31, 2), 3: wide_struct(31, 3)},
            )
        }

    def test_a_field_is_added_to_a_wide_struct(self, project):
        for batch in (1, 2, 3):
            run_dbt(["run", "--vars", f"batch: {batch}"])
        assert table_rows(project, "wide", "id, s.f29, s.f30") == [
            (1, 29, None),
            (2, 29, 30),
            (3, 29, 30),
        ]


PARTITIONED = """
{{ config(materialized='incremental', incremental_strategy='append',
          partition_by=['day(ts)', 'identity(c)', 'truncate(s, 4)', 'hour(t2)']) }}
select {{ var('batch', 1) }} as id, timestamp'2024-01-01 10:00:00' as ts, 'abcdef' as s,
  2 as c, timestamp'2024-01-01 11:00:00' as t2
"""


class TestPartitionByAliases:
    """Every alias of a transform the adapter accepts (`day`, `hour`, `identity`,
    `truncate(column, width)`) is the same partitioning on the next run as the table's
    (which Spark lists as `days(ts)`, `c`, `truncate(4, s)`, `hours(t2)`)."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"aliased.sql": PARTITIONED}

    def test_the_next_runs_keep_the_partitioning(self, project):
        for batch in (1, 2, 3):
            run_dbt(["run", "--vars", f"batch: {batch}"])
        assert table_rows(project, "aliased", "id") == [(1,), (2,), (3,)]


HEADER = """
{{ config(materialized=var('materialized', 'incremental'), incremental_strategy='append',
          sql_header="SET spark.sql.session.timeZone = Asia/Tokyo;\\n"
                     "SET spark.sql.shuffle.partitions = 3;") }}
select {{ var('batch', 1) }} as id, current_timezone() as zone
"""


class TestASqlHeaderOfSeveralStatements:
    """Each statement of a model's `sql_header` runs before the model's SQL, in its
    session: over Thrift, where the server runs one statement a call, a `SET` sent with
    the text after it took that text as its value."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"headed.sql": HEADER}

    def test_the_header_set_the_session(self, project):
        run_dbt(["run"])
        run_dbt(["run", "--vars", "batch: 2"])
        assert table_rows(project, "headed", "id, zone") == [(1, "Asia/Tokyo"), (2, "Asia/Tokyo")]
        run_dbt(["run", "--vars", "{batch: 3, materialized: table}"])
        assert table_rows(project, "headed", "id, zone") == [(3, "Asia/Tokyo")]


NESTED_CONTRACT = """
version: 2
models:
  - name: contracted
    config:
      materialized: table
      contract: {enforced: true}
    columns:
      - name: id
        data_type: int
        constraints: [{type: not_null}]
      - name: s
        data_type: struct<a:int,b:string>
      - name: m
        data_type: map<string,int>
      - name: tags
        data_type: array<string>
"""
NESTED_CONTRACTED = (
    "select {id} as id, named_struct('a', 1, 'b', 'x') as s, map('k', 1) as m, array('t') as tags"
)


class TestAContractedTableOfNestedColumnsIsRebuilt:
    """A table model with an enforced contract and struct, map and array columns is
    rebuilt by every build, its unchanged columns no difference."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"contracted.sql": NESTED_CONTRACTED.format(id=1), "schema.yml": NESTED_CONTRACT}

    def test_rebuilt(self, project):
        run_dbt(["run"])
        write_file(NESTED_CONTRACTED.format(id=2), project.project_root, "models", "contracted.sql")
        run_dbt(["run"])
        assert table_rows(project, "contracted", "id, s.b, m['k'], tags[0]") == [(2, "x", 1, "t")]


EXACT_CONTRACT = """
version: 2
models:
  - name: {name}
    config:
      materialized: table
      contract: {{enforced: true}}
    columns:
      - name: id
        data_type: int
      - name: value
        data_type: {contract_type}
"""


class TestContractTypesAreExact:
    """An enforced contract compares Spark's types, as declared: a decimal of another
    precision or scale, or `timestamp` for `timestamp_ntz`, is a mismatch, and nothing
    is built."""

    CASES = {
        "scaled": ("cast(1.5 as decimal(12,4))", "decimal(10,2)"),
        "zoned": ("timestamp'2024-01-01 00:00:00'", "timestamp_ntz"),
        "matching": ("cast(1.5 as decimal(10,2))", "decimal(10,2)"),
    }

    @pytest.fixture(scope="class")
    def models(self):
        models = {}
        for name, (value, contract_type) in self.CASES.items():
            models[f"{name}.sql"] = f"select 1 as id, {value} as value"
            models[f"{name}.yml"] = EXACT_CONTRACT.format(name=name, contract_type=contract_type)
        return models

    def test_a_mismatch_builds_nothing(self, project):
        results = {r.node.name: r for r in run_dbt(["run"], expect_pass=False)}
        assert results["matching"].status == "success"
        for name in ("scaled", "zoned"):
            assert results[name].status == "error", name
            assert "data type mismatch" in results[name].message, results[name].message
        tables = {
            row[1] for row in project.run_sql(f"show tables in {project.test_schema}", fetch="all")
        }
        assert "matching" in tables and not {"scaled", "zoned"} & tables
