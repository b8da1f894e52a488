{#-- The table materialization for the `spark` adapter on Iceberg tables, as the
     dbt-s3tables adapter runs it: config keys and S3 Tables names checked first, then one
     `CREATE OR REPLACE TABLE ... AS` (one commit; the table's snapshot history is kept,
     where dbt-spark drops the table unless `file_format: iceberg` is set and recognised);
     an enforced contract as contracts.sql builds it. Replacing an incremental model's
     table removes its model state. --#}

{% materialization table, adapter='spark', supported_languages=['sql'] -%}
  {%- do s3tables_spark.check_config_keys() -%}
  {%- do s3tables_spark.check_latest_version_pointer() -%}
  {%- set target = this.incorporate(type='table') -%}
  {%- do s3tables_spark.check_names(target) -%}
  {%- set existing = load_relation(this) -%}
  {%- set rows_view = this.incorporate(path={'identifier': this.identifier ~ '__dbt_rows'}).include(database=false, schema=false) -%}

  {{ run_hooks(pre_hooks) }}

  {%- do s3tables_spark.run_sql_header() -%}
  {%- set contracted = s3tables_spark.contract_enforced() -%}
  {%- if contracted -%}
    {#-- Names and types checked, then the rows computed and each `not_null` column checked
         (cached: a NULL fails here), before anything is written. --#}
    {%- do s3tables_spark.assert_contract_columns(compiled_code) -%}
    {%- do s3tables_spark.cache_rows(rows_view, s3tables_spark.contract_select(compiled_code, s3tables_spark.not_null_columns())) -%}
  {%- else -%}
    {#-- A view computes nothing: its columns are the model's, read before anything is written. --#}
    {% call statement('s3tables_rows') -%}
      CREATE OR REPLACE TEMPORARY VIEW {{ rows_view }} AS {{ compiled_code }}
    {%- endcall %}
  {%- endif -%}
  {%- set row_columns = s3tables_spark.columns_with_types(rows_view) -%}
  {%- do s3tables_spark.check_names(target, row_columns | map(attribute='name') | list) -%}
  {%- if existing is not none and existing.is_view -%}
    {% do adapter.drop_relation(existing) %}
  {%- endif -%}
  {%- set replacing = existing is not none and not existing.is_view -%}
  {%- if contracted -%}
    {%- do s3tables_spark.build_with_contract(target, existing if replacing else none, rows_view, row_columns) -%}
    {%- do s3tables_spark.uncache_rows(rows_view) -%}
  {%- else -%}
    {%- call statement('main') -%}
      {{ s3tables_spark.create_table_as(target, 'SELECT * FROM ' ~ rows_view, replacing, false) }}
    {%- endcall -%}
    {% call statement('s3tables_rows_dropped') -%}
      DROP VIEW IF EXISTS {{ rows_view }}
    {%- endcall %}
  {%- endif -%}
  {%- do s3tables_spark.after_replacement(target, replacing) -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target]}) }}
{%- endmaterialization %}

{#-- A table or seed built in one CREATE [OR REPLACE]: the docs persisted, and, when it
     replaced a table, that table's model state forgotten. --#}
{% macro after_replacement(target, replacing) -%}
  {%- if replacing -%}
    {%- do s3tables_spark.forget_state(target) -%}
  {%- endif -%}
  {%- do s3tables_spark.persist_docs(target) -%}
{%- endmacro %}

{#-- Iceberg's REPLACE keeps a table's properties: an incremental model's state would
     outlive the table it described. --#}
{% macro forget_state(relation) -%}
  {%- do s3tables_spark.unset_properties(relation, s3tables_spark.table_properties(relation).keys() | select('in', s3tables_spark.state_keys()) | list) -%}
{%- endmacro %}
