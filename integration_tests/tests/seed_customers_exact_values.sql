-- The customers seed holds exactly what the CSV says. One row per check; a row comes
-- back only when its check fails.
with c as (
  select * from {{ ref('customers') }}
),

checks as (
  select 'balance type (column_types)' as check_name,
         (select max(typeof(balance)) from c) as actual, 'decimal(10,2)' as expected
  union all
  select 'signup_date type (column_types)', (select max(typeof(signup_date)) from c), 'date'
  union all
  select 'decimal sum is exact', (select cast(sum(balance) as string) from c), '1234570.94'
  union all
  -- As doubles, 10.10 + 0.20 is 10.299999999999999.
  select 'small decimals add exactly',
         (select cast(sum(balance) as string) from c where customer_id in (1, 2)), '10.30'
  union all
  select 'negative decimal', (select cast(balance as string) from c where customer_id = 3), '-7.25'
  union all
  select 'embedded quotes and comma', (select notes from c where customer_id = 1), 'says "hi", often'
  union all
  select 'only quotes and commas', (select notes from c where customer_id = 4), 'a, b, "c"'
  union all
  select 'quoted name with apostrophe and comma', (select name from c where customer_id = 4), 'O\'Brien, Seán'
  union all
  select 'empty string cell is NULL (not empty string)',
         (select coalesce(concat('[', notes, ']'), 'NULL') from c where customer_id = 2), 'NULL'
  union all
  select 'empty date cell is NULL',
         (select coalesce(cast(signup_date as string), 'NULL') from c where customer_id = 4), 'NULL'
  union all
  select 'unicode name', (select name from c where customer_id = 2), 'Bjørn'
  union all
  select 'unicode length counts characters',
         (select cast(length(name) as string) from c where customer_id = 3), '5'
  union all
  select 'unicode symbols', (select notes from c where customer_id = 3), 'ünïcödé ✓'
  union all
  select 'date value', (select cast(signup_date as string) from c where customer_id = 3), '2024-03-30'
  union all
  select 'date arithmetic (leap year)',
         (select cast(datediff(max(signup_date), min(signup_date)) as string) from c), '85'
  union all
  select 'row count', (select cast(count(*) as string) from c), '4'
)

select * from checks where not (actual <=> expected)
