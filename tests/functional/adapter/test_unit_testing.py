"""dbt-tests-adapter's unit_testing suite: unit-test fixtures (rows, CSV, reserved-word and
mixed-case column names, each Spark type) are cast and compared in Spark SQL. The type list and
the reserved-word model are rewritten in Spark's dialect."""

import pytest
from dbt.tests.adapter.unit_testing import test_quoted_reserved_word_column_names as reserved
from dbt.tests.adapter.unit_testing.test_case_insensitivity import BaseUnitTestCaseInsensivity
from dbt.tests.adapter.unit_testing.test_invalid_input import BaseUnitTestInvalidInput
from dbt.tests.adapter.unit_testing.test_quoted_reserved_word_column_names import (
    BaseUnitTestQuotedReservedWordColumnNames,
)
from dbt.tests.adapter.unit_testing.test_types import (
    BaseUnitTestingTypes,
    BaseUnitTestingVarcharFixtureNoTruncation,
)


class TestUnitTestCaseInsensitivity(BaseUnitTestCaseInsensivity):
    pass


class TestUnitTestInvalidInput(BaseUnitTestInvalidInput):
    pass


class TestUnitTestQuotedReservedWordColumnNames(BaseUnitTestQuotedReservedWordColumnNames):
    @pytest.fixture(scope="class")
    def models(self):
        # Spark quotes names with backticks; "GROUP" would be a string literal.
        return {
            "my_model.sql": reserved.my_model_sql,
            "my_upstream_model.sql": "select 1 as `GROUP`",
            "unit_tests.yml": reserved.test_my_model_csv_fixtures_yml,
        }


class TestUnitTestingTypes(BaseUnitTestingTypes):
    @pytest.fixture
    def data_types(self):
        # (sql_value, yaml_value): the base list's Postgres types (TIMESTAMPTZ, `::numeric`,
        # `::json`) replaced by Spark's: both timestamp kinds, decimal, and the complex types
        # (given in YAML as the SQL expression that builds them).
        return [
            ["1", "1"],
            ["'1'", "1"],
            ["2.5", "2.5"],
            ["true", "true"],
            ["DATE '2020-01-02'", "2020-01-02"],
            ["TIMESTAMP '2013-11-03 00:00:00-0'", "2013-11-03 00:00:00-0"],
            ["TIMESTAMP_NTZ '2013-11-03 00:00:00'", "2013-11-03 00:00:00"],
            ["cast('1' as decimal(10, 2))", "1"],
            ["array(1, 2, 3)", "'array(1, 2, 3)'"],
            ["map('a', 1, 'b', 2)", """'map("a", 1, "b", 2)'"""],
            ["named_struct('a', 1, 'b', 'x')", """'named_struct("a", 1, "b", "x")'"""],
        ]


class TestUnitTestingVarcharFixtureNoTruncation(BaseUnitTestingVarcharFixtureNoTruncation):
    pass
