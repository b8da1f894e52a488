{#-- on_schema_change `full_incremental_refresh`, as the adapter runs it
     (dbt/adapters/s3tables/incremental/chunked_refresh.py and chunk_loop.py): the table is
     replaced empty with the new schema, the chunk plan kept on it as the property
     `dbt.s3tables.full_incremental_refresh` in the same commit; then the model's whole
     history is written one INSERT (one commit) per time chunk that holds rows. A run that
     stops part-way is resumed by the next one after the chunk holding the table's greatest
     event time, read from the table itself, so no chunk is written twice. The plan's
     property, its JSON and the SQL are the adapter's: either can resume the other's. --#}

{% macro rebuild_plan_key() -%}
  {{ return(s3tables_spark.state_prefix() ~ 'full_incremental_refresh') }}
{%- endmacro %}

{#-- The model's `full_incremental_refresh` config, checked with the adapter's sentences:
     {begin (YYYY-MM-DD HH:MM:SS, or none), chunk, event_time}. --#}
{% macro chunk_plan() -%}
  {%- set key = 'full_incremental_refresh' -%}
  {%- set raw = config.get('full_incremental_refresh') -%}
  {%- if raw is not mapping -%}
    {{ s3tables_spark.config_error(key, 'on_schema_change `full_incremental_refresh` needs this config as a mapping', "set `full_incremental_refresh: {event_time: <column>, begin: '2024-01-01', chunk: day}`") }}
  {%- endif -%}
  {%- set unknown = [] -%}
  {%- for k in raw.keys() | sort if k not in ['event_time', 'begin', 'chunk'] -%}{%- do unknown.append(k) -%}{%- endfor -%}
  {%- if unknown -%}
    {{ s3tables_spark.config_error(key, 'unknown key(s) ' ~ unknown | join(', '), 'use only event_time, begin and chunk') }}
  {%- endif -%}
  {%- set event_time = raw.get('event_time') -%}
  {%- if not event_time or event_time is not string -%}
    {{ s3tables_spark.config_error(key, '`event_time` is missing', "name the model's column that places each row in time") }}
  {%- endif -%}
  {%- set chunk = raw.get('chunk', 'day') | string | lower -%}
  {%- if chunk not in ['day', 'week', 'month'] -%}
    {{ s3tables_spark.config_error(key, 'unknown chunk `' ~ raw.get('chunk') ~ '`', 'use one of: day, week, month') }}
  {%- endif -%}
  {%- set begin = raw.get('begin') -%}
  {%- if begin is not none -%}
    {%- set text = begin | string | trim -%}
    {%- set shape = modules.re.fullmatch('([0-9]{4})-([0-9]{2})-([0-9]{2})( ([0-9]{2}):([0-9]{2}):([0-9]{2}))?', text) -%}
    {%- if not shape or not (1 <= shape.group(2) | int <= 12) or not (1 <= shape.group(3) | int <= 31)
          or (shape.group(4) and not (shape.group(5) | int < 24 and shape.group(6) | int < 60 and shape.group(7) | int < 60)) -%}
      {{ s3tables_spark.config_error(key, '`begin` is `' ~ begin ~ '`, not a date', 'write it as YYYY-MM-DD (or YYYY-MM-DD HH:MM:SS)') }}
    {%- endif -%}
    {%- set begin = text if shape.group(4) else text ~ ' 00:00:00' -%}
  {%- endif -%}
  {{ return({'begin': begin, 'chunk': chunk, 'event_time': event_time}) }}
{%- endmacro %}

{#-- The plan as the table keeps it: the adapter's JSON (sorted keys). --#}
{% macro plan_property(plan) -%}
  {{ return({s3tables_spark.rebuild_plan_key(): tojson(plan, sort_keys=true)}) }}
{%- endmacro %}

{#-- The start of the chunk after the one starting at `start` ('YYYY-MM-DD HH:MM:SS'). --#}
{% macro next_chunk_start(start, chunk) -%}
  {%- set at = modules.datetime.datetime.strptime(start, '%Y-%m-%d %H:%M:%S') -%}
  {%- if chunk == 'day' -%}
    {%- set after = at + modules.datetime.timedelta(days=1) -%}
  {%- elif chunk == 'week' -%}
    {%- set after = at + modules.datetime.timedelta(days=7) -%}
  {%- else -%}
    {%- set after = at.replace(year=at.year + at.month // 12, month=at.month % 12 + 1) -%}
  {%- endif -%}
  {{ return(after.strftime('%Y-%m-%d %H:%M:%S')) }}
{%- endmacro %}

{#-- The time windows still to write: [(lower, upper, with_nulls)], none meaning open. --#}
{% macro chunk_windows(starts, started, resume_from) -%}
  {%- if not starts -%}
    {#-- Nothing after `begin`: a fresh rebuild still writes every row, in one chunk. --#}
    {{ return([] if started else [(none, none, true)]) }}
  {%- endif -%}
  {%- set windows = [] -%}
  {%- for start in starts | sort -%}
    {%- set lower = start if not loop.first else resume_from -%}
    {%- set upper = none if loop.last else (starts | sort)[loop.index] -%}
    {%- do windows.append((lower, upper, not started and loop.first)) -%}
  {%- endfor -%}
  {{ return(windows) }}
{%- endmacro %}

{% macro window_predicate(column, window) -%}
  {%- set bounds = [] -%}
  {%- if window[0] is not none -%}{%- do bounds.append(column ~ " >= TIMESTAMP '" ~ window[0] ~ "'") -%}{%- endif -%}
  {%- if window[1] is not none -%}{%- do bounds.append(column ~ " < TIMESTAMP '" ~ window[1] ~ "'") -%}{%- endif -%}
  {%- if window[2] -%}
    {{ return(('(' ~ bounds | join(' AND ') ~ ' OR ' ~ column ~ ' IS NULL)') if bounds else none) }}
  {%- endif -%}
  {{ return(bounds | join(' AND ') or column ~ ' IS NOT NULL') }}
{%- endmacro %}

{#-- Write the model's whole history (the temporary view `history`, whose columns are
     `history_columns`) into `target`, one INSERT per chunk still missing, following the
     plan the table keeps; an scd2 model's rows as open versions (its build_sql), as on
     a first build. The number of chunks written. --#}
{% macro write_chunks(target, settings, plan, history, history_columns) -%}
  {%- set table_columns = adapter.get_columns_in_relation(target) | map(attribute='name') | list -%}
  {%- set column = s3tables_spark.quote(s3tables_spark.column_named(table_columns, plan.event_time) or plan.event_time) -%}
  {%- set unit = plan.chunk | upper -%}
  {#-- Each chunk follows the chunks already committed: it is written on a branch of the
       table's snapshot the progress is read at, and published only from there
       (run_branch.sql), so two rebuilds at once never both append it. --#}
  {%- set run = namespace(base=s3tables_spark.main_snapshot(target)) -%}
  {%- set branch = s3tables_spark.begin_run_branch(target, run.base) if run.base is not none else none -%}
  {%- set written = branch.relation if branch is not none else target -%}
  {%- set progress = run_query("SELECT COUNT(*), CAST(date_trunc('" ~ unit ~ "', MAX(" ~ column ~ ")) AS STRING) FROM " ~ written)[0] -%}
  {%- set started = progress[0] | int > 0 -%}
  {%- set resume_from = s3tables_spark.next_chunk_start(progress[1], plan.chunk) if started and progress[1] is not none else none -%}
  {%- if started -%}
    {{ log('s3tables_spark: ' ~ model.name ~ ': resuming full_incremental_refresh at ' ~ (resume_from or 'the rows with an event time') ~ ' (' ~ progress[0] ~ ' rows already committed)', info=true) }}
  {%- endif -%}
  {%- set source_column = s3tables_spark.quote(plan.event_time) -%}
  {%- set conditions = [source_column ~ ' IS NOT NULL'] -%}
  {%- if plan.begin -%}{%- do conditions.append(source_column ~ " >= TIMESTAMP '" ~ plan.begin ~ "'") -%}{%- endif -%}
  {%- if started -%}
    {%- do conditions.append(source_column ~ (" >= TIMESTAMP '" ~ resume_from ~ "'" if resume_from else ' IS NOT NULL')) -%}
  {%- endif -%}
  {%- set starts = run_query("SELECT DISTINCT CAST(date_trunc('" ~ unit ~ "', " ~ source_column ~ ") AS STRING) AS chunk_start FROM " ~ history ~ ' WHERE ' ~ conditions | join(' AND ') ~ ' ORDER BY chunk_start').columns[0].values() | list -%}
  {%- set windows = s3tables_spark.chunk_windows(starts, started, resume_from) -%}
  {%- for window in windows -%}
    {%- set predicate = s3tables_spark.window_predicate(source_column, window) -%}
    {%- set w = {
          'target': written,
          'source_sql': s3tables_spark.build_sql(settings, 'SELECT * FROM ' ~ history ~ ((' WHERE ' ~ predicate) if predicate else '')),
          'target_columns': table_columns,
          'source_columns': history_columns + ([settings.valid_from, settings.valid_to] if settings.strategy == 'scd2' else []),
    } -%}
    {{ log('s3tables_spark: ' ~ model.name ~ ': chunk ' ~ loop.index ~ '/' ~ windows | length ~ ' [' ~ (window[0] or 'start') ~ ', ' ~ (window[1] or 'end') ~ ')', info=true) }}
    {% call statement('s3tables_chunk') -%}
      {{ s3tables_spark.append_sql(w) }}
    {%- endcall %}
    {%- if branch is not none -%}
      {%- set run.base = s3tables_spark.publish_run_branch(target, branch, run.base) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if branch is not none -%}{%- do s3tables_spark.drop_branch(target, branch.name) -%}{%- endif -%}
  {{ return(windows | length) }}
{%- endmacro %}

{#-- A chunked rebuild (or its resumption): the whole history as a temporary view, the
     chunks written, the plan removed once the state is recorded (by the caller). --#}
{% macro rebuild_in_chunks(target, settings, existing, plan, diff) -%}
  {%- set history = this.incorporate(path={'identifier': this.identifier ~ '__dbt_history'}).include(database=false, schema=false) -%}
  {% call statement('s3tables_history') -%}
    CREATE OR REPLACE TEMPORARY VIEW {{ history }} AS {{ s3tables_spark.first_build_sql(existing) }}
  {%- endcall %}
  {%- if diff is not none -%}
    {%- do s3tables_spark.replace_table(target, settings, 'SELECT * FROM ' ~ history ~ ' WHERE false', diff, s3tables_spark.plan_property(plan)) -%}
  {%- endif -%}
  {%- set history_columns = adapter.get_columns_in_relation(history) | map(attribute='name') | list -%}
  {%- set chunks = s3tables_spark.write_chunks(target, settings, plan, history, history_columns) -%}
  {% call statement('s3tables_history_dropped') -%}
    DROP VIEW IF EXISTS {{ history }}
  {%- endcall %}
  {%- if diff is none -%}
    {%- call noop_statement('main', 'FULL INCREMENTAL REFRESH resumed in ' ~ chunks ~ ' chunks') -%}{%- endcall -%}
  {%- endif -%}
{%- endmacro %}

{% macro remove_rebuild_plan(target) -%}
  {%- do s3tables_spark.unset_properties(target, [s3tables_spark.rebuild_plan_key()]) -%}
{%- endmacro %}
