{#-- dbt's own test materialization, after the test's config keys are checked; then, for
     write-audit-publish (see audit.py), the test's outcome goes to the staged builds it
     gates, which publish or stay staged. --#}
{%- materialization test, adapter='s3tables' -%}
  {% do s3tables_check_config_keys() %}
  {%- set result = materialization_test_default() -%}
  {% do adapter.audits().audit_test_done(model, load_result('main')) %}
  {{ return(result) }}
{%- endmaterialization -%}
