{{ config(materialized='view') }}
select customer_id, upper(name) as name_upper from {{ ref('stg_customers') }}
