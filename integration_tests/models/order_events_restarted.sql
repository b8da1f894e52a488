{{ config(materialized='incremental', on_schema_change='recreate_empty') }}
{#- A new column (schema_phase 2) restarts the table with only that run's rows. -#}
select order_id, order_ts
{%- if var('schema_phase', 1) == 2 %}, 'v2' as version{% endif %}
from {{ ref('orders') }}
{% if is_incremental() %}
where order_ts >= (select max(order_ts) from {{ ref('orders') }})
{% endif %}
