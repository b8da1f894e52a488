{#-- Every config key and value checked as the adapter checks them, before anything is
     written, in the adapter's one sentence: "Model `m`, config `k`: problem. Fix: fix". --#}

{% macro config_error(key, problem, fix) -%}
  {{ exceptions.raise_compiler_error('Model `' ~ model.name ~ '`, config `' ~ key ~ '`: ' ~ problem ~ '. Fix: ' ~ fix) }}
{%- endmacro %}

{#-- dbt 1.11's model config fields, the keys dbt reads by name beyond them, and every key
     the adapter reads (dbt/adapters/s3tables/keys/config_keys.py): a unit test keeps this
     list equal to those. --#}
{% macro known_config_keys() -%}
  {{ return([
    'access', 'alias', 'audit_before_publish', 'batch_size', 'begin', 'buckets', 'catalog',
    'catalog_name', 'clustered_by', 'column_types', 'concurrent_batches', 'config_keys_defaults',
    'config_keys_used', 'contract', 'database', 'delimiter', 'description', 'docs', 'enabled',
    'event_time', 'file_format', 'format_version', 'freshness', 'full_incremental_refresh',
    'full_refresh', 'grants', 'group', 'hard_deletes', 'incremental_predicates',
    'incremental_strategy', 'incremental_strategy_traits', 'indexes', 'invalidate_hard_deletes', 'latest_version_pointer', 'loaded_at_field',
    'loaded_at_query', 'location_root', 'lookback', 'maintenance', 'materialized',
    'merge_delete_when', 'merge_exclude_columns', 'merge_update_columns', 'meta',
    'meta_keys_defaults', 'meta_keys_used', 'on_configuration_change', 'on_error', 'on_schema_change',
    'options', 'packages', 'partition_by', 'persist_docs', 'post-hook', 'pre-hook', 'predicates',
    'quote_columns', 'quoting', 'scd_check_cols', 'scd_valid_from', 'scd_valid_to', 'schema',
    'skip_when_unchanged', 'snapshot_table_column_names', 'sql_header', 'static_analysis', 'tags', 'tblproperties',
    'unique_key', 'unique_key_is_unique', 'use_merge', 'watermark_column', 'write_mode',
  ]) }}
{%- endmacro %}

{#-- dbt's snapshot config fields beyond a model's (a unit test keeps them equal). --#}
{% macro snapshot_config_keys() -%}
  {{ return(['check_cols', 'dbt_valid_to_current', 'snapshot_meta_column_names', 'strategy', 'target_database', 'target_schema', 'updated_at']) }}
{%- endmacro %}

{#-- Keys the adapter reads that need its Python side (PyIceberg, the run's own records):
     each is refused when set, naming why and what to do (docs/dbt-cloud.md). --#}
{% macro adapter_only_keys() -%}
  {{ return({
    'audit_before_publish': 'write-audit-publish needs the adapter (it stages on an Iceberg branch and publishes only after the tests pass, which dbt-spark cannot do)',
    'maintenance': 'maintenance after a build needs the adapter (PyIceberg reads the thresholds)',
    'merge_delete_when': 'deleting by condition reads upstream row changes, which need the adapter',
    'skip_when_unchanged': 'skipping an unchanged build reads the query plan in the adapter\'s JVM and the table\'s last commit with PyIceberg, which need the adapter',
    'incremental_strategy_traits': 'a custom strategy (a get_incremental_<name>_sql macro) runs only on the adapter; the package runs its six built-in strategies',
  }) }}
{%- endmacro %}

{#-- Case and `-` / `_` do not count in a key's spelling. --#}
{% macro normalized_key(key) -%}
  {{ return(key | lower | replace('-', '_')) }}
{%- endmacro %}

{#-- 2 * (longest common subsequence) / (both lengths): how alike two names are. --#}
{% macro likeness(a, b) -%}
  {%- set previous = namespace(row=[]) -%}
  {%- for _ in range(b | length + 1) -%}{%- do previous.row.append(0) -%}{%- endfor -%}
  {%- for i in range(a | length) -%}
    {%- set current = [0] -%}
    {%- for j in range(b | length) -%}
      {%- if a[i] == b[j] -%}
        {%- do current.append(previous.row[j] + 1) -%}
      {%- else -%}
        {%- do current.append([previous.row[j + 1], current[j]] | max) -%}
      {%- endif -%}
    {%- endfor -%}
    {%- set previous.row = current -%}
  {%- endfor -%}
  {{ return(2.0 * previous.row[b | length] / ((a | length) + (b | length))) }}
{%- endmacro %}

{#-- The known key most like `key` (at least 0.6 alike, as the adapter's cutoff), or none. --#}
{% macro nearest_key(key, known) -%}
  {%- set wanted = s3tables_spark.normalized_key(key) -%}
  {%- set best = namespace(score=0.6, key=none) -%}
  {%- for candidate in known | sort -%}
    {%- set score = s3tables_spark.likeness(wanted, s3tables_spark.normalized_key(candidate)) -%}
    {#-- On a tie the greater name wins, as in difflib's get_close_matches. --#}
    {%- if score >= best.score -%}
      {%- set best.score = score -%}
      {%- set best.key = candidate -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(best.key) }}
{%- endmacro %}

{#-- Warn (or, with var `s3tables_fail_on_unknown_config_keys`, fail) for each config key
     nothing reads, before anything is written. --#}
{% macro check_config_keys() -%}
  {%- set known = s3tables_spark.known_config_keys() + (s3tables_spark.snapshot_config_keys() if model.resource_type == 'snapshot' else []) -%}
  {%- set declared = var('s3tables_known_config_keys', []) -%}
  {%- set declared = [declared] if declared is string else declared -%}
  {%- set read_by_model = model.config.get('config_keys_used') or [] -%}
  {%- for key in model.config.keys() | sort
        if key not in known and key not in declared and key not in read_by_model
        and not key.startswith('__dbt_internal') -%}
    {%- set nearest = s3tables_spark.nearest_key(key, known + declared) -%}
    {%- set hint = (' (did you mean `' ~ nearest ~ '`?)') if nearest else '' -%}
    {%- set sentence = 'Model `' ~ model.name ~ '`, config `' ~ key ~ '`: neither dbt nor s3tables reads this key, so it changes nothing'
          ~ hint ~ ". Fix: correct it, or list a key that a package or macro of the project reads in var `s3tables_known_config_keys`" -%}
    {%- if var('s3tables_fail_on_unknown_config_keys', false) -%}
      {{ exceptions.raise_compiler_error(sentence) }}
    {%- else -%}
      {% do exceptions.warn(sentence ~ ' (var `s3tables_fail_on_unknown_config_keys` makes this an error)') %}
    {%- endif -%}
  {%- endfor -%}
  {%- for key, reason in s3tables_spark.adapter_only_keys().items() if config.get(key) -%}
    {{ s3tables_spark.config_error(key, reason, 'remove it, or run the model with the dbt-s3tables adapter') }}
  {%- endfor -%}
  {%- set file_format = config.get('file_format') -%}
  {%- if file_format is not none and (file_format | string | lower) != 'iceberg' -%}
    {{ s3tables_spark.config_error('file_format', '`' ~ file_format ~ '` is not available: every table this adapter builds is an Iceberg table', 'remove `file_format`, or set it to `iceberg`') }}
  {%- endif -%}
  {%- if config.get('grants') -%}
    {{ s3tables_spark.config_error('grants', 'Iceberg catalogs (S3 Tables, Glue, REST, the embedded one) have no SQL grants; access to their tables is governed by IAM policies and Lake Formation', 'remove `grants` from this model\'s config (or set it only for other targets)') }}
  {%- endif -%}
  {%- set catalog_reason = "the package builds every model in the Thrift server's own catalog; a catalog integration (catalogs.yml) needs the adapter" -%}
  {%- for key, reason in {
        'location_root': 'S3 Tables and the Iceberg catalogs choose table locations themselves',
        'clustered_by': 'Iceberg has no Hive bucketing; partition by `bucket(<n>, <column>)`',
        'buckets': 'Iceberg has no Hive bucketing; partition by `bucket(<n>, <column>)`',
        'options': 'Iceberg tables take `tblproperties`, not data source options',
        'indexes': 'Iceberg tables have no indexes; `partition_by` (with transforms) prunes files',
        'catalog_name': catalog_reason,
        'catalog': catalog_reason,
        'database': "dbt-spark's relations have no database part (dbt-spark built the model in the server's catalog, ignoring it)",
  }.items() if config.get(key) is not none -%}
    {{ s3tables_spark.config_error(key, 'not applicable: ' ~ reason, 'remove `' ~ key ~ '`') }}
  {%- endfor -%}
{%- endmacro %}

{#-- Why `text` might not stay one expression inside the statement's parentheses (none
     when it will), as the adapter's sql/text.py expression_problem: a parenthesis closed
     without opening or left open, a `;`, a comment, an unterminated quote. --#}
{% macro expression_problem(text) -%}
  {%- if not text | trim -%}{{ return('is empty') }}{%- endif -%}
  {%- set state = namespace(depth=0) -%}
  {%- for match in modules.re.compile('\'(?:[^\'\\\\]|\\\\.)*\'|"(?:[^"\\\\]|\\\\.)*"|`(?:[^`]|``)*`|[\'"`]|--|/\\*|;|[()]', modules.re.DOTALL).finditer(text) -%}
    {%- set token = match.group() -%}
    {%- if token == '(' -%}
      {%- set state.depth = state.depth + 1 -%}
    {%- elif token == ')' -%}
      {%- set state.depth = state.depth - 1 -%}
      {%- if state.depth < 0 -%}{{ return('closes a parenthesis it did not open') }}{%- endif -%}
    {%- elif token == ';' -%}
      {{ return('contains `;`') }}
    {%- elif token in ['--', '/*'] -%}
      {{ return('contains a comment') }}
    {%- elif token in ["'", '"', '`'] -%}
      {{ return('has an unterminated ' ~ token ~ ' quote') }}
    {%- endif -%}
  {%- endfor -%}
  {{ return('leaves a parenthesis open' if state.depth else none) }}
{%- endmacro %}

{#-- A column or a list of columns, as a list (none stays none). --#}
{% macro column_names(value) -%}
  {%- if value is none -%}{{ return(none) }}{%- endif -%}
  {{ return([value] if value is string else (value | list)) }}
{%- endmacro %}

{#-- The incremental keys, checked: the strategy (default merge with a key, append
     without), what each strategy needs, the on_schema_change mode. --#}
{% macro incremental_settings() -%}
  {%- set strategies = ['append', 'merge', 'delete+insert', 'insert_overwrite', 'scd2', 'microbatch'] -%}
  {%- set unique_key = s3tables_spark.column_names(config.get('unique_key')) or [] -%}
  {%- set strategy = config.get('incremental_strategy') or ('merge' if unique_key else 'append') -%}
  {%- if strategy not in strategies -%}
    {{ s3tables_spark.config_error('incremental_strategy', 'unknown strategy `' ~ strategy ~ '`', 'use one of: ' ~ strategies | join(', ')) }}
  {%- endif -%}
  {#-- A project's or package's `get_incremental_<name>_sql` overrides the strategy on
       dbt-core and on the adapter; this package runs its own statement, so it refuses the
       model rather than ignore the macro. --#}
  {%- set strategy_macro = context.get('get_incremental_' ~ (strategy | replace('+', '_')) ~ '_sql') -%}
  {%- set owner = strategy_macro.macro.package_name if strategy_macro is not none and strategy_macro.macro is defined else none -%}
  {%- if owner is not none and owner not in ['dbt', 'dbt_spark', 's3tables_spark'] -%}
    {{ s3tables_spark.config_error('incremental_strategy', 'the macro `get_incremental_' ~ (strategy | replace('+', '_')) ~ '_sql` of `' ~ owner ~ '` overrides strategy `' ~ strategy ~ '`, and this package runs its own statement for it (custom strategies run on the dbt-s3tables adapter)', 'remove the macro, or run the model on the adapter') }}
  {%- endif -%}
  {%- if strategy in ['merge', 'delete+insert', 'scd2'] and not unique_key -%}
    {{ s3tables_spark.config_error('unique_key', 'strategy `' ~ strategy ~ '` needs a unique_key', 'set `unique_key` to the column (or list of columns) identifying a row') }}
  {%- endif -%}
  {%- set partition_by = s3tables_spark.column_names(config.get('partition_by')) or [] -%}
  {%- if strategy == 'insert_overwrite' and not partition_by -%}
    {{ s3tables_spark.config_error('partition_by', 'strategy `insert_overwrite` replaces the partitions present in the new rows and needs `partition_by` (without it every run would wipe the whole table)', 'set `partition_by`, or use `append`, `merge` or `delete+insert`') }}
  {%- endif -%}
  {%- set update_columns = s3tables_spark.column_names(config.get('merge_update_columns')) -%}
  {%- set exclude_columns = s3tables_spark.column_names(config.get('merge_exclude_columns')) -%}
  {%- if update_columns is not none and exclude_columns is not none -%}
    {{ s3tables_spark.config_error('merge_update_columns', 'is set together with `merge_exclude_columns`', 'keep only one of the two') }}
  {%- endif -%}
  {%- if strategy == 'microbatch' and not config.get('event_time') -%}
    {{ s3tables_spark.config_error('event_time', "strategy `microbatch` needs the column holding each row's event time", 'set `event_time`, `begin` and `batch_size`') }}
  {%- endif -%}
  {%- set modes = ['ignore', 'fail', 'append_new_columns', 'sync_all_columns', 'full_refresh', 'recreate_empty', 'full_incremental_refresh'] -%}
  {%- set mode = config.get('on_schema_change') or 'ignore' -%}
  {%- if mode not in modes -%}
    {{ s3tables_spark.config_error('on_schema_change', 'unknown value `' ~ mode ~ '`', 'use one of: ' ~ modes | join(', ')) }}
  {%- endif -%}
  {%- if strategy == 'microbatch' and mode in ['full_refresh', 'full_incremental_refresh'] -%}
    {{ s3tables_spark.config_error('on_schema_change', '`' ~ mode ~ "` rebuilds the whole history, but a microbatch run only sees one batch's time window", 'use `recreate_empty` (the table restarts with this run\'s batches), or rebuild every batch with `dbt run --full-refresh`') }}
  {%- endif -%}
  {%- set write_mode = config.get('write_mode') or 'merge_on_read' -%}
  {%- if write_mode not in ['merge_on_read', 'copy_on_write'] -%}
    {{ s3tables_spark.config_error('write_mode', 'unknown value `' ~ write_mode ~ '`', 'use one of: merge_on_read, copy_on_write') }}
  {%- endif -%}
  {%- set use_merge = (config.get('use_merge') if config.get('use_merge') is not none else 'auto') | string | lower -%}
  {%- if use_merge not in ['auto', 'true', 'false'] -%}
    {{ s3tables_spark.config_error('use_merge', 'unknown value `' ~ config.get('use_merge') ~ '`', 'use one of: auto, true, false') }}
  {%- endif -%}
  {%- if use_merge == 'false' -%}
    {{ s3tables_spark.config_error('use_merge', 'the package always writes with MERGE INTO (the cluster must load Iceberg\'s SQL extensions)', 'remove it, or run the model with the dbt-s3tables adapter') }}
  {%- endif -%}
  {%- set uniqueness = config.get('unique_key_is_unique') -%}
  {%- if uniqueness is not none and uniqueness is not boolean -%}
    {%- if (uniqueness | string | lower) not in ['true', 'false'] -%}
      {{ s3tables_spark.config_error('unique_key_is_unique', 'unknown value `' ~ uniqueness ~ '`', "set true (every run's rows hold each key once: no dedup) or false (always dedup)") }}
    {%- endif -%}
    {%- set uniqueness = (uniqueness | string | lower) == 'true' -%}
  {%- endif -%}
  {%- set predicates = config.get('incremental_predicates') or config.get('predicates') or [] -%}
  {%- set predicates = [predicates] if predicates is string else predicates | map('string') | list -%}
  {%- for predicate in predicates -%}
    {%- set problem = s3tables_spark.expression_problem(predicate) -%}
    {%- if problem -%}
      {{ s3tables_spark.config_error('incremental_predicates', '`' ~ predicate ~ '` ' ~ problem ~ '; each predicate must be one boolean expression', 'write each condition as its own list item, with balanced parentheses') }}
    {%- endif -%}
  {%- endfor -%}
  {{ return({
    'strategy': strategy,
    'unique_key': unique_key,
    'partition_by': partition_by,
    'partitioning': s3tables_spark.partition_terms(partition_by),
    'update_columns': update_columns,
    'exclude_columns': exclude_columns,
    'watermark_column': config.get('watermark_column'),
    'check_columns': s3tables_spark.column_names(config.get('scd_check_cols')),
    'valid_from': config.get('scd_valid_from') or 'valid_from',
    'valid_to': config.get('scd_valid_to') or 'valid_to',
    'event_time': config.get('event_time'),
    'on_schema_change': mode,
    'write_mode': write_mode,
    'predicates': predicates,
    'unique_key_is_unique': uniqueness,
    'chunk_plan': s3tables_spark.chunk_plan() if mode == 'full_incremental_refresh' else none,
  }) }}
{%- endmacro %}
