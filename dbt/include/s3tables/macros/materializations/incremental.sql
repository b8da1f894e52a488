{#-- Incremental models: the first run (or --full-refresh) builds the table atomically;
     every later run is exactly one statement chosen by `adapter.incremental_sql`. --#}
{% materialization incremental, adapter='s3tables', supported_languages=['sql'] %}
  {%- set identifier = model['alias'] -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set existing_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set target_relation = api.Relation.create(identifier=identifier, schema=schema, database=database, type='table') -%}
  {%- set full_refresh = should_full_refresh() -%}

  {{ run_hooks(pre_hooks) }}

  {% if existing_relation is not none and existing_relation.is_view %}
    {{ adapter.drop_relation(existing_relation) }}
    {% set existing_relation = none %}
  {% endif %}

  {% if existing_relation is none or full_refresh %}
    {%- set build_sql = create_table_as(False, target_relation, compiled_code) -%}
  {% else %}
    {%- set build_sql = adapter.incremental_sql(
          model_name=model['name'],
          strategy=config.get('incremental_strategy'),
          target=existing_relation,
          source_sql=compiled_code,
          unique_key=config.get('unique_key'),
          predicates=config.get('incremental_predicates')) -%}
  {% endif %}

  {%- call statement('main') -%}
    {{ build_sql }}
  {%- endcall -%}

  {% set should_revoke = should_revoke(existing_relation, full_refresh_mode=full_refresh) %}
  {% do apply_grants(target_relation, grant_config, should_revoke=should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
