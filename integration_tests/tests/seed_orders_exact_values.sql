-- Timestamps and decimals of the orders seed, exactly as written in the CSV (UTC session).
with o as (
  select * from {{ ref('orders') }}
),

checks as (
  select 'order_ts type' as check_name, (select max(typeof(order_ts)) from o) as actual, 'timestamp' as expected
  union all
  select 'amount type', (select max(typeof(amount)) from o), 'decimal(10,2)'
  union all
  select 'amount sum is exact', (select cast(sum(amount) as string) from o), '167.30'
  union all
  select 'last second of a day',
         (select cast(order_ts as string) from o where order_id = 104), '2024-05-02 23:59:59'
  union all
  select 'orders per day',
         (select concat_ws(',', transform(array_sort(collect_list(struct(day, n))), x -> x.day || ':' || x.n))
          from (select cast(order_ts as date) as day, count(*) as n from o group by 1)),
         '2024-05-01:2,2024-05-02:2,2024-05-03:2'
)

select * from checks where not (actual <=> expected)
