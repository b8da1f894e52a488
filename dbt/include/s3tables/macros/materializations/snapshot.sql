{#-- dbt-core's snapshot materialization, which writes with `snapshot_merge_sql` (one
     Iceberg MERGE). dbt-spark's own version insists on a `file_format` config that is
     meaningless here: every table is Iceberg. --#}
{% materialization snapshot, adapter='s3tables' %}
  {%- set model_config = s3tables_model_config() -%}
  {% do adapter.check_target_rules(model['name'], api.Relation.create(identifier=model['alias'], schema=schema, database=database, type='table'), 'snapshot') %}
  {%- set result = materialization_snapshot_default() -%}
  {% do adapter.maintain_after_build(result['relations'][0], model_config) %}
  {{ return(result) }}
{% endmaterialization %}
