"""A project with every kind of node dbt parses (models, a seed, a snapshot, data and unit
tests, a semantic model, metrics, a saved query exporting as a table and as a view) parses,
builds and lists: the adapter's `generate_database_name` takes each of them, including the
saved query's exports, whose config is no node config."""

from __future__ import annotations

import json

import pytest
from dbt.tests.util import run_dbt

SEED = """id,customer_id,status,amount,ordered_at
1,10,placed,12.50,2024-01-01
2,10,shipped,7.25,2024-01-02
3,11,placed,30.00,2024-01-02
"""

ORDERS = """
{{ config(materialized='table') }}
select id, customer_id, status, cast(amount as decimal(10, 2)) as amount,
       cast(ordered_at as date) as ordered_at
from {{ ref('raw_orders') }}
"""

CUSTOMERS = """
{{ config(materialized='view') }}
select customer_id, count(*) as order_count from {{ ref('orders') }} group by customer_id
"""

TIME_SPINE = """
{{ config(materialized='table') }}
select explode(sequence(date'2024-01-01', date'2024-01-31', interval 1 day)) as date_day
"""

SCHEMA_YML = """
version: 2

models:
  - name: orders
    columns:
      - name: id
        data_tests: [not_null, unique]
  - name: customers
  - name: metricflow_time_spine
    time_spine:
      standard_granularity_column: date_day
    columns:
      - name: date_day
        granularity: day

unit_tests:
  - name: customers_counts_orders
    model: customers
    given:
      - input: ref('orders')
        rows:
          - {id: 1, customer_id: 7}
          - {id: 2, customer_id: 7}
    expect:
      rows:
        - {customer_id: 7, order_count: 2}

snapshots:
  - name: orders_snapshot
    relation: ref('orders')
    config:
      unique_key: id
      strategy: check
      check_cols: all

semantic_models:
  - name: orders
    model: ref('orders')
    defaults:
      agg_time_dimension: ordered_at
    entities:
      - name: order
        type: primary
        expr: id
      - name: customer
        type: foreign
        expr: customer_id
    dimensions:
      - name: ordered_at
        type: time
        type_params:
          time_granularity: day
      - name: status
        type: categorical
    measures:
      - name: order_total
        agg: sum
        expr: amount
      - name: order_count
        agg: sum
        expr: 1

metrics:
  - name: order_total
    label: Order total
    type: simple
    type_params:
      measure: order_total
  - name: orders
    label: Orders
    type: simple
    type_params:
      measure: order_count
  - name: average_order
    label: Average order
    type: ratio
    type_params:
      numerator: order_total
      denominator: orders

saved_queries:
  - name: order_metrics
    query_params:
      metrics: [order_total, orders]
      group_by: ["TimeDimension('order__ordered_at', 'day')", "Dimension('order__status')"]
    exports:
      - name: order_metrics_table
        config:
          export_as: table
      - name: order_metrics_view
        config:
          export_as: view
          alias: order_metrics_by_status
"""

LISTED = {
    ("seed", "raw_orders"),
    ("model", "orders"),
    ("model", "customers"),
    ("model", "metricflow_time_spine"),
    ("snapshot", "orders_snapshot"),
    ("test", "not_null_orders_id"),
    ("test", "unique_orders_id"),
    ("unit_test", "customers_counts_orders"),
    ("semantic_model", "orders"),
    ("metric", "order_total"),
    ("metric", "orders"),
    ("metric", "average_order"),
    ("saved_query", "order_metrics"),
}


class TestEveryNodeKindParsesBuildsAndLists:
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "semantic"}

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"raw_orders.csv": SEED}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "orders.sql": ORDERS,
            "customers.sql": CUSTOMERS,
            "metricflow_time_spine.sql": TIME_SPINE,
            "schema.yml": SCHEMA_YML,
        }

    def test_parse_build_and_list(self, project):
        manifest = run_dbt(["parse"])
        exports = manifest.saved_queries["saved_query.semantic.order_metrics"].exports
        # An export lands in the profile's catalog and schema, like the models.
        assert [(e.config.export_as.value, e.config.alias, e.config.database) for e in exports] == [
            ("table", "order_metrics_table", None),
            ("view", "order_metrics_by_status", None),
        ]
        assert {e.config.schema_name for e in exports} == {project.test_schema}

        results = run_dbt(["build"])
        assert {r.node.name: r.status for r in results} == {
            "raw_orders": "success",
            "orders": "success",
            "customers": "success",
            "metricflow_time_spine": "success",
            "orders_snapshot": "success",
            "not_null_orders_id": "pass",
            "unique_orders_id": "pass",
            "customers_counts_orders": "pass",
            # dbt Core runs no export (the Semantic Layer does): its saved queries are no-ops.
            "order_metrics": "no-op",
        }

        listed = run_dbt(["ls", "--output", "json", "--output-keys", "resource_type name"])
        assert {(n["resource_type"], n["name"]) for n in map(json.loads, listed)} == LISTED
