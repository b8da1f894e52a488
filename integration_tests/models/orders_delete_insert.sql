{{ config(materialized='incremental', incremental_strategy='delete+insert', unique_key='customer_id') }}
{#- delete+insert in one MERGE: every run deletes the rows of the customers present in the
    source and inserts all their orders again (no dedup), leaving the same rows. -#}
select customer_id, order_id, amount from {{ ref('orders') }}
