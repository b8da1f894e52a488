-- tblproperties reach the Iceberg table, and its data files are in the format they ask for.
{%- set orders_partitioned = ref('orders_partitioned') %}
{%- set expected = {
    'write.format.default': 'parquet',
    'write.parquet.compression-codec': 'zstd',
    'write.distribution-mode': 'hash',
    'format-version': '2',
} %}
{%- set actual = table_properties(orders_partitioned) %}
with properties as (
  select * from values
  {%- for key, value in expected.items() %}
    ('{{ key }}', '{{ value }}', {{ "'" ~ actual[key] ~ "'" if actual.get(key) is not none else 'null' }}){{ ',' if not loop.last }}
  {%- endfor %}
    as t(property, expected, actual)
)

select 'property ' || property as problem, expected, actual
from properties where not (actual <=> expected)
union all
select 'data file in ' || file_format, 'PARQUET', file_path
from {{ orders_partitioned }}.files where file_format <> 'PARQUET'
union all
select 'no data files', 'at least 1', '0'
from {{ orders_partitioned }}.files having count(*) = 0
