-- Incremental append: the first run loads orders up to var('orders_initial_load_max_id'),
-- the second appends the rest, later runs append nothing. Every order exactly once, with
-- its values in the right columns (the incremental branch selects them in another order).
with expected as (
  select
    order_id, customer_id, amount, status,
    case when order_id <= {{ var('orders_initial_load_max_id') }} then 'initial' else 'incremental' end as batch
  from {{ ref('orders') }}
  where order_id <= {{ var('orders_initial_load_max_id') }}
     or {{ commits_since_create(ref('orders_appended')) }} > 1
),

actual as (
  select order_id, customer_id, amount, status, batch from {{ ref('orders_appended') }}
)

{{ diff_rows('actual', 'expected') }}
