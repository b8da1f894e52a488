{% materialization view, adapter='s3tables' -%}
  {% do s3tables_model_config() %}
  {%- set identifier = model['alias'] -%}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set target_relation = api.Relation.create(identifier=identifier, schema=schema, database=database, type='view') -%}
  {% do adapter.model_build(model).check_target_rules(target_relation, 'view') %}

  {{ s3tables_pre_hooks() }}

  {#-- A table cannot be replaced by a view in place. --#}
  {% if old_relation is not none and not old_relation.is_view %}
    {{ adapter.drop_relation(old_relation) }}
  {% endif %}

  {#-- A view never audits (it holds no data) and never reads an audit branch. --#}
  {%- call statement('main') -%}
    {{ get_create_view_as_sql(target_relation, adapter.audits().reading_main(sql)) }}
  {%- endcall -%}

  {% do persist_docs(target_relation, model, for_columns=false) %}

  {{ s3tables_post_hooks() }}

  {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}
