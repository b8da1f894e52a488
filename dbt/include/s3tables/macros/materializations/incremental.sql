{#-- Incremental models. The first run (or --full-refresh) builds the table with one
     atomic CREATE OR REPLACE; every later run is exactly one statement, chosen, checked
     and executed by `adapter.run_incremental`, which also reports its row counts, unless
     `on_schema_change` replaces the table for the model's new columns
     (`adapter.incremental_action` decides). --#}
{% materialization incremental, adapter='s3tables', supported_languages=['sql', 'python'] %}
  {% do adapter.check_model_config(model['name'], model['config']) %}
  {%- set identifier = model['alias'] -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set existing_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set target_relation = api.Relation.create(identifier=identifier, schema=schema, database=database, type='table') -%}
  {%- set full_refresh = should_full_refresh() -%}

  {{ run_hooks(pre_hooks) }}

  {#-- A Python model's DataFrame becomes a temporary view the SQL path selects from. --#}
  {%- if model['language'] == 'python' -%}
    {%- set compiled_code = adapter.python_model_sql(model['name'], model['config'], compiled_code) -%}
  {%- endif -%}
  {% do adapter.check_target_rules(model['name'], target_relation, 'incremental', compiled_code) %}
  {%- set compiled_code = s3tables_model_query(compiled_code) -%}

  {% if existing_relation is not none and existing_relation.is_view %}
    {{ adapter.drop_relation(existing_relation) }}
    {% set existing_relation = none %}
  {% endif %}

  {% if existing_relation is none or full_refresh %}
    {#-- Check the config before the first build writes anything. --#}
    {% do adapter.validate_incremental(model['name'], model['config'], compiled_code) %}
    {%- call statement('main') -%}
      {{ create_table_as(False, target_relation, adapter.initial_build_sql(model['name'], model['config'], compiled_code)) }}
    {%- endcall -%}
    {% do adapter.enforce_not_null(target_relation, model) %}
    {% do adapter.record_model_state(model['name'], model['config'], target_relation, compiled_code) %}
  {% else %}
    {%- set action = adapter.incremental_action(model['name'], model['config'], existing_relation, compiled_code) -%}
    {% if action == 'incremental' %}
      {%- set batch = model.get('batch') -%}
      {%- set response = adapter.run_incremental(
            model_name=model['name'],
            config=model['config'],
            target=existing_relation,
            source_sql=compiled_code,
            batch_start=batch.event_time_start if batch else none,
            batch_end=batch.event_time_end if batch else none) -%}
      {% do store_result('main', response=response) %}
    {% elif action in ('full_refresh', 'recreate_empty') %}
      {#-- on_schema_change replaces the table, from the whole history or this run's rows. --#}
      {%- set build_sql = s3tables_model_query(s3tables_full_model_sql()) if action == 'full_refresh' else compiled_code -%}
      {% do adapter.validate_incremental(model['name'], model['config'], build_sql) %}
      {%- call statement('main') -%}
        {{ create_table_as(False, target_relation, adapter.replacement_sql(model['name'], model['config'], existing_relation, build_sql)) }}
      {%- endcall -%}
      {% do adapter.enforce_not_null(target_relation, model) %}
      {% do adapter.record_model_state(model['name'], model['config'], target_relation, compiled_code) %}
    {% else %}
      {#-- full_incremental_refresh: an empty table with the new schema and the chunk plan
           (one commit), then one commit per chunk; a rerun resumes after the last one. --#}
      {%- set full_sql = s3tables_model_query(s3tables_full_model_sql()) -%}
      {% if action == 'full_incremental_refresh' %}
        {% do adapter.validate_incremental(model['name'], model['config'], full_sql) %}
        {%- call statement('replace') -%}
          {{ s3tables_create_or_replace_table(
               target_relation,
               adapter.replacement_sql(model['name'], model['config'], existing_relation, full_sql, empty=True),
               adapter.rebuild_properties(model['name'], model['config'])) }}
        {%- endcall -%}
        {% do adapter.enforce_not_null(target_relation, model) %}
      {% endif %}
      {%- set response = adapter.refresh_in_chunks(model['name'], model['config'], target_relation, full_sql) -%}
      {% do store_result('main', response=response) %}
    {% endif %}
  {% endif %}

  {% set should_revoke = should_revoke(existing_relation, full_refresh_mode=full_refresh) %}
  {% do apply_grants(target_relation, grant_config, should_revoke=should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
