{{ config(materialized='incremental', incremental_strategy='scd2', unique_key='customer_id', scd_check_cols=['name', 'balance']) }}
{#- scd2: one open row per customer (valid_to null); a changed name or balance would close
    it and open a new one; unchanged customers (every rebuild here) change nothing. -#}
select customer_id, name, balance from {{ ref('customers') }}
