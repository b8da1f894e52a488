"""`skip_when_unchanged`'s record of what a build is built from: the digest follows the SQL,
the config and the plan; what changed is said by table, with both snapshots; a record
that cannot be read is no record."""

from __future__ import annotations

from dbt.adapters.base.relation import BaseRelation

from dbt.adapters.s3tables.engines.query_inputs import QueryInputs
from dbt.adapters.s3tables.lifecycle.unchanged_inputs import (
    BuildInputs,
    build_inputs,
    is_target,
    what_changed,
)

QUERY = QueryInputs("plan-1", {"local.analytics.orders": 5, "local.analytics.empty": None})


def test_the_digest_follows_the_sql_the_config_and_the_plan() -> None:
    built = build_inputs("select 1", {"materialized": "table"}, QUERY)
    assert build_inputs("select 1", {"materialized": "table"}, QUERY) == built
    assert build_inputs("select 2", {"materialized": "table"}, QUERY).query != built.query
    assert build_inputs("select 1", {"materialized": "view"}, QUERY).query != built.query
    other_plan = QueryInputs("plan-2", QUERY.tables)
    assert build_inputs("select 1", {"materialized": "table"}, other_plan).query != built.query


def test_the_record_round_trips_through_the_snapshot_summary() -> None:
    built = build_inputs("select 1", {}, QUERY)
    assert BuildInputs.from_tag(built.tag()) == built
    for unreadable in (None, "", "not json", '{"query": "x"}', "[1]"):
        assert BuildInputs.from_tag(unreadable) is None


def test_what_changed_names_each_table_with_both_snapshots() -> None:
    built = build_inputs("select 1", {}, QUERY)
    assert what_changed(built, built) is None
    assert "no record" in (what_changed(None, built) or "")
    moved = BuildInputs(built.query, {**built.tables, "local.analytics.orders": 6})
    assert what_changed(built, moved) == (
        "changed since its last build: local.analytics.orders (snapshot 5 -> 6)"
    )
    added = BuildInputs(built.query, {**built.tables, "local.analytics.new": 1})
    assert "local.analytics.new (snapshot None -> 1)" in (what_changed(built, added) or "")
    assert "SQL, config" in (what_changed(built, BuildInputs("other", built.tables)) or "")


def test_a_plan_table_is_the_target_whatever_its_catalog_quoting_or_branch() -> None:
    target = BaseRelation.create(database="local", schema="analytics", identifier="orders")
    assert is_target("local.analytics.orders", target)
    assert is_target("`local`.`analytics`.`Orders`@audit", target)
    assert not is_target("local.analytics.orders_v2", target)
    assert not is_target("local.staging.orders", target)
