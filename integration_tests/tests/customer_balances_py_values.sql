-- The Python model holds every customer's balance in cents; its incremental run (the
-- suite's second build, schema_phase 2) added `in_credit` to every row it merged.
with expected as (
  select customer_id, cast(balance * 100 as bigint) as balance_cents from {{ ref('customers') }}
),
actual as (
  select customer_id, balance_cents from {{ ref('customer_balances_py') }}
)
{{ diff_rows('actual', 'expected') }}
{% if var('schema_phase', 1) == 2 %}
union all
select 'in_credit missing', customer_id, balance_cents
from {{ ref('customer_balances_py') }}
where not (in_credit <=> (balance_cents >= 0))
{% endif %}
