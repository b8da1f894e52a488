{#-- Model state on the table as Iceberg table properties, with the adapter's keys
     (dbt/adapters/s3tables/incremental/model_state.py), so a table built by one can be
     run by the other. Properties add no snapshot. --#}

{% macro state_prefix() -%}{{ return('dbt.s3tables.') }}{%- endmacro %}

{#-- The table's properties: {key: value}. --#}
{% macro table_properties(relation) -%}
  {%- set rows = run_query('SHOW TBLPROPERTIES ' ~ relation) -%}
  {%- set found = {} -%}
  {%- for row in rows -%}{%- do found.update({row[0]: row[1]}) -%}{%- endfor -%}
  {{ return(found) }}
{%- endmacro %}

{#-- Warnings for a changed strategy or key; an error for a switch to or from scd2, whose
     table holds history rather than current rows. --#}
{% macro compare_state(settings, previous) -%}
  {%- set prefix = s3tables_spark.state_prefix() -%}
  {%- set old_strategy = previous.get(prefix ~ 'incremental_strategy') -%}
  {%- if old_strategy and old_strategy != settings.strategy and 'scd2' in [old_strategy, settings.strategy] -%}
    {{ s3tables_spark.config_error('incremental_strategy', 'the table was built with `' ~ old_strategy ~ '` and the model now says `' ~ settings.strategy ~ '`; an scd2 table holds history rows, so the two cannot be mixed', 'run with `--full-refresh` to rebuild the table with the new strategy') }}
  {%- endif -%}
  {%- if old_strategy and old_strategy != settings.strategy -%}
    {% do exceptions.warn('Model `' ~ model.name ~ '`: incremental_strategy changed from `' ~ old_strategy ~ '` to `' ~ settings.strategy ~ '`') %}
  {%- endif -%}
  {%- set unique_key = tojson(settings.unique_key) -%}
  {%- set old_key = previous.get(prefix ~ 'unique_key') -%}
  {%- if old_key is not none and old_key != unique_key -%}
    {% do exceptions.warn('Model `' ~ model.name ~ '`: unique_key changed from ' ~ old_key ~ ' to ' ~ unique_key) %}
  {%- endif -%}
{%- endmacro %}

{#-- The state after a successful run: strategy, key, hashes of the model SQL and of its
     incremental config (md5 here, sha256 in the adapter: both only say "changed"), and the
     greatest `watermark_column` value written so far. --#}
{% macro state_properties(settings, last_processed_value) -%}
  {%- set prefix = s3tables_spark.state_prefix() -%}
  {%- set hashed = {} -%}
  {%- for key in ['incremental_strategy', 'unique_key', 'partition_by', 'incremental_predicates', 'merge_update_columns', 'merge_exclude_columns', 'merge_delete_when', 'watermark_column'] -%}
    {%- do hashed.update({key: config.get(key)}) -%}
  {%- endfor -%}
  {%- set properties = {
        prefix ~ 'incremental_strategy': settings.strategy,
        prefix ~ 'unique_key': tojson(settings.unique_key),
        prefix ~ 'model_sql_hash': local_md5(tojson(model.raw_code))[:16],
        prefix ~ 'incremental_config_hash': local_md5(tojson(hashed, sort_keys=true))[:16],
  } -%}
  {%- if last_processed_value is not none -%}
    {%- do properties.update({prefix ~ 'last_processed_value': last_processed_value}) -%}
  {%- endif -%}
  {{ return(properties) }}
{%- endmacro %}

{#-- Every model state key (the adapter's). --#}
{% macro state_keys() -%}
  {%- set keys = [] -%}
  {%- for name in ['incremental_strategy', 'unique_key', 'model_sql_hash', 'incremental_config_hash', 'last_processed_value', 'full_incremental_refresh', 'partition_by'] -%}
    {%- do keys.append(s3tables_spark.state_prefix() ~ name) -%}
  {%- endfor -%}
  {{ return(keys) }}
{%- endmacro %}

{#-- The state keys `held` (the table's properties) has that the new `state` does not: a
     `last_processed_value` left by the rows a rebuild replaced, or by a `watermark_column`
     the model no longer sets (a stopped rebuild's plan is the rebuild's to remove). --#}
{% macro stale_state_keys(state, held) -%}
  {%- set stale = [] -%}
  {%- for key in s3tables_spark.state_keys() if key in held and key not in state and key != s3tables_spark.rebuild_plan_key() -%}
    {%- do stale.append(key) -%}
  {%- endfor -%}
  {{ return(stale) }}
{%- endmacro %}

{% macro unset_properties(relation, keys) -%}
  {%- if not keys -%}{{ return(none) }}{%- endif -%}
  {%- set quoted = [] -%}
  {%- for key in keys -%}{%- do quoted.append(s3tables_spark.sql_string(key)) -%}{%- endfor -%}
  {% call statement('s3tables_state_removed') -%}
    ALTER TABLE {{ relation }} UNSET TBLPROPERTIES IF EXISTS ({{ quoted | join(', ') }})
  {%- endcall %}
{%- endmacro %}

{% macro sql_string(value) -%}
  {{ return("'" ~ (value | string | replace('\\', '\\\\') | replace("'", "\\'")) ~ "'") }}
{%- endmacro %}

{#-- The entries of `wanted` whose value `previous` (the table's properties) does not hold. --#}
{% macro changed_properties(wanted, previous) -%}
  {%- set changed = {} -%}
  {%- for key, value in wanted.items() if previous.get(key) != (value | string) -%}
    {%- do changed.update({key: value}) -%}
  {%- endfor -%}
  {{ return(changed) }}
{%- endmacro %}

{% macro set_properties(relation, properties) -%}
  {%- if not properties -%}{{ return(none) }}{%- endif -%}
  {%- set pairs = [] -%}
  {%- for key, value in properties.items() -%}
    {%- do pairs.append(s3tables_spark.sql_string(key) ~ '=' ~ s3tables_spark.sql_string(value)) -%}
  {%- endfor -%}
  {% call statement('s3tables_state') -%}
    ALTER TABLE {{ relation }} SET TBLPROPERTIES ({{ pairs | join(', ') }})
  {%- endcall %}
{%- endmacro %}

{#-- The greatest `watermark_column` value of the run's rows (`source`, whose columns are
     `model_columns`), never lower than the one already kept (compared in the column's
     type), as a string; none without the key. --#}
{% macro next_processed_value(settings, source, model_columns, previous) -%}
  {%- if not settings.watermark_column -%}{{ return(none) }}{%- endif -%}
  {%- set column = s3tables_spark.quote(settings.watermark_column) -%}
  {%- set kind = namespace(name='string') -%}
  {%- for c in model_columns if c.name | lower == settings.watermark_column | lower -%}
    {%- set kind.name = c.data_type -%}
  {%- endfor -%}
  {%- set kept = previous.get(s3tables_spark.state_prefix() ~ 'last_processed_value') -%}
  {%- set earlier = (' UNION ALL SELECT CAST(' ~ s3tables_spark.sql_string(kept) ~ ' AS ' ~ kind.name ~ ') AS v') if kept is not none else '' -%}
  {%- set rows = run_query('SELECT CAST(max(v) AS STRING) FROM (SELECT max(' ~ column ~ ') AS v FROM ' ~ source ~ earlier ~ ') AS dbt_internal_watermark') -%}
  {{ return(rows[0][0]) }}
{%- endmacro %}

{#-- The greatest `watermark_column` value processed by the last successful run (a
     string), or none before the first run, as the adapter's `last_processed_value()`. --#}
{% macro last_processed_value() -%}
  {%- if not execute -%}{{ return(none) }}{%- endif -%}
  {%- set relation = adapter.get_relation(this.database, this.schema, this.identifier) -%}
  {%- if relation is none -%}{{ return(none) }}{%- endif -%}
  {{ return(s3tables_spark.table_properties(relation).get(s3tables_spark.state_prefix() ~ 'last_processed_value')) }}
{%- endmacro %}

{#-- True only on an incremental run with that strategy, as the adapter's helpers. --#}
{% macro strategy_is(strategy) -%}
  {{ return(is_incremental() and s3tables_spark.incremental_settings().strategy == strategy) }}
{%- endmacro %}
