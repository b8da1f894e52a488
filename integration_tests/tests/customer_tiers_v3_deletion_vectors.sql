-- customer_tiers_v3 is an Iceberg format v3 table with customer_tiers' rows; once merged
-- into (after its first build), its deletes are deletion vectors (Puffin files).
{%- set table = ref('customer_tiers_v3') %}
{%- set format_version = table_properties(table).get('format-version') %}
with actual as (
  select customer_id, tier, changed_at from {{ table }}
),

expected as (
  select customer_id, tier, changed_at from {{ ref('customer_tiers') }}
),

rows_differ as (
  {{ diff_rows('actual', 'expected') }}
)

select 'format-version' as problem, '3' as expected, '{{ format_version }}' as actual
where '{{ format_version }}' <> '3'
union all
select 'delete file in ' || file_format, 'PUFFIN', file_path
from {{ table }}.delete_files where file_format <> 'PUFFIN'
union all
select 'no deletion vector after a merge', 'at least 1', '0'
from {{ table }}.delete_files
having count(*) = 0 and {{ commits_since_create(table) }} > 1
union all
select 'rows differ from customer_tiers', '', cast(count(*) as string)
from rows_differ having count(*) > 0
