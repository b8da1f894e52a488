{#-- Copy this file into your project's macros/ folder. dbt 1.11 uses a package's override
     of a built-in materialization only when the root project declares it
     (`require_explicit_package_overrides_for_builtin_materializations`): these lines
     hand dbt-spark's `incremental`, `table`, `view`, `seed` and `snapshot` to the
     s3tables_spark package, and the model helpers (`last_processed_value()`,
     `is_append_only()`, ...) are called as on the adapter. --#}
{% materialization incremental, adapter='spark', supported_languages=['sql'] %}
  {{ return(s3tables_spark.materialization_incremental_spark()) }}
{% endmaterialization %}

{% materialization table, adapter='spark', supported_languages=['sql'] %}
  {{ return(s3tables_spark.materialization_table_spark()) }}
{% endmaterialization %}

{% materialization view, adapter='spark' %}
  {{ return(s3tables_spark.materialization_view_spark()) }}
{% endmaterialization %}

{% materialization seed, adapter='spark' %}
  {{ return(s3tables_spark.materialization_seed_spark()) }}
{% endmaterialization %}

{% materialization snapshot, adapter='spark' %}
  {{ return(s3tables_spark.materialization_snapshot_spark()) }}
{% endmaterialization %}

{% macro last_processed_value() %}
  {{ return(s3tables_spark.last_processed_value()) }}
{% endmacro %}

{% macro is_append_only() %}
  {{ return(s3tables_spark.strategy_is('append')) }}
{% endmacro %}

{% macro is_delete_insert() %}
  {{ return(s3tables_spark.strategy_is('delete+insert')) }}
{% endmacro %}

{% macro is_scd2() %}
  {{ return(s3tables_spark.strategy_is('scd2')) }}
{% endmacro %}

{% macro is_insert_overwrite() %}
  {{ return(s3tables_spark.strategy_is('insert_overwrite')) }}
{% endmacro %}

{#-- dbt-spark's answers a relation's columns as DESCRIBE's rows, where dbt's macros
     (snapshots' `hard_deletes: new_record` among them) read column objects: the deletion
     records of a snapshot lost every column. --#}
{% macro spark__get_columns_in_relation(relation) %}
  {{ return(s3tables_spark.columns_with_types(relation)) }}
{% endmacro %}
