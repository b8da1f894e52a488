{#-- Copy this file into your project's macros/ folder. dbt 1.11 uses a package's override
     of a built-in materialization only when the root project declares it
     (`require_explicit_package_overrides_for_builtin_materializations`): these two lines
     hand dbt-spark's `incremental` and `table` to the s3tables_spark package, and the
     model helpers (`last_processed_value()`, `is_append_only()`, ...) are called as on
     the adapter. --#}
{% materialization incremental, adapter='spark', supported_languages=['sql'] %}
  {{ return(s3tables_spark.materialization_incremental_spark()) }}
{% endmaterialization %}

{% materialization table, adapter='spark', supported_languages=['sql'] %}
  {{ return(s3tables_spark.materialization_table_spark()) }}
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
