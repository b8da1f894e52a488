-- Table built on a view and an ephemeral model: exact per-customer totals of the orders
-- not returned (order 102 is returned), with the contract's types.
{%- set ephemeral = adapter.get_relation(database=none, schema=target.schema, identifier='order_totals') if execute else none %}
with expected as (
  select * from values
    (1, 'Ada', 1L, 19.99BD),
    (2, 'Bjørn', 1L, 100.00BD),
    (3, 'Chloé', 2L, 0.30BD),
    (4, 'O\'Brien, Seán', 1L, 42.00BD)
    as t(customer_id, name, order_count, total_amount)
),

actual as (
  select customer_id, name, order_count, total_amount from {{ ref('customer_order_summary') }}
)

{{ diff_rows('actual', 'expected') }}
union all
select 'total_amount is ' || max(typeof(total_amount)) || ', not decimal(20,2)', null, null, null, null
from actual having max(typeof(total_amount)) <> 'decimal(20,2)'
union all
-- An ephemeral model is inlined as a CTE: it must not exist in the catalog.
select 'ephemeral order_totals exists in the catalog', null, null, null, null
where {{ 'true' if ephemeral is not none else 'false' }}
