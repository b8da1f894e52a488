{{ config(materialized='table') }}
select
  c.customer_id,
  c.name,
  coalesce(t.order_count, 0) as order_count,
  coalesce(t.total_amount, cast(0 as decimal(20,2))) as total_amount
from {{ ref('stg_customers') }} as c
left join {{ ref('order_totals') }} as t
  on c.customer_id = t.customer_id
