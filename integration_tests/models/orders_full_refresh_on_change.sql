{{ config(materialized='incremental', unique_key='order_id', on_schema_change='full_refresh') }}
{#- A new column (schema_phase 2) rebuilds the table from the whole history in one
    atomic CREATE OR REPLACE; other runs only merge the orders after the last one. -#}
select order_id, status
{%- if var('schema_phase', 1) == 2 %}, upper(status) as status_code{% endif %}
from {{ ref('orders') }}
{% if is_incremental() %}
where order_id > (select max(order_id) from {{ this }})
{% endif %}
