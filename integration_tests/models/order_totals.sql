{{ config(materialized='ephemeral') }}
-- Ephemeral: inlined as a CTE into customer_order_summary, never created in the catalog.
select
  customer_id,
  count(*) as order_count,
  sum(amount) as total_amount
from {{ ref('orders') }}
where status <> 'returned'
group by customer_id
