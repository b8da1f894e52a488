-- The partition spec days(order_ts) x bucket(4, customer_id), read back from the Iceberg
-- metadata table `<table>.partitions`: 6 orders over 3 days fall into 5 partitions.
with partitions as (
  select
    partition.order_ts_day as order_day,
    partition.customer_id_bucket as customer_bucket,
    record_count
  from {{ ref('orders_partitioned') }}.partitions
),

expected as (
  -- system.bucket is Iceberg's own bucket function: the same hash as the partition transform.
  select
    cast(order_ts as date) as order_day,
    system.bucket(4, customer_id) as customer_bucket,
    count(*) as record_count
  from {{ ref('orders') }}
  group by 1, 2
)

{{ diff_rows('partitions', 'expected') }}
union all
select 'expected 5 partitions, found ' || count(*), null, null, null
from partitions having count(*) <> 5
