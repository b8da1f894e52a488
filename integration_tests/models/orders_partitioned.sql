{{ config(
    materialized='table',
    partition_by=['days(order_ts)', 'bucket(4, customer_id)'],
    tblproperties={
      'write.format.default': 'parquet',
      'write.parquet.compression-codec': 'zstd',
      'write.distribution-mode': 'hash',
    },
) }}
select order_id, customer_id, order_ts, amount, status
from {{ ref('orders') }}
