"""dbt-tests-adapter's column_types suite: the adapter's Column reports each Spark type as
string, float, integer or numeric. The model is rewritten from Postgres `::` casts to Spark
casts, one Spark type per Postgres type of the original."""

import pytest
from dbt.tests.adapter.column_types import fixtures
from dbt.tests.adapter.column_types.test_column_types import BasePostgresColumnTypes

# Spark has no `::` cast, no `text` and no `double precision`: the same eight columns with
# Spark's names for those types (varchar(20) reads back as string, as it does in Spark).
model_sql = """
select
    cast(1 as smallint) as smallint_col,
    cast(2 as integer) as int_col,
    cast(3 as bigint) as bigint_col,
    cast(4.0 as real) as real_col,
    cast(5.0 as double) as double_col,
    cast(6.0 as numeric) as numeric_col,
    cast('7' as string) as text_col,
    cast('8' as varchar(20)) as varchar_col
"""


class TestColumnTypes(BasePostgresColumnTypes):
    @pytest.fixture(scope="class")
    def models(self):
        return {"model.sql": model_sql, "schema.yml": fixtures.schema_yml}
