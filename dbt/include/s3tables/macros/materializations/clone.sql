{#-- dbt clone (Slim CI): dbt-core's clone materialization (dbt-spark's demands Delta).
     Where the catalog has views, a clone is a view selecting from the state relation,
     dbt's choice for engines without zero-copy clones. Under the S3 Tables rules (no
     views) a table's clone is a copy: one atomic CREATE OR REPLACE ... AS SELECT that
     reads and writes every row, with the model's partitioning and properties. Iceberg
     could share the state table's data files instead, but a purge or S3 Tables' cleanup of
     either table would then delete files the other still reads. --#}
{% materialization clone, adapter='s3tables' %}
  {% do s3tables_model_config() %}
  {#-- A relation cloned onto itself stays as it is: the view route would otherwise
       replace the table with a view selecting from itself. --#}
  {%- if defer_relation and this.render() | lower == defer_relation.render() | lower -%}
    {{ log("Target relation and defer relation are the same, skipping clone for relation: " ~ this.render()) }}
    {{ return({'relations': []}) }}
  {%- endif -%}
  {{ return(materialization_clone_default()) }}
{% endmaterialization %}

{% macro s3tables__can_clone_table() %}
  {{ return(adapter.model_build(model).clones_by_copy(this)) }}
{% endmacro %}

{% macro s3tables__create_or_replace_clone(this_relation, defer_relation) %}
  {% do adapter.model_build(model).check_target_rules(this_relation, 'table') %}
  {{ s3tables_create_or_replace_table(this_relation, 'select * from ' ~ defer_relation.render(), typed=true) }}
{% endmacro %}
