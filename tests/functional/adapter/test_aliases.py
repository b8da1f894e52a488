"""dbt-tests-adapter's aliases suite: model aliases from config and project, duplicate
aliases rejected in one schema and accepted across schemas.

Adapted: the suite's `string_literal` macro dispatches to a Postgres `'...'::text` cast;
this adapter gets its own implementation with CAST.
"""

import pytest
from dbt.exceptions import CompilationError
from dbt.tests.adapter.aliases import fixtures
from dbt.tests.adapter.aliases.test_aliases import (
    BaseAliasErrors,
    BaseAliases,
    BaseSameAliasDifferentDatabases,
    BaseSameAliasDifferentSchemas,
)
from dbt.tests.util import run_dbt

MACROS__SPARK_STRING_LITERAL_SQL = """
{% macro s3tables__string_literal(s) %}
    cast('{{ s }}' as string)
{% endmacro %}
"""


class SparkStringLiteral:
    @pytest.fixture(scope="class")
    def macros(self):
        return {
            "cast.sql": fixtures.MACROS__CAST_SQL,
            "spark_cast.sql": MACROS__SPARK_STRING_LITERAL_SQL,
            "expect_value.sql": fixtures.MACROS__EXPECT_VALUE_SQL,
        }


class TestAliases(SparkStringLiteral, BaseAliases):
    pass


class TestAliasErrors(SparkStringLiteral, BaseAliasErrors):
    def test_alias_dupe_throws_exeption(self, project):
        """The base's check passes whatever dbt does: its `assert message in exc` inside
        `pytest.raises` raises a TypeError before dbt runs. Here the run itself must fail
        on the two models sharing one relation."""
        with pytest.raises(CompilationError, match="identical database representation"):
            run_dbt(["run"])


class TestSameAliasDifferentSchemas(SparkStringLiteral, BaseSameAliasDifferentSchemas):
    pass


class TestSameAliasDifferentDatabases(SparkStringLiteral, BaseSameAliasDifferentDatabases):
    pass
