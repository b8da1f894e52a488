-- Each strategy model holds exactly the rows its source implies, however many builds ran.
with orders as (select * from {{ ref('orders') }}),
checks as (
  select 'delete+insert rows' as what,
         (select count(*) from {{ ref('orders_delete_insert') }}) as actual,
         (select count(*) from orders) as expected
  union all
  select 'delete+insert duplicates', (select count(*) - count(distinct order_id) from {{ ref('orders_delete_insert') }}), 0
  union all
  select 'insert_overwrite rows', (select count(*) from {{ ref('orders_by_day') }}), (select count(*) from orders)
  union all
  select 'insert_overwrite days', (select count(distinct order_day) from {{ ref('orders_by_day') }}),
         (select count(distinct cast(order_ts as date)) from orders)
  union all
  select 'scd2 open rows', (select count(*) from {{ ref('customer_history') }} where valid_to is null),
         (select count(*) from {{ ref('customers') }})
  union all
  select 'scd2 all rows', (select count(*) from {{ ref('customer_history') }}),
         (select count(*) from {{ ref('customers') }})
  union all
  select 'microbatch rows', (select count(*) from {{ ref('orders_microbatch') }}),
         (select count(*) from {{ ref('recent_events') }} where event_ts >= date_sub(current_date(), 3))
  union all
  select 'microbatch duplicates', (select count(*) - count(distinct id) from {{ ref('orders_microbatch') }}), 0
)
select * from checks where actual <> expected
