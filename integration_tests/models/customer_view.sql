{#- A view (ephemeral under the S3 Tables rules: see dbt_project.yml). -#}
select customer_id, upper(name) as name_upper from {{ ref('stg_customers') }}
