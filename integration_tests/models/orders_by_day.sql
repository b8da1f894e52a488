{{ config(materialized='incremental', incremental_strategy='insert_overwrite', partition_by=['order_day']) }}
{#- insert_overwrite replaces only the days present in the new rows: incremental runs
    re-read just the newest day, and the other days' partitions stay as they were. -#}
select order_id, amount, cast(order_ts as date) as order_day from {{ ref('orders') }}
{% if is_incremental() %}
where cast(order_ts as date) = (select max(cast(order_ts as date)) from {{ ref('orders') }})
{% endif %}
