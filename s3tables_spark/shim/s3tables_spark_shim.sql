{#-- Copy this file into your project's macros/ folder. dbt 1.11 uses a package's override
     of a built-in materialization only when the root project declares it
     (`require_explicit_package_overrides_for_builtin_materializations`): these two lines
     hand dbt-spark's `incremental` and `table` to the s3tables_spark package. --#}
{% materialization incremental, adapter='spark', supported_languages=['sql'] %}
  {{ return(s3tables_spark.materialization_incremental_spark()) }}
{% endmaterialization %}

{% materialization table, adapter='spark', supported_languages=['sql'] %}
  {{ return(s3tables_spark.materialization_table_spark()) }}
{% endmaterialization %}
