{{ config(materialized='incremental') }}
{#- No unique_key: the adapter appends (INSERT INTO). The first run loads the orders up to
    var('orders_initial_load_max_id'); the next run appends the newer ones; later runs find
    nothing newer and append nothing. -#}
{% if is_incremental() %}
-- Columns deliberately in another order: the adapter aligns them to the table by name.
select 'incremental' as batch, status, amount, customer_id, order_id
from {{ ref('orders') }}
where order_id > (select coalesce(max(order_id), 0) from {{ this }})
{% else %}
select order_id, customer_id, amount, status, 'initial' as batch
from {{ ref('orders') }}
where order_id <= {{ var('orders_initial_load_max_id') }}
{% endif %}
