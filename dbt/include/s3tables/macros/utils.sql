{#-- dbt's listagg with its order_by_clause (dbt-spark's drops it with a warning). --#}
{% macro s3tables__listagg(measure, delimiter_text, order_by_clause, limit_num) -%}
  {{ return(adapter.listagg_sql(measure, delimiter_text, order_by_clause, limit_num)) }}
{%- endmacro %}
