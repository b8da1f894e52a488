{{ config(materialized='incremental', unique_key='order_id',
          on_schema_change='full_incremental_refresh',
          full_incremental_refresh={'event_time': 'order_ts', 'begin': '2024-05-01', 'chunk': 'day'}) }}
{#- When the model gains a column (schema_phase 2), the table is replaced and its whole
    history rebuilt one day per commit; a run stopped part-way resumes at the next day. -#}
select order_id, customer_id, order_ts, amount
{%- if var('schema_phase', 1) == 2 %}, cast(amount * 100 as bigint) as amount_cents{% endif %}
from {{ ref('orders') }}
{% if is_incremental() %}
where order_ts > (select max(order_ts) from {{ this }})
{% endif %}
