{#-- A seed's rows as text and the checked casts loading them, as the adapter's
     dbt/adapters/s3tables/seeds/values.py writes them (materializations/seed.sql). --#}

{#-- A CSV cell, as agate's value, as the text Spark casts back to it without loss
     (seed_value_as_text). --#}
{% macro seed_text(value) -%}
  {%- if value is none -%}{{ return(none) }}{%- endif -%}
  {%- if value is boolean -%}{{ return('true' if value else 'false') }}{%- endif -%}
  {%- if value is number and value is not integer -%}
    {#-- Plain notation: `1E+2` would cast to double differently than `100`. --#}
    {{ return('{:f}'.format(value)) }}
  {%- endif -%}
  {%- if value.hour is defined and value.isoformat is defined -%}{{ return(value.isoformat(' ')) }}{%- endif -%}
  {%- if value.isoformat is defined -%}{{ return(value.isoformat()) }}{%- endif -%}
  {{ return(value | string) }}
{%- endmacro %}

{% macro seed_text_literal(value) -%}
  {{ return('CAST(NULL AS STRING)' if value is none else s3tables_spark.sql_string(value)) }}
{%- endmacro %}

{#-- One statement creating a temporary view of text columns `c0..cN` holding `rows` and
     their row numbers (`dbt_row`, 1 for the first data row), as text_rows_view_sql. --#}
{% macro seed_text_view_sql(view, rows, width) -%}
  {%- set names = [] -%}
  {%- for i in range(width) -%}{%- do names.append('c' ~ i) -%}{%- endfor -%}
  {%- if not rows -%}
    {%- set nulls = [] -%}
    {%- for name in names -%}{%- do nulls.append('CAST(NULL AS STRING) AS ' ~ name) -%}{%- endfor -%}
    {{ return('CREATE OR REPLACE TEMPORARY VIEW ' ~ view ~ ' AS SELECT ' ~ nulls | join(', ') ~ ', CAST(NULL AS BIGINT) AS dbt_row WHERE false') }}
  {%- endif -%}
  {%- set tuples = [] -%}
  {%- for row in rows -%}
    {%- set values = [] -%}
    {%- for value in row -%}{%- do values.append(s3tables_spark.seed_text_literal(value)) -%}{%- endfor -%}
    {%- do tuples.append('(' ~ (values + [loop.index | string]) | join(', ') ~ ')') -%}
  {%- endfor -%}
  {{ return('CREATE OR REPLACE TEMPORARY VIEW ' ~ view ~ ' AS SELECT * FROM VALUES\n' ~ tuples | join(',\n') ~ '\nAS seed_rows(' ~ (names + ['dbt_row']) | join(', ') ~ ')') }}
{%- endmacro %}

{#-- The query loading a seed from its text view, every column (`columns`: [(header, SQL
     name, type)]) cast, a value the cast would turn into NULL failing the statement with
     a message naming the file, row, column and value, as seed_select_sql. --#}
{% macro seed_select_sql(view, columns, seed_path, empty) -%}
  {%- set casts = [] -%}
  {%- for name, sql_name, data_type in columns -%}
    {%- set text = 'c' ~ loop.index0 -%}
    {%- set cast = 'CAST(' ~ text ~ ' AS ' ~ data_type ~ ')' -%}
    {%- if (data_type | trim | lower).startswith(('string', 'varchar', 'char')) -%}
      {%- do casts.append(cast ~ ' AS ' ~ sql_name) -%}
    {%- else -%}
      {%- set message = 'concat(' ~ s3tables_spark.sql_string('Seed ' ~ seed_path ~ ', row ') ~ ', dbt_row, ' ~ s3tables_spark.sql_string(": value '") ~ ', substr(' ~ text ~ ', 1, 100), '
            ~ s3tables_spark.sql_string("' of column " ~ name ~ ' does not fit its type ' ~ data_type ~ '. Nothing was loaded. Fix: correct the value in the CSV, or the column\'s type in column_types') ~ ')' -%}
      {%- do casts.append('CASE WHEN ' ~ text ~ ' IS NOT NULL AND ' ~ cast ~ ' IS NULL THEN raise_error(' ~ message ~ ') ELSE ' ~ cast ~ ' END AS ' ~ sql_name) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return('SELECT\n  ' ~ casts | join(',\n  ') ~ '\nFROM ' ~ s3tables_spark.quote(view) ~ (' WHERE false' if empty else '')) }}
{%- endmacro %}
