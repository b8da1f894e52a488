{#-- Helpers for model SQL, next to dbt's is_incremental(). --#}

{#-- The greatest `watermark_column` value processed by the last successful run (a
     string), or none before the first run: `where updated_at > '{{ last_processed_value() }}'`. --#}
{% macro last_processed_value() -%}
  {{ return(adapter.last_processed_value(this) if execute else none) }}
{%- endmacro %}

{% macro _s3tables_strategy_is(strategy) -%}
  {{ return(is_incremental() and adapter.resolved_strategy(model['name'], model['config']) == strategy) }}
{%- endmacro %}

{% macro is_append_only() -%}
  {{ return(_s3tables_strategy_is('append')) }}
{%- endmacro %}

{% macro is_delete_insert() -%}
  {{ return(_s3tables_strategy_is('delete+insert')) }}
{%- endmacro %}

{% macro is_scd2() -%}
  {{ return(_s3tables_strategy_is('scd2')) }}
{%- endmacro %}

{% macro is_insert_overwrite() -%}
  {{ return(_s3tables_strategy_is('insert_overwrite')) }}
{%- endmacro %}
