{#- A view, except under the S3 Tables rules (S3 Tables has no views): ephemeral there. -#}
{{ config(materialized='ephemeral' if target.s3tables_rules else 'view') }}
select customer_id, upper(name) as name_upper from {{ ref('stg_customers') }}
