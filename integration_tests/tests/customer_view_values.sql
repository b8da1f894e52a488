-- The view on a view returns every customer with the name upper-cased, unicode included.
with expected as (
  select * from values
    (1, 'ADA'),
    (2, 'BJØRN'),
    (3, 'CHLOÉ'),
    (4, 'O\'BRIEN, SEÁN')
    as t(customer_id, name_upper)
),

actual as (
  select customer_id, name_upper from {{ ref('customer_view') }}
)

{{ diff_rows('actual', 'expected') }}
