-- Every customer is still there; phase 2 added name_length and kept signup_date.
{% set phase = var('schema_phase', 1) %}
with checks as (
  select 'rows' as what, (select count(*) from {{ ref('customers_evolving') }}) as actual,
         (select count(*) from {{ ref('customers') }}) as expected
  {% if phase == 2 %}
  union all
  select 'rewritten customer has the new column and NULL in the kept one',
         (select count(*) from {{ ref('customers_evolving') }}
          where customer_id = 1 and name_length = length(name) and signup_date is null), 1
  union all
  select 'other customers keep their signup_date',
         (select count(*) from {{ ref('customers_evolving') }} e
          join {{ ref('customers') }} c using (customer_id)
          where e.customer_id <> 1 and e.signup_date <=> c.signup_date and e.name_length is null),
         (select count(*) from {{ ref('customers') }} where customer_id <> 1)
  {% endif %}
)
select * from checks where actual <> expected
