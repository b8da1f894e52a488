"""dbt-tests-adapter's dbt_show check that `dbt show --limit` around a query with its own
`limit` fails with the engine's syntax error (BaseShowLimit and BaseShowSqlHeader run in
test_basic.py); the expected message is Spark's wording of that error."""

from dbt.tests.adapter.dbt_show.test_dbt_show import BaseShowDoesNotHandleDoubleLimit


class TestShowDoesNotHandleDoubleLimit(BaseShowDoesNotHandleDoubleLimit):
    # Postgres says `syntax error at or near "limit"`; Spark's parser reports the same place.
    DATABASE_ERROR_MESSAGE = "Syntax error at or near 'limit'"
