{#-- The incremental materialization for the `spark` adapter on Iceberg tables, as the
     dbt-s3tables adapter runs it: every config key checked first; a first build (and
     --full-refresh, which keeps the table's history) is one CREATE [OR REPLACE] TABLE AS;
     an incremental run evolves the schema (never dropping a column), then writes its rows
     in one statement (one Iceberg commit), and keeps the model's state in table
     properties. A run with no rows commits nothing (microbatch replaces its window). --#}

{% materialization incremental, adapter='spark', supported_languages=['sql'] -%}
  {%- do s3tables_spark.check_config_keys() -%}
  {%- do s3tables_spark.check_latest_version_pointer() -%}
  {%- do s3tables_spark.refuse_contract() -%}
  {%- set settings = s3tables_spark.incremental_settings() -%}
  {%- set target = this.incorporate(type='table') -%}
  {%- do s3tables_spark.check_names(target) -%}
  {%- set existing = load_relation(this) -%}
  {%- set rows_view = this.incorporate(path={'identifier': this.identifier ~ '__dbt_tmp'}).include(database=false, schema=false) -%}
  {%- set history_columns = [settings.valid_from, settings.valid_to] if settings.strategy == 'scd2' else [] -%}

  {{ run_hooks(pre_hooks) }}

  {%- do s3tables_spark.run_sql_header() -%}
  {%- set incremental_run = existing is not none and not existing.is_view and not should_full_refresh() -%}
  {%- set previous = s3tables_spark.table_properties(existing) if incremental_run else {} -%}
  {#-- The snapshot the model's SQL reads its table at, noted before it runs (see
       run_branch.sql). --#}
  {%- set base = s3tables_spark.base_snapshot(previous) if incremental_run and s3tables_spark.reads_own_table() else none -%}
  {%- do s3tables_spark.cache_rows(rows_view, compiled_code) -%}
  {%- set model_columns = s3tables_spark.columns_with_types(rows_view) -%}
  {%- set column_names = model_columns | map(attribute='name') | list -%}
  {%- do s3tables_spark.check_names(target, column_names) -%}
  {%- do s3tables_spark.check_columns_exist(settings, column_names) -%}

  {%- set chunked = namespace(rebuild=false) -%}
  {#-- The table's properties as this run leaves them before it writes its state. --#}
  {%- set held = namespace(properties=previous) -%}
  {%- if not incremental_run -%}
    {%- if existing is not none and existing.is_view -%}
      {% do adapter.drop_relation(existing) %}
    {%- endif -%}
    {%- call statement('main') -%}
      {{ s3tables_spark.create_table_as(target, s3tables_spark.build_sql(settings, 'SELECT * FROM ' ~ rows_view), existing is not none and not existing.is_view, true) }}
    {%- endcall -%}
    {#-- The replace keeps the table's properties: the model state it held is replaced
         by this build's (its `last_processed_value` went with the rows), and a plan left
         by a stopped chunked rebuild is removed with it, or the next run would resume it. --#}
    {%- set held.properties = s3tables_spark.table_properties(existing) if existing is not none and not existing.is_view else {} -%}
    {%- set chunked.rebuild = s3tables_spark.rebuild_plan_key() in held.properties -%}
  {%- else -%}
    {%- do s3tables_spark.compare_state(settings, previous) -%}
    {%- do s3tables_spark.align_write_mode(target, previous) -%}
    {%- do s3tables_spark.check_partitioning(existing, settings.partitioning) -%}
    {%- set existing_columns = s3tables_spark.columns_with_types(existing) -%}
    {%- set diff = s3tables_spark.schema_diff(existing_columns, model_columns, history_columns) -%}
    {%- set chunked.rebuild = s3tables_spark.rebuild_plan_key() in previous or (settings.on_schema_change == 'full_incremental_refresh' and (diff.added or diff.changed)) -%}
    {%- if s3tables_spark.rebuild_plan_key() in previous -%}
      {#-- A chunked rebuild left part-way: resumed with the plan it started with. --#}
      {%- do s3tables_spark.rebuild_in_chunks(target, settings, existing, fromjson(previous[s3tables_spark.rebuild_plan_key()]), none) -%}
    {%- elif chunked.rebuild -%}
      {%- do s3tables_spark.rebuild_in_chunks(target, settings, existing, settings.chunk_plan, diff) -%}
    {%- elif settings.on_schema_change == 'recreate_empty' and (diff.added or diff.changed) -%}
      {%- do s3tables_spark.replace_table(target, settings, 'SELECT * FROM ' ~ rows_view, diff) -%}
    {%- elif settings.on_schema_change == 'full_refresh' and (diff.added or diff.changed) -%}
      {%- do s3tables_spark.replace_table(target, settings, s3tables_spark.first_build_sql(existing), diff) -%}
    {%- else -%}
      {%- set evolution = s3tables_spark.plan_evolution(settings.on_schema_change, diff) -%}
      {%- do s3tables_spark.apply_evolution(target, evolution) -%}
      {%- if diff.removed and settings.on_schema_change != 'fail' -%}
        {{ log('s3tables_spark: ' ~ model.name ~ ': column(s) ' ~ diff.removed | join(', ') ~ ' no longer returned by the model are kept (this package never drops a column)', info=true) }}
      {%- endif -%}
      {#-- The columns read above, unless the evolution just changed them: one DESCRIBE
           less per run whose schema did not change. --#}
      {%- set table_columns = (adapter.get_columns_in_relation(target) if evolution.added or evolution.changed else existing_columns) | map(attribute='name') | list -%}
      {%- set w = s3tables_spark.incremental_write(settings, target, rows_view, table_columns, column_names) -%}
      {%- if settings.strategy != 'microbatch' and not s3tables_spark.has_rows(rows_view) -%}
        {{ log('s3tables_spark: ' ~ model.name ~ ': no rows, nothing committed', info=true) }}
        {%- call noop_statement('main', 'OK (no rows, nothing committed)') -%}{%- endcall -%}
      {%- else -%}
        {%- set branch = s3tables_spark.begin_run_branch(target, base) if base is not none else none -%}
        {%- if branch is not none -%}{%- do w.update({'target': branch.relation}) -%}{%- endif -%}
        {%- if settings.strategy == 'insert_overwrite' -%}
          {% call statement('s3tables_overwrite_mode') %}SET spark.sql.sources.partitionOverwriteMode = DYNAMIC{% endcall %}
        {%- endif -%}
        {%- call statement('main') -%}
          {{ s3tables_spark.strategy_sql(settings.strategy, w) }}
        {%- endcall -%}
        {%- if settings.strategy == 'insert_overwrite' -%}
          {% call statement('s3tables_overwrite_mode') %}SET spark.sql.sources.partitionOverwriteMode = STATIC{% endcall %}
        {%- endif -%}
        {%- if branch is not none -%}
          {%- do s3tables_spark.publish_run_branch(target, branch, base) -%}
          {%- do s3tables_spark.drop_branch(target, branch.name) -%}
        {%- endif -%}
      {%- endif -%}
    {%- endif -%}
  {%- endif -%}

  {#-- Only the state that changed: a run with no rows and the same config commits no
       metadata (an hourly job would otherwise add a metadata version every hour). --#}
  {%- set state = s3tables_spark.state_properties(settings, s3tables_spark.next_processed_value(settings, rows_view, model_columns, previous)) -%}
  {%- do s3tables_spark.set_properties(target, s3tables_spark.changed_properties(state, held.properties)) -%}
  {%- do s3tables_spark.unset_properties(target, s3tables_spark.stale_state_keys(state, held.properties)) -%}
  {%- if chunked.rebuild -%}
    {%- do s3tables_spark.remove_rebuild_plan(target) -%}
  {%- endif -%}
  {%- do s3tables_spark.uncache_rows(rows_view) -%}
  {%- do s3tables_spark.persist_docs(target, held.properties) -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target]}) }}
{%- endmaterialization %}

{#-- The statement's names (see strategies.sql). --#}
{% macro incremental_write(settings, target, rows_view, table_columns, column_names) -%}
  {%- set update_columns = settings.update_columns -%}
  {%- if settings.exclude_columns is not none -%}
    {%- set excluded = settings.exclude_columns | map('lower') | list + settings.unique_key | map('lower') | list -%}
    {%- set update_columns = [] -%}
    {%- for c in table_columns if c | lower not in excluded -%}{%- do update_columns.append(c) -%}{%- endfor -%}
  {%- endif -%}
  {{ return({
    'target': target,
    'source_sql': compiled_code,
    'source_unique': settings.unique_key_is_unique is true,
    'target_columns': table_columns,
    'source_columns': column_names,
    'unique_key': settings.unique_key,
    'predicates': settings.predicates,
    'update_columns': update_columns,
    'watermark_column': settings.watermark_column,
    'check_columns': settings.check_columns,
    'valid_from': settings.valid_from,
    'valid_to': settings.valid_to,
    'event_time': settings.event_time,
    'window_start': config.get('__dbt_internal_microbatch_event_time_start'),
    'window_end': config.get('__dbt_internal_microbatch_event_time_end'),
  }) }}
{%- endmacro %}

{#-- Every column a key names is one the model returns. --#}
{% macro check_columns_exist(settings, column_names) -%}
  {%- set available = column_names | map('lower') | list -%}
  {%- for key, columns in [
        ('unique_key', settings.unique_key),
        ('watermark_column', [settings.watermark_column] if settings.watermark_column else []),
        ('merge_update_columns', settings.update_columns or []),
        ('merge_exclude_columns', settings.exclude_columns or []),
        ('scd_check_cols', settings.check_columns or []),
        ('event_time', [settings.event_time] if settings.event_time else []),
        ('full_incremental_refresh', [settings.chunk_plan.event_time] if settings.chunk_plan else []),
  ] -%}
    {%- set missing = [] -%}
    {%- for c in columns if c | lower not in available -%}{%- do missing.append(c) -%}{%- endfor -%}
    {%- if missing -%}
      {{ s3tables_spark.config_error(key, 'column(s) ' ~ missing | join(', ') ~ " not in the model's output (" ~ column_names | join(', ') ~ ')', 'select the column(s) in the model or correct `' ~ key ~ '`') }}
    {%- endif -%}
  {%- endfor -%}
{%- endmacro %}

{#-- A changed `write_mode` takes effect on the next run, without a rebuild. --#}
{% macro align_write_mode(target, previous) -%}
  {%- set wanted = s3tables_spark.creation_properties(true) -%}
  {%- set changed = {} -%}
  {%- for key in ['write.merge.mode', 'write.update.mode', 'write.delete.mode'] if previous.get(key) != wanted[key] -%}
    {%- do changed.update({key: wanted[key]}) -%}
  {%- endfor -%}
  {%- do s3tables_spark.set_properties(target, changed) -%}
{%- endmacro %}

{#-- recreate_empty, full_refresh and a chunked rebuild: replace the table, atomically,
     with `sql`'s rows (scd2 adds its validity columns), plus, NULL-filled, every column the
     model no longer returns (no mode drops a column), `extra_properties` set in the same
     commit. --#}
{% macro replace_table(target, settings, sql, diff, extra_properties={}) -%}
  {%- set kept = [] -%}
  {%- for column in s3tables_spark.columns_with_types(target) if column.name in diff.removed -%}
    {%- do kept.append(', CAST(NULL AS ' ~ column.data_type ~ ') AS ' ~ s3tables_spark.quote(column.name)) -%}
  {%- endfor -%}
  {%- set rows = 'SELECT *' ~ kept | join('') ~ ' FROM (\n' ~ s3tables_spark.build_sql(settings, sql) ~ '\n) AS dbt_replacement_rows' -%}
  {%- call statement('main') -%}
    {{ s3tables_spark.create_table_as(target, rows, true, true, extra_properties) }}
  {%- endcall -%}
{%- endmacro %}

{#-- The rows a new table is created from: scd2 adds its validity columns. --#}
{% macro build_sql(settings, sql) -%}
  {%- if settings.strategy != 'scd2' -%}{{ return(sql) }}{%- endif -%}
  {{ return('SELECT *, current_timestamp() AS ' ~ s3tables_spark.quote(settings.valid_from) ~ ', CAST(NULL AS TIMESTAMP) AS ' ~ s3tables_spark.quote(settings.valid_to) ~ ' FROM (\n' ~ sql ~ '\n) AS dbt_scd2_source') }}
{%- endmacro %}

{#-- The model's SQL as on a first build (its whole history): rendered again while dbt's
     relation cache does not hold the table, so dbt's is_incremental() is false. --#}
{% macro first_build_sql(existing) -%}
  {%- do adapter.cache_dropped(existing) -%}
  {%- if adapter.get_relation(existing.database, existing.schema, existing.identifier) is not none -%}
    {%- do adapter.cache_added(existing) -%}
    {{ s3tables_spark.config_error('on_schema_change', '`full_refresh` could not render the model as a first build (dbt lists the table again)', 'rebuild with `dbt run -s ' ~ model.name ~ ' --full-refresh`') }}
  {%- endif -%}
  {%- set sql = render(model.raw_code) -%}
  {%- do adapter.cache_added(existing) -%}
  {{ return(sql) }}
{%- endmacro %}
