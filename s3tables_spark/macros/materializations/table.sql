{#-- The table materialization for the `spark` adapter on Iceberg tables, as the
     dbt-s3tables adapter runs it: config keys and S3 Tables names checked first, then one
     `CREATE OR REPLACE TABLE ... AS` (one commit; the table's snapshot history is kept,
     where dbt-spark drops the table unless `file_format: iceberg` is set and recognised).
     Replacing an incremental model's table removes its model state. --#}

{% materialization table, adapter='spark', supported_languages=['sql'] -%}
  {%- do s3tables_spark.check_config_keys() -%}
  {%- do s3tables_spark.refuse_contract() -%}
  {%- set target = this.incorporate(type='table') -%}
  {%- do s3tables_spark.check_names(target) -%}
  {%- set existing = load_relation(this) -%}
  {%- set rows_view = this.incorporate(path={'identifier': this.identifier ~ '__dbt_rows'}).include(database=false, schema=false) -%}

  {{ run_hooks(pre_hooks) }}

  {#-- A view computes nothing: its columns are the model's, read before anything is written. --#}
  {%- set sql_header = config.get('sql_header') -%}
  {% call statement('s3tables_rows') -%}
    {{ sql_header if sql_header is not none }}
    CREATE OR REPLACE TEMPORARY VIEW {{ rows_view }} AS {{ compiled_code }}
  {%- endcall %}
  {%- do s3tables_spark.check_names(target, adapter.get_columns_in_relation(rows_view) | map(attribute='name') | list) -%}
  {%- if existing is not none and existing.is_view -%}
    {% do adapter.drop_relation(existing) %}
  {%- endif -%}
  {%- set replacing = existing is not none and not existing.is_view -%}
  {%- call statement('main') -%}
    {{ s3tables_spark.create_table_as(target, 'SELECT * FROM ' ~ rows_view, replacing, false) }}
  {%- endcall -%}
  {%- if replacing -%}
    {%- do s3tables_spark.forget_state(target) -%}
  {%- endif -%}
  {% call statement('s3tables_rows_dropped') -%}
    DROP VIEW IF EXISTS {{ rows_view }}
  {%- endcall %}
  {% do persist_docs(target, model) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target]}) }}
{%- endmaterialization %}

{#-- Iceberg's REPLACE keeps a table's properties: an incremental model's state would
     outlive the table it described. --#}
{% macro forget_state(relation) -%}
  {%- set prefix = s3tables_spark.state_prefix() -%}
  {%- set state = [] -%}
  {%- set state_keys = [] -%}
  {%- for name in ['incremental_strategy', 'unique_key', 'model_sql_hash', 'incremental_config_hash', 'last_processed_value', 'full_incremental_refresh', 'partition_by'] -%}
    {%- do state_keys.append(prefix ~ name) -%}
  {%- endfor -%}
  {%- for key in s3tables_spark.table_properties(relation).keys() if key in state_keys -%}
    {%- do state.append(s3tables_spark.sql_string(key)) -%}
  {%- endfor -%}
  {%- if state -%}
    {% call statement('s3tables_state_removed') -%}
      ALTER TABLE {{ relation }} UNSET TBLPROPERTIES IF EXISTS ({{ state | join(', ') }})
    {%- endcall %}
  {%- endif -%}
{%- endmacro %}
