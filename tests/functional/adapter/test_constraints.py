"""dbt-tests-adapter's constraints suite: enforced contracts on tables, views and
incremental models.

Adapted for Spark: the contract YAML's Postgres `text` is Spark's `string`; the data types
checked are Spark's; the sql_header sets Spark's session time zone; the expected DDL is
this adapter's (one `CREATE OR REPLACE ... AS SELECT` whose `not_null` columns are checked
row by row, since Spark cannot declare a schema in CTAS); a NULL in a `not_null` column
fails with this adapter's message. The rollback classes are the proof that not_null is
enforced: the failing build leaves the previous table in place.
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.constraints import fixtures
from dbt.tests.adapter.constraints.test_constraints import (
    BaseConstraintQuotedColumn,
    BaseConstraintsRollback,
    BaseConstraintsRuntimeDdlEnforcement,
    BaseIncrementalConstraintsColumnsEqual,
    BaseIncrementalConstraintsRollback,
    BaseIncrementalConstraintsRuntimeDdlEnforcement,
    BaseIncrementalContractSqlHeader,
    BaseIncrementalForeignKeyConstraint,
    BaseModelConstraintsRuntimeEnforcement,
    BaseTableConstraintsColumnsEqual,
    BaseTableContractSqlHeader,
    BaseViewConstraintsColumnsEqual,
)
from dbt.tests.util import get_connection, run_dbt, run_dbt_and_capture, write_file


def spark_types(yml: str) -> str:
    """Contract YAML with Postgres' `text` spelled as Spark's `string`."""
    return yml.replace("data_type: text", "data_type: string")


class SparkDataTypes:
    @pytest.fixture
    def string_type(self):
        return "string"

    @pytest.fixture
    def int_type(self):
        return "int"

    @pytest.fixture
    def data_types(self):
        # sql_column_value, schema_data_type, error_data_type: Spark literals and types.
        return [
            ["1", "int", "int"],
            ["'1'", "string", "string"],
            ["true", "boolean", "boolean"],
            ["cast('2013-11-03 00:00:00' as timestamp)", "timestamp", "timestamp"],
            ["cast('2013-11-03' as date)", "date", "date"],
            ["array('a','b','c')", "array<string>", "array<string>"],
            ["array(1,2,3)", "array<int>", "array<int>"],
            ["cast(1.5 as decimal(4,2))", "decimal(4,2)", "decimal(4,2)"],
            ["map('bar', 'baz')", "map<string,string>", "map<string,string>"],
        ]


class TestTableConstraintsColumnsEqual(SparkDataTypes, BaseTableConstraintsColumnsEqual):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model_wrong_order.sql": fixtures.my_model_wrong_order_sql,
            "my_model_wrong_name.sql": fixtures.my_model_wrong_name_sql,
            "constraints_schema.yml": spark_types(fixtures.model_schema_yml),
        }


class TestViewConstraintsColumnsEqual(SparkDataTypes, BaseViewConstraintsColumnsEqual):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model_wrong_order.sql": fixtures.my_model_view_wrong_order_sql,
            "my_model_wrong_name.sql": fixtures.my_model_view_wrong_name_sql,
            "constraints_schema.yml": spark_types(fixtures.model_schema_yml),
        }


class TestIncrementalConstraintsColumnsEqual(
    SparkDataTypes, BaseIncrementalConstraintsColumnsEqual
):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model_wrong_order.sql": fixtures.my_model_incremental_wrong_order_sql,
            "my_model_wrong_name.sql": fixtures.my_model_incremental_wrong_name_sql,
            "constraints_schema.yml": spark_types(fixtures.model_schema_yml),
        }


# The model's query, its `not_null` column checked in the one writing statement.
GUARDED_SELECT = """
    select case when `id` is null then raise_error('contract of model <model_identifier> column
    `id` is not_null, but the query returned null in it. nothing was written.') else `id` end
    as `id`, `color`, `date_day`
    from (
        -- depends_on: <foreign_key_model_identifier>
        select
            'blue' as color,
            1 as id,
            '2019-01-01' as date_day
    ) as model_subq
"""
# A first build creates the table (CREATE TABLE: a concurrent creator is never replaced).
EXPECTED_DDL = f"create table <model_identifier> using iceberg as {GUARDED_SELECT}"


class TestTableConstraintsRuntimeDdlEnforcement(BaseConstraintsRuntimeDdlEnforcement):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": fixtures.my_model_wrong_order_depends_on_fk_sql,
            "foreign_key_model.sql": fixtures.foreign_key_model_sql,
            "constraints_schema.yml": spark_types(fixtures.model_fk_constraint_schema_yml),
        }

    @pytest.fixture(scope="class")
    def expected_sql(self):
        return EXPECTED_DDL


class TestIncrementalConstraintsRuntimeDdlEnforcement(
    BaseIncrementalConstraintsRuntimeDdlEnforcement
):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": fixtures.my_model_incremental_wrong_order_depends_on_fk_sql,
            "foreign_key_model.sql": fixtures.foreign_key_model_sql,
            "constraints_schema.yml": spark_types(fixtures.model_fk_constraint_schema_yml),
        }

    @pytest.fixture(scope="class")
    def expected_sql(self):
        # An incremental table is built with merge-on-read row-level writes (write_mode).
        modes = ", ".join(
            f"'write.{op}.mode' = 'merge-on-read'" for op in ("merge", "update", "delete")
        )
        return EXPECTED_DDL.replace("using iceberg as", f"using iceberg tblproperties ({modes}) as")


class TestModelConstraintsRuntimeEnforcement(BaseModelConstraintsRuntimeEnforcement):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": fixtures.my_model_wrong_order_depends_on_fk_sql,
            "foreign_key_model.sql": fixtures.foreign_key_model_sql,
            "constraints_schema.yml": spark_types(fixtures.constrained_model_schema_yml),
        }

    @pytest.fixture(scope="class")
    def expected_sql(self):
        return EXPECTED_DDL


class TestConstraintQuotedColumn(BaseConstraintQuotedColumn):
    @pytest.fixture(scope="class")
    def models(self):
        # Spark quotes names with backticks: the check constraint names `from` so.
        return {
            "my_model.sql": fixtures.my_model_with_quoted_column_name_sql,
            "constraints_schema.yml": spark_types(fixtures.model_quoted_column_schema_yml)
            .replace('("from" = ', "(`from` = ")
            .replace("""'"from"'""", "'`from`'"),
        }

    @pytest.fixture(scope="class")
    def expected_sql(self):
        guard = (
            "case when `{name}` is null then raise_error('contract of model <model_identifier> "
            "column `{name}` is not_null, but the query returned null in it. nothing was "
            "written.') else `{name}` end as `{name}`"
        )
        return f"""
create table <model_identifier> using iceberg as
select {guard.format(name="id")}, {guard.format(name="from")}, `date_day`
from (
    select
      'blue' as `from`,
      1 as id,
      '2019-01-01' as date_day
) as model_subq
"""


class SparkNotNullError:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": fixtures.my_model_sql,
            "constraints_schema.yml": spark_types(fixtures.model_schema_yml),
        }

    @pytest.fixture(scope="class")
    def expected_error_messages(self):
        return ["Contract of model `my_model`: column `id` is not_null", "Nothing was written"]


class TestTableConstraintsRollback(SparkNotNullError, BaseConstraintsRollback):
    pass


class TestIncrementalConstraintsRollback(SparkNotNullError, BaseIncrementalConstraintsRollback):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": fixtures.my_incremental_model_sql,
            "constraints_schema.yml": spark_types(fixtures.model_schema_yml),
        }


# Spark sets its session time zone with `SET TIME ZONE` and reads it with current_timezone().
SQL_HEADER_MODEL = """
{{{{ config(materialized="{materialized}", on_schema_change="append_new_columns") }}}}

{{% call set_sql_header(config) %}}
set time zone 'Asia/Kolkata';
{{%- endcall %}}
select current_timezone() as column_name
"""


class SqlHeaderChecksTheTimeZone:
    """Besides the base's test (which only builds the model): the header ran in the
    session of the model's statement, as the stored value proves."""

    def test_sql_header_ran_before_the_model(self, project):
        run_dbt(["run", "-s", "my_model_contract_sql_header"])
        rows = project.run_sql(
            f"select column_name from {project.test_schema}.my_model_contract_sql_header",
            fetch="all",
        )
        # Every row (an incremental run after the base's test appends one more).
        assert rows and {tuple(r) for r in rows} == {("Asia/Kolkata",)}


class TestTableContractSqlHeader(SqlHeaderChecksTheTimeZone, BaseTableContractSqlHeader):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model_contract_sql_header.sql": SQL_HEADER_MODEL.format(materialized="table"),
            "constraints_schema.yml": spark_types(fixtures.model_contract_header_schema_yml),
        }


