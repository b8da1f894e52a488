-- Incremental merge on customer_id. The first run (CTAS) has the tier changes before the
-- newest day; the first merge re-reads 2024-04-01 on (lookback), so it updates customer 1
-- in place (same tier), updates customer 2 to gold, inserts customer 4 and leaves
-- customer 3 alone. Later merges re-apply the newest day and change nothing.
with after_create as (
  select * from values
    (1, 'silver', date'2024-04-01', 'create'),
    (2, 'bronze', date'2024-02-11', 'create'),
    (3, 'bronze', date'2024-03-30', 'create')
    as t(customer_id, tier, changed_at, written_by)
),

after_merge as (
  select * from values
    (1, 'silver', date'2024-04-01', 'merge'),
    (2, 'gold', date'2024-04-02', 'merge'),
    (3, 'bronze', date'2024-03-30', 'create'),
    (4, 'bronze', date'2024-04-02', 'merge')
    as t(customer_id, tier, changed_at, written_by)
),

expected as (
  select * from after_create where {{ commits_since_create(ref('customer_tiers')) }} = 1
  union all
  select * from after_merge where {{ commits_since_create(ref('customer_tiers')) }} > 1
),

actual as (
  select customer_id, tier, changed_at, written_by from {{ ref('customer_tiers') }}
)

{{ diff_rows('actual', 'expected') }}
