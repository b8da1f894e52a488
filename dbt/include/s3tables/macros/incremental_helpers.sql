{#-- Helpers for model SQL, next to dbt's is_incremental(). --#}

{#-- The greatest `watermark_column` value processed by the last successful run (a
     string), or none before the first run: `where updated_at > '{{ last_processed_value() }}'`. --#}
{% macro last_processed_value() -%}
  {{ return(adapter.incremental(this).last_processed_value(model) if execute else none) }}
{%- endmacro %}

{% macro _s3tables_strategy_is(strategy) -%}
  {{ return(is_incremental() and adapter.model_build(model).resolved_strategy() == strategy) }}
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

{#-- dbt's is_incremental() (which this replaces: the `dbt.` namespace resolves to this
     macro too), also false while the model's SQL is rendered as on a first build (its
     whole-history query, for an on_schema_change mode that rebuilds the table). True,
     the model's run depends on its table's state: its commit is checked against the
     snapshot it planned from (incremental/run_bases.py). --#}
{% macro is_incremental() -%}
  {#-- A unit test has no `this` unless it gives one; it sets is_incremental() itself
       through `overrides`. --#}
  {% if not execute or this is none or adapter.incremental(this).renders_as_first_build() %}
    {{ return(False) }}
  {% endif %}
  {% set relation = adapter.get_relation(this.database, this.schema, this.table) %}
  {% set incremental = relation is not none
            and relation.type == 'table'
            and model.config.materialized == 'incremental'
            and not should_full_refresh() %}
  {#-- Only a command that writes needs the base (`compile`, `show`, `docs generate`
       render without writing: no catalog read for them). --#}
  {% if incremental and invocation_args_dict.get('which') in ('run', 'build', 'retry') %}
    {% do adapter.incremental(this).reads_its_state(model) %}
  {% endif %}
  {{ return(incremental) }}
{%- endmacro %}

{#-- An upstream Iceberg table's rows this run has not read yet, in place of ref() or
     source(): `select * from {{ upstream_changes(ref('orders')) }}`. A first build (and
     --full-refresh) reads the whole upstream; an incremental run reads only the rows
     appended since the snapshot the table's last build read, up to the upstream's
     snapshot when the run started. With `unique_key=`: its row changes per key since
     then, each with `_change_type` (INSERT, UPDATE, DELETE), for a merge model whose
     `merge_delete_when` deletes. In a unit test, the rows given for the upstream (each an
     `INSERT` with a key). See incremental/upstream_reads.py. --#}
{% macro upstream_changes(relation, unique_key=none) -%}
  {%- if not execute -%}
    {{ return(relation) }}
  {%- endif -%}
  {#-- A unit test's given rows are the range it reads. --#}
  {%- if model.resource_type == 'unit_test' -%}
    {{ return(adapter.upstream_reads().unit_test_sql(relation, unique_key)) }}
  {%- endif -%}
  {{ return(adapter.upstream_reads().changes_sql(model, this, relation, is_incremental(), unique_key, s3tables_run_mode())) }}
{%- endmacro %}

{#-- dbt's run mode: 'empty' (`--empty`: refs read no row), 'sample' (`--sample`: refs read
     a sample), or '' (a run of every row). A run in either mode records no read and no
     incremental state: what it wrote is not what a run of every row would. --#}
{% macro s3tables_run_mode() -%}
  {#-- dbt's `flags` holds no SAMPLE; the invocation's arguments do. --#}
  {{ return('empty' if flags.EMPTY else ('sample' if invocation_args_dict.get('sample') else '')) }}
{%- endmacro %}

{#-- The model's SQL as on a first build (is_incremental() false). --#}
{% macro s3tables_first_build_sql() -%}
  {{ return(adapter.incremental(this).render_as_first_build(render, model['raw_code'])) }}
{%- endmacro %}
