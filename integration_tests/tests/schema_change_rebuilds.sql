-- The replacing on_schema_change modes: phase 2 added a column to each model.
{% set phase = var('schema_phase', 1) %}
with checks as (
  select 'chunked rebuild holds every order' as what,
         (select count(*) from {{ ref('orders_rebuilt_in_chunks') }}) as actual,
         (select count(*) from {{ ref('orders') }}) as expected
  union all
  select 'full_refresh holds every order',
         (select count(*) from {{ ref('orders_full_refresh_on_change') }}),
         (select count(*) from {{ ref('orders') }})
  {% if phase == 2 %}
  union all
  select 'chunked rebuild filled the new column in history',
         (select count(*) from {{ ref('orders_rebuilt_in_chunks') }}
          where amount_cents = cast(amount * 100 as bigint)),
         (select count(*) from {{ ref('orders') }})
  union all
  select 'full_refresh filled the new column in history',
         (select count(*) from {{ ref('orders_full_refresh_on_change') }}
          where status_code = upper(status)),
         (select count(*) from {{ ref('orders') }})
  union all
  select 'recreate_empty kept only the last run''s rows',
         (select count(*) from {{ ref('order_events_restarted') }} where version = 'v2'),
         (select count(*) from {{ ref('orders') }}
          where order_ts = (select max(order_ts) from {{ ref('orders') }}))
  union all
  select 'recreate_empty table has nothing else',
         (select count(*) from {{ ref('order_events_restarted') }} where version is null), 0
  {% else %}
  union all
  select 'append run one holds every order',
         (select count(*) from {{ ref('order_events_restarted') }}),
         (select count(*) from {{ ref('orders') }})
  {% endif %}
)
select * from checks where actual <> expected
