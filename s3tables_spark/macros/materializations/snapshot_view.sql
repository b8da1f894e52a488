{#-- Snapshots and views for the `spark` adapter, checked as the dbt-s3tables adapter
     checks them before anything is written (config keys, S3 Tables' names and rules). --#}

{#-- dbt-core's snapshot materialization, as the adapter runs it: one Iceberg MERGE from a
     temporary staging view. dbt-spark's own stages through a permanent view in the
     session's current namespace, which S3 Tables has no room for (no views) and which two
     snapshots of one name share. --#}
{% materialization snapshot, adapter='spark' -%}
  {%- do s3tables_spark.check_config_keys() -%}
  {%- do s3tables_spark.check_names(this.incorporate(type='table')) -%}
  {#-- dbt 1.11 hands dbt-spark's snapshot node over without a `database` (1.12: none),
       which dbt's materialization passes on to the relation it builds. --#}
  {%- if model.database is not defined -%}{%- do model.update({'database': none}) -%}{%- endif -%}
  {{ return(materialization_snapshot_default()) }}
{%- endmaterialization %}

{#-- A view: refused under S3 Tables' rules (var `s3tables_rules`, default true: S3 Tables
     has no views), before anything is written; elsewhere dbt-spark's. --#}
{% materialization view, adapter='spark' -%}
  {%- do s3tables_spark.check_config_keys() -%}
  {%- if var('s3tables_rules', true) -%}
    {{ exceptions.raise_compiler_error('Model `' ~ model.name ~ '`: S3 Tables has no views. Fix: materialize it as `table`, or as `ephemeral` to inline it into its consumers') }}
  {%- endif -%}
  {{ return(create_or_replace_view()) }}
{%- endmaterialization %}
