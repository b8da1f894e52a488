{#-- dbt-core's snapshot materialization, which writes with `snapshot_merge_sql` (one
     Iceberg MERGE). dbt-spark's own version insists on a `file_format` config that is
     meaningless here: every table is Iceberg. --#}
{% materialization snapshot, adapter='s3tables' %}
  {%- set model_config = s3tables_model_config() -%}
  {% do adapter.model_build(model).check_target_rules(api.Relation.create(identifier=model['alias'], schema=schema, database=database, type='table'), 'snapshot') %}
  {%- set result = materialization_snapshot_default() -%}
  {#-- dbt-core's materialization applied grants, docs and post-hooks, and committed;
       a snapshot is never audited: only its maintenance follows (see build_steps.sql). --#}
  {{ return(s3tables_finish_build(model_config, result['relations'][0], none, core_result=result)) }}
{% endmaterialization %}
