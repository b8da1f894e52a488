{#-- The seed materialization for the `spark` adapter on Iceberg tables, as the dbt-s3tables
     adapter loads a seed over a Spark server (dbt/adapters/s3tables/seeds/values.py): the
     CSV's cells as text in one temporary view, then one atomic `CREATE [OR REPLACE] TABLE
     ... AS SELECT` casting each column to its type, where a value that does not fit its
     type fails the load (Spark's cast would make it NULL) naming the file, row, column and
     value. dbt-spark's drops the table and inserts the rows batch by batch, each value
     sent as a float or a string: every `dbt seed` lost the table's history (S3 Tables
     refuses the drop's PURGE), a failed load left the table missing or part-filled, a
     value that did not fit became NULL, and a decimal went through a float. --#}

{% materialization seed, adapter='spark' -%}
  {%- do s3tables_spark.check_config_keys() -%}
  {%- set target = this.incorporate(type='table') -%}
  {%- set agate_table = load_agate_table() -%}
  {%- do s3tables_spark.check_names(target, agate_table.column_names | map('string') | list) -%}
  {%- set existing = load_relation(this) -%}
  {%- do store_result('agate_table', response='OK', agate_table=agate_table) -%}

  {{ run_hooks(pre_hooks) }}

  {%- set column_types = config.get('column_types') or {} -%}
  {%- set quote_columns = config.get('quote_columns') -%}
  {%- set columns = [] -%}
  {%- for name in agate_table.column_names -%}
    {%- set name = name | string -%}
    {%- do columns.append((name, adapter.quote_seed_column(name, quote_columns), column_types.get(name, adapter.convert_type(agate_table, loop.index0)))) -%}
  {%- endfor -%}
  {%- set rows = [] -%}
  {%- for row in agate_table.rows -%}
    {%- set cells = [] -%}
    {%- for value in row -%}{%- do cells.append(s3tables_spark.seed_text(value)) -%}{%- endfor -%}
    {%- do rows.append(cells) -%}
  {%- endfor -%}
  {%- set view = 'dbt_seed_rows_' ~ local_md5(model.unique_id) -%}
  {% call statement('s3tables_seed_rows') -%}
    {{ s3tables_spark.seed_text_view_sql(view, rows, columns | length) }}
  {%- endcall %}

  {%- if existing is not none and existing.is_view -%}
    {% do adapter.drop_relation(existing) %}
  {%- endif -%}
  {%- set replacing = existing is not none and not existing.is_view -%}
  {#-- --empty: the table with its columns and types, and no rows. --#}
  {%- set load_sql = s3tables_spark.create_table_as(target, s3tables_spark.seed_select_sql(view, columns, model.original_file_path, flags.EMPTY), replacing, false) -%}
  {%- set loaded = 0 if flags.EMPTY else rows | length -%}
  {% call statement('s3tables_seed_load') -%}{{ load_sql }}{%- endcall %}
  {%- set code = 'CREATE' if should_full_refresh() else 'INSERT' -%}
  {% call noop_statement('main', code ~ ' ' ~ loaded, code, loaded) -%}{{ load_sql }}{%- endcall %}
  {% call statement('s3tables_seed_rows_dropped') %}DROP VIEW IF EXISTS {{ view }}{% endcall %}
  {%- do s3tables_spark.after_replacement(target, replacing) -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target]}) }}
{%- endmaterialization %}
