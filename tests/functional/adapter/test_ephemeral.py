"""dbt-tests-adapter's ephemeral suite: ephemeral models shared and nested as CTEs, and an
ephemeral model's compilation error skipping its dependant.

Adapted: the base compares the compiled view to Postgres' statement
(`create view "dbt"."schema"."x__dbt_tmp" as (...);`); here it is compared to this
adapter's (`create or replace view `schema`.`x` as ...`), with the same inlined CTEs.
"""

import os
import re

from dbt.tests.adapter.ephemeral.test_ephemeral import (
    BaseEphemeralErrorHandling,
    BaseEphemeralMulti,
    BaseEphemeralNested,
)
from dbt.tests.util import check_relations_equal, run_dbt


def compiled_sql(path: str) -> str:
    """The run's SQL the way the base compares it: digits and whitespace removed."""
    assert os.path.exists(path)
    with open(path) as fp:
        return "".join(re.sub(r"\d+", "", fp.read()).split())


def schema_without_digits(project) -> str:
    return re.sub(r"\d+", "", project.test_schema)


class TestEphemeralMulti(BaseEphemeralMulti):
    def test_ephemeral_multi(self, project):
        """The compiled SQL compared to this adapter's statement (see the module)."""
        run_dbt(["seed"])
        results = run_dbt(["run"])
        assert len(results) == 3

        check_relations_equal(project.adapter, ["seed", "dependent"])
        check_relations_equal(project.adapter, ["seed", "double_dependent"])
        check_relations_equal(project.adapter, ["seed", "super_dependent"])

        schema = schema_without_digits(project)
        sql_file = compiled_sql("./target/run/test/models/double_dependent.sql")
        # base and base_copy inlined once each, base_copy reading base's CTE.
        expected_sql = (
            f"create or replace view `{schema}`.`double_dependent` as "
            "with __dbt__cte__base as ("
            f"select * from {schema}.seed"
            "),  __dbt__cte__base_copy as ("
            "select * from __dbt__cte__base"
            ")-- base_copy just pulls from base. Make sure the listed"
            "-- graph of CTEs all share the same dbt_cte__base cte"
            "select * from __dbt__cte__base where gender = 'Male'"
            "union all"
            "select * from __dbt__cte__base_copy where gender = 'Female'"
        )
        assert sql_file == "".join(expected_sql.split())


class TestEphemeralNested(BaseEphemeralNested):
    def test_ephemeral_nested(self, project):
        """The compiled SQL compared to this adapter's statement (see the module)."""
        results = run_dbt(["run"])
        assert len(results) == 2

        schema = schema_without_digits(project)
        sql_file = compiled_sql("./target/run/test/models/root_view.sql")
        # ephemeral_level_two inlined before ephemeral, which reads it.
        expected_sql = (
            f"create or replace view `{schema}`.`root_view` as "
            "with __dbt__cte__ephemeral_level_two as ("
            f"select * from `{schema}`.`source_table`"
            "),  __dbt__cte__ephemeral as ("
            "select * from __dbt__cte__ephemeral_level_two"
            ")select * from __dbt__cte__ephemeral"
        )
        assert sql_file == "".join(expected_sql.split())


class TestEphemeralErrorHandling(BaseEphemeralErrorHandling):
    pass
