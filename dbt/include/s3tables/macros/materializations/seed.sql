{#-- A seed is one atomic `CREATE OR REPLACE TABLE ... AS SELECT` from a temporary view
     holding the CSV rows as text, each column cast to its type: no row-by-row inserts,
     and a failed load leaves the previous seed table untouched. A value that does not fit
     its type fails the load (see seeds.py). The CSV is read with Arrow, its column types
     as dbt's agate loader infers them (seed_csv.py); dbt's agate table, for `--show`,
     holds its first rows. --#}
{% materialization seed, adapter='s3tables' %}
  {%- set model_config = s3tables_model_config() -%}
  {%- set identifier = model['alias'] -%}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set target_relation = api.Relation.create(identifier=identifier, schema=schema, database=database, type='table') -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set seed = adapter.read_seed(model) -%}
  {% do adapter.check_target_rules(model['name'], target_relation, 'seed', columns=seed.column_names) %}
  {%- do store_result('agate_table', response='OK', agate_table=seed.preview) -%}

  {{ run_hooks(pre_hooks) }}

  {% if old_relation is not none and old_relation.is_view %}
    {{ adapter.drop_relation(old_relation) }}
  {% endif %}

  {%- set rows_view = adapter.register_seed_view(seed) -%}
  {%- set type_probe = seed.type_probe() -%}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {%- set quote_seed_column = model['config'].get('quote_columns', None) -%}
  {%- set columns = [] -%}
  {%- for col_name in seed.column_names -%}
    {%- set inferred_type = adapter.convert_type(type_probe, loop.index0) -%}
    {%- do columns.append([col_name | string, adapter.quote_seed_column(col_name | string, quote_seed_column), column_override.get(col_name, inferred_type)]) -%}
  {%- endfor -%}
  {#-- --empty: the seed's table with its columns and types, and no rows. --#}
  {%- set select_sql = adapter.seed_select_sql(rows_view, columns, model['original_file_path'], flags.EMPTY) -%}
  {%- set loaded = 0 if flags.EMPTY else seed.row_count -%}

  {#-- Audited (`audit_before_publish`, see audit.py): the rows go to the table's audit
       branch, the table created empty first if missing. --#}
  {%- set audit = adapter.audit_build(model, model_config, target_relation, graph.nodes, selected_resources) -%}
  {% if audit %}
    {% if old_relation is none or old_relation.is_view %}
      {% call statement('create_empty') %}{{ s3tables_create_or_replace_table(target_relation, audit.empty_sql(select_sql), typed=true, replace=false) }}{% endcall %}
    {% endif %}
    {%- set load_sql = audit.replace_sql(select_sql) -%}
  {% else %}
    {%- set load_sql = s3tables_create_or_replace_table(target_relation, select_sql, typed=true) -%}
  {% endif %}
  {% call statement('load_seed') %}{{ load_sql }}{% endcall %}
  {#-- Report the row count as dbt's seed output expects (`INSERT n`). --#}
  {% call noop_statement('main', 'INSERT ' ~ loaded, code='INSERT', rows_affected=loaded) %}{{ load_sql }}{% endcall %}
  {% do adapter.drop_temp_view(rows_view) %}
  {% do seed.remove() %}

  {% set should_revoke = should_revoke(old_relation, full_refresh_mode=True) %}
  {% do apply_grants(target_relation, grant_config, should_revoke=should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks) }}

  {#-- Staged (audited): published when its tests pass; then, as for any build, the
       `maintenance` config's thresholds are checked. --#}
  {% do adapter.after_build(target_relation, model_config, audit) %}
  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
