"""listagg for Spark 3.5, which has no WITHIN GROUP."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import CompilationError

from dbt.adapters.s3tables.sql.cross_db import listagg_sql


def test_unordered_listagg_is_collect_list() -> None:
    assert listagg_sql("s", "','", None, None) == "array_join(collect_list(s), ',')"
    assert listagg_sql("s", "','", None, 2) == "array_join(slice(collect_list(s), 1, 2), ',')"


def test_ordered_listagg_sorts_by_the_keys_then_keeps_the_values() -> None:
    assert listagg_sql("s", "'_|_'", "order by order_col", None) == (
        "array_join(transform(sort_array(collect_list(struct(order_col as k0, s as v)), "
        "true), x -> x.v), '_|_')"
    )
    assert listagg_sql("s", "','", "ORDER BY a desc, coalesce(b, 'x,y') DESC", 3) == (
        "array_join(slice(transform(sort_array(collect_list(struct(a as k0, "
        "coalesce(b, 'x,y') as k1, s as v)), false), x -> x.v), 1, 3), ',')"
    )


def test_distinct_measure_keeps_each_value_once() -> None:
    sql = listagg_sql("DISTINCT s", "','", "order by s", None)
    assert sql.startswith("array_join(array_distinct(transform(sort_array(collect_list(")
    assert "s as v" in sql


@pytest.mark.parametrize("clause", ["order by a asc, b desc", "sorted by a"])
def test_orders_spark_cannot_sort_are_errors(clause: str) -> None:
    with pytest.raises(CompilationError, match="listagg"):
        listagg_sql("s", "','", clause, None)
