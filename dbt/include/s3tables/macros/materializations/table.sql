{#-- One atomic `CREATE OR REPLACE TABLE ... AS SELECT`: a failing query leaves the old
     table readable and unchanged, and the table keeps its snapshot history. Audited
     (`audit_before_publish`, see audit.py): the rows go to the table's audit branch
     instead, created empty first if missing, and main moves when the tests pass. --#}
{% materialization table, adapter='s3tables', supported_languages=['sql', 'python'] %}
  {%- set model_config = s3tables_model_config() -%}
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

  {%- set audit = adapter.audit_build(model, model_config, target_relation, graph.nodes, selected_resources) -%}
  {%- set query = s3tables_model_query(compiled_code) -%}
  {% if audit %}
    {% if old_relation is none or old_relation.is_view %}
      {%- call statement('create_empty') -%}
        {{ create_table_as(False, target_relation, audit.empty_sql(query)) }}
      {%- endcall -%}
    {% else %}
      {% do audit.forget_model_state() %}
    {% endif %}
    {% do adapter.enforce_not_null(target_relation, model) %}
    {%- call statement('main') -%}
      {{ audit.replace_sql(query) }}
    {%- endcall -%}
  {% else %}
    {%- call statement('main') -%}
      {{ create_table_as(False, target_relation, query) }}
    {%- endcall -%}
    {% do adapter.enforce_not_null(target_relation, model) %}
    {#-- REPLACE keeps table properties: an incremental model's state must not survive. --#}
    {% if old_relation is not none and not old_relation.is_view %}
      {% do adapter.forget_model_state(target_relation) %}
    {% endif %}
  {% endif %}

  {% set should_revoke = should_revoke(old_relation, full_refresh_mode=True) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks) }}

  {#-- Staged (audited): published when its tests pass; then, as for any build, the
       `maintenance` config's thresholds are checked. --#}
  {% do adapter.after_build(target_relation, model_config, audit) %}
  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
