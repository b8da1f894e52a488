{{ config(materialized='incremental', incremental_strategy='delete+insert', unique_key='customer_id',
          on_schema_change='append_new_columns') }}
{#- Schema evolution without drops. With var schema_phase=2 the model stops returning
    `signup_date` and starts returning `name_length`: the column is added through PyIceberg,
    `signup_date` stays (its old values kept, NULL for the rewritten customer). -#}
{% if var('schema_phase', 1) == 1 %}
select customer_id, name, signup_date from {{ ref('customers') }}
{% else %}
select customer_id, name, length(name) as name_length from {{ ref('customers') }}
where customer_id = 1
{% endif %}
