-- Snapshot (check strategy, all columns): every customer has exactly one current row
-- (dbt_valid_to is null) holding the seed's values, and since the seed does not change
-- between builds, no customer has gained a second version.
with snapshot as (
  select * from {{ ref('customers_snapshot') }}
),

per_key as (
  select
    customer_id,
    count_if(dbt_valid_to is null) as current_rows,
    count(*) as all_rows
  from snapshot
  group by customer_id
),

current_rows as (
  select customer_id, name, signup_date, balance, notes from snapshot where dbt_valid_to is null
),

seed as (
  select customer_id, name, signup_date, balance, notes from {{ ref('customers') }}
)

select 'customer ' || customer_id || ' has ' || current_rows || ' current rows' as problem
from per_key where current_rows <> 1
union all
select 'customer ' || customer_id || ' has ' || all_rows || ' versions'
from per_key where all_rows <> 1
union all
select 'current row differs from the seed: ' || problem || ' ' || customer_id
from ({{ diff_rows('current_rows', 'seed') }})
