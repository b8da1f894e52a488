{#-- One atomic `CREATE OR REPLACE TABLE ... AS SELECT`: a failing query leaves the old
     table readable and unchanged, and the table keeps its snapshot history. --#}
{% materialization table, adapter='s3tables', supported_languages=['sql', 'python'] %}
  {% do adapter.parse_model_config(model) %}
  {%- set identifier = model['alias'] -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set target_relation = api.Relation.create(identifier=identifier, schema=schema, database=database, type='table') -%}

  {{ run_hooks(pre_hooks) }}

  {#-- A Python model's DataFrame becomes a temporary view the SQL path selects from. --#}
  {%- if model['language'] == 'python' -%}
    {%- set compiled_code = adapter.python_model_sql(model['name'], compiled_code) -%}
  {%- endif -%}
  {% do adapter.check_target_rules(model['name'], target_relation, 'table', compiled_code) %}

  {#-- A view cannot be replaced by a table in place. --#}
  {% if old_relation is not none and old_relation.is_view %}
    {{ adapter.drop_relation(old_relation) }}
  {% endif %}

  {%- call statement('main') -%}
    {{ create_table_as(False, target_relation, s3tables_model_query(compiled_code)) }}
  {%- endcall -%}
  {% do adapter.enforce_not_null(target_relation, model) %}
  {#-- REPLACE keeps table properties: an incremental model's state must not survive. --#}
  {% if old_relation is not none and not old_relation.is_view %}
    {% do adapter.forget_model_state(target_relation) %}
  {% endif %}

  {% set should_revoke = should_revoke(old_relation, full_refresh_mode=True) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks) }}

  {% do adapter.maintain_after_build(target_relation, adapter.parse_model_config(model)) %}
  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
