{#-- One atomic `CREATE OR REPLACE TABLE ... AS SELECT`: a failing query leaves the old
     table readable and unchanged, and the table keeps its snapshot history. Audited
     (`audit_before_publish`, see audit.py): the rows go to the table's audit branch
     instead, created empty first if missing, and main moves when the tests pass. --#}
{% materialization table, adapter='s3tables', supported_languages=['sql', 'python'] %}
  {%- set model_config = s3tables_model_config() -%}
  {%- set identifier = model['alias'] -%}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set target_relation = api.Relation.create(identifier=identifier, schema=schema, database=database, type='table') -%}

  {{ s3tables_pre_hooks() }}
  {{ s3tables_sql_header() }}

  {#-- A Python model's DataFrame becomes a temporary view the SQL path selects from. --#}
  {%- if model['language'] == 'python' -%}
    {%- set compiled_code = adapter.model_build(model).python_model_sql(compiled_code) -%}
  {%- endif -%}
  {% do adapter.model_build(model).check_target_rules(target_relation, 'table', compiled_code) %}

  {#-- A view cannot be replaced by a table in place. --#}
  {% if old_relation is not none and old_relation.is_view %}
    {{ adapter.drop_relation(old_relation) }}
  {% elif old_relation is not none %}
    {% do adapter.model_build(model).check_format_version(target_relation) %}
  {% endif %}

  {%- set query = s3tables_model_query(compiled_code) -%}
  {#-- `skip_when_unchanged` (unchanged_inputs.py): nothing it is built from changed. --#}
  {% if s3tables_skips_unchanged(model_config, target_relation, query, old_relation is not none and not old_relation.is_view, should_full_refresh()) %}
    {{ return(s3tables_finish_build(model_config, target_relation, none, old_relation, full_refresh_mode=true)) }}
  {% endif %}

  {#-- See build_steps.sql. REPLACE keeps table properties: an incremental model's state
       must not survive (`forget_model_state`). --#}
  {%- set audit = s3tables_audit_build(model_config, target_relation) -%}
  {% do s3tables_audited_write(target_relation, audit, old_relation is not none and not old_relation.is_view,
        sql=query, create='create_table_as', forget_model_state=true) %}
  {{ return(s3tables_finish_build(model_config, target_relation, audit, old_relation, full_refresh_mode=true)) }}
{% endmaterialization %}
