{#-- dbt's own test materialization; then, for write-audit-publish (see audit.py), the
     test's outcome goes to the staged builds it gates, which publish or stay staged. --#}
{%- materialization test, adapter='s3tables' -%}
  {%- set result = materialization_test_default() -%}
  {% do adapter.audit_test_done(model, load_result('main')) %}
  {{ return(result) }}
{%- endmaterialization -%}