class TestIncrementalContractSqlHeader(
    SqlHeaderChecksTheTimeZone, BaseIncrementalContractSqlHeader
):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model_contract_sql_header.sql": SQL_HEADER_MODEL.format(materialized="incremental"),
            "constraints_schema.yml": spark_types(fixtures.model_contract_header_schema_yml),
        }


class TestIncrementalForeignKeyConstraint(BaseIncrementalForeignKeyConstraint):
    pass


# --- beyond the suite: what enforcement means for an Iceberg table ---

NOT_NULL_SCHEMA = """
version: 2
models:
  - name: orders
    config:
      contract: {enforced: true}
      materialized: incremental
      on_schema_change: append_new_columns
      unique_key: id
    columns:
      - name: id
        data_type: int
        constraints: [{type: not_null}]
      - name: note
        data_type: string
"""
ORDERS = "select cast({id} as int) as id, cast('{note}' as string) as note"


class TestNotNullIsARequiredIcebergField:
    """The built table's field is required in the Iceberg schema, so an engine writing to
    it outside dbt is refused a NULL too; a NULL from the model fails the incremental run
    with nothing committed."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS.format(id=1, note="first"), "schema.yml": NOT_NULL_SCHEMA}

    def test_not_null_holds_for_every_writer(self, project):
        run_dbt(["run"])
        with get_connection(project.adapter):
            table = project.adapter.iceberg.load_table(project.test_schema, "orders")
        fields = {f.name: f.required for f in table.schema().fields}
        assert fields == {"id": True, "note": False}
        snapshot = table.current_snapshot().snapshot_id

        with pytest.raises(Exception, match="(?i)null value appeared in non-nullable field"):
            project.run_sql(
                f"insert into {project.test_schema}.orders values (cast(null as int), 'x')"
            )

        write_file(ORDERS.format(id="null", note="second"), "models", "orders.sql")
        results, output = run_dbt_and_capture(["run"], expect_pass=False)
        assert "column `id` is not_null" in results[0].message
        with get_connection(project.adapter):
            table = project.adapter.iceberg.load_table(project.test_schema, "orders")
        assert table.current_snapshot().snapshot_id == snapshot
        rows = project.run_sql(f"select id, note from {project.test_schema}.orders", fetch="all")
        assert [tuple(r) for r in rows] == [(1, "first")]
