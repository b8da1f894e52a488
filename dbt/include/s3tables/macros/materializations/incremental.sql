{#-- Incremental models. `adapter.incremental(this).run` parses the config, analyses the
     model's SQL once, reads the table's state and decides what this run does, checking
     everything before anything is written (see incremental/run.py). A run that creates
     the table (first build, --full-refresh, or an on_schema_change mode that replaces
     it) does so with one CREATE [OR REPLACE] TABLE ... AS; `run.write()` then commits the
     strategy's one statement, or the chunks of a chunked rebuild. --#}
{% materialization incremental, adapter='s3tables', supported_languages=['sql', 'python'] %}
  {%- set model_config = s3tables_model_config() -%}
  {%- set identifier = model['alias'] -%}
  {%- set existing_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set target_relation = api.Relation.create(identifier=identifier, schema=schema, database=database, type='table') -%}
  {%- set full_refresh = should_full_refresh() -%}

  {{ s3tables_pre_hooks() }}
  {{ s3tables_sql_header() }}

  {#-- A Python model's DataFrame becomes a temporary view the SQL path selects from. --#}
  {%- if model['language'] == 'python' -%}
    {%- set compiled_code = adapter.model_build(model).python_model_sql(compiled_code) -%}
  {%- endif -%}
  {%- set compiled_code = s3tables_model_query(compiled_code) -%}
  {#-- `skip_when_unchanged` (unchanged_inputs.py): nothing it is built from changed. --#}
  {% if s3tables_skips_unchanged(model_config, target_relation, compiled_code, existing_relation is not none and not existing_relation.is_view, full_refresh) %}
    {{ return(s3tables_finish_build(model_config, target_relation, none, existing_relation, full_refresh_mode=full_refresh)) }}
  {% endif %}
  {%- set batch = model.get('batch') -%}
  {#-- Audited (`audit_before_publish`, see audit.py): every write goes to the table's
       audit branch; a table to create is created empty and filled on the branch. --#}
  {%- set audit = s3tables_audit_build(model_config, target_relation) -%}
  {#-- A custom strategy (dbt's hook: a `get_incremental_<name>_sql` macro of the project
       or a package) renders its statement with its macro. --#}
  {%- set custom_macro = model_config.incremental.strategy.custom_macro -%}
  {%- set run = adapter.incremental(target_relation).run(
        model_config, compiled_code, existing_relation, full_refresh,
        batch_start=batch.event_time_start if batch else none,
        batch_end=batch.event_time_end if batch else none, audit=audit, model_node=model,
        strategy_macro=context[custom_macro] if custom_macro else none,
        records_state=not s3tables_run_mode()) -%}
  {% do adapter.model_build(model).check_target_rules(target_relation, 'incremental', columns=run.columns) %}
  {% if run.creates_table and run.replaces_table %}
    {% do adapter.model_build(model).check_format_version(target_relation) %}
  {% endif %}
  {% if run.needs_whole_history %}
    {% do run.use_whole_history(s3tables_model_query(s3tables_first_build_sql())) %}
  {% endif %}

  {% if existing_relation is not none and existing_relation.is_view %}
    {{ adapter.drop_relation(existing_relation) }}
    {% set existing_relation = none %}
  {% endif %}

  {#-- A run that creates the table: its create statement (see build_steps.sql); any
       other: the audit branch prepared, when audited, for the run's own statements. --#}
  {% do s3tables_audited_write(target_relation, audit, existing_relation is not none, run=run, create='typed') %}
  {%- set response = run.write() -%}
  {% if response is not none %}
    {% do store_result('main', response=response) %}
  {% endif %}
  {#-- target/run shows what ran: the create statement wrote its own; the run's writes
       (a strategy's statement, chunks) are executed in Python and written here. --#}
  {% if run.written_sql %}
    {% do write(run.written_sql) %}
  {% endif %}

  {{ return(s3tables_finish_build(model_config, target_relation, audit, existing_relation, full_refresh_mode=full_refresh)) }}
{% endmaterialization %}
