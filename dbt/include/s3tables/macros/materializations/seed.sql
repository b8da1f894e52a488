{#-- A seed is one atomic `CREATE OR REPLACE TABLE ... AS SELECT` from a temporary view
     holding the CSV rows as text, each column cast to its type: no row-by-row inserts,
     and a failed load leaves the previous seed table untouched. A value that does not fit
     its type fails the load (see seeds/values.py). The CSV is read with Arrow, its column types
     as dbt's agate loader infers them (seeds/csv.py); dbt's agate table, for `--show`,
     holds its first rows. --#}
{% materialization seed, adapter='s3tables' %}
  {%- set model_config = s3tables_model_config() -%}
  {%- set identifier = model['alias'] -%}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set target_relation = api.Relation.create(identifier=identifier, schema=schema, database=database, type='table') -%}
  {%- set seed = adapter.seeds().read(model) -%}
  {% do adapter.model_build(model).check_target_rules(target_relation, 'seed', columns=seed.column_names) %}
  {%- do store_result('agate_table', response='OK', agate_table=seed.preview) -%}

  {{ s3tables_pre_hooks() }}

  {% if old_relation is not none and old_relation.is_view %}
    {{ adapter.drop_relation(old_relation) }}
  {% endif %}

  {%- set rows_view = adapter.seeds().register_view(seed) -%}
  {%- set type_probe = seed.type_probe() -%}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {%- set quote_seed_column = model['config'].get('quote_columns', None) -%}
  {%- set columns = [] -%}
  {%- for col_name in seed.column_names -%}
    {%- set inferred_type = adapter.convert_type(type_probe, loop.index0) -%}
    {%- do columns.append([col_name | string, adapter.quote_seed_column(col_name | string, quote_seed_column), column_override.get(col_name, inferred_type)]) -%}
  {%- endfor -%}
  {#-- --empty: the seed's table with its columns and types, and no rows. --#}
  {%- set select_sql = adapter.seeds().select_sql(rows_view, columns, model['original_file_path'], flags.EMPTY) -%}
  {%- set loaded = 0 if flags.EMPTY else seed.row_count -%}

  {#-- Audited (`audit_before_publish`, see build_steps.sql): the rows go to the table's
       audit branch, the table created empty first if missing. --#}
  {%- set audit = s3tables_audit_build(model_config, target_relation) -%}
  {%- set write = s3tables_audited_write(target_relation, audit, old_relation is not none and not old_relation.is_view,
        sql=select_sql, create='typed', replace=true, statement_name='load_seed', enforce_not_null=false) -%}
  {%- set load_sql = write['sql'] -%}
  {#-- Report the row count as dbt's seed output expects (`INSERT n`). --#}
  {% call noop_statement('main', 'INSERT ' ~ loaded, code='INSERT', rows_affected=loaded) %}{{ load_sql }}{% endcall %}
  {% do adapter.seeds().drop_view(rows_view) %}
  {% do seed.remove() %}

  {{ return(s3tables_finish_build(model_config, target_relation, audit, old_relation, full_refresh_mode=true)) }}
{% endmaterialization %}
