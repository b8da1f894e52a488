{#-- The one statement of each incremental strategy, as the adapter builds it
     (dbt/adapters/s3tables/incremental/strategies.py): every run is one Iceberg commit.

     `w` (s3tables_spark.incremental_write) holds names only: `target`, `source_sql` (the
     model's SQL, whose rows the materialization has cached: Spark reads the cache for the
     same plan), `target_columns`, `source_columns`, `unique_key`,
     `predicates`, `update_columns`, `watermark_column`, `check_columns`, `valid_from`,
     `valid_to`, `event_time`, `window_start`, `window_end`. --#}

{% macro quote(name) -%}
  {{- return('`' ~ (name | replace('`', '``')) ~ '`') -}}
{%- endmacro %}

{% macro column_list(columns, alias=none) -%}
  {%- set prefix = (alias ~ '.') if alias else '' -%}
  {%- set quoted = [] -%}
  {%- for c in columns -%}{%- do quoted.append(prefix ~ s3tables_spark.quote(c)) -%}{%- endfor -%}
  {{- return(quoted | join(', ')) -}}
{%- endmacro %}

{#-- Null-safe equality of every column (NULL matches NULL). --#}
{% macro null_safe_equal(columns, left, right) -%}
  {%- set parts = [] -%}
  {%- for c in columns -%}
    {%- do parts.append(left ~ '.' ~ s3tables_spark.quote(c) ~ ' <=> ' ~ right ~ '.' ~ s3tables_spark.quote(c)) -%}
  {%- endfor -%}
  {{- return(parts | join(' AND ')) -}}
{%- endmacro %}

{#-- The column of `columns` named `name` (case-insensitively), or none. --#}
{% macro column_named(columns, name) -%}
  {%- for c in columns if c | lower == name | lower -%}
    {{- return(c) -}}
  {%- endfor -%}
  {{- return(none) -}}
{%- endmacro %}

{#-- The source column feeding `target_column`, or none. --#}
{% macro source_column(w, target_column) -%}
  {{- return(s3tables_spark.column_named(w.source_columns, target_column)) -}}
{%- endmacro %}

{#-- The target's spelling of a column the config names. --#}
{% macro target_column(w, name) -%}
  {{- return(s3tables_spark.column_named(w.target_columns, name) or name) -}}
{%- endmacro %}

{% macro key_columns(w) -%}
  {%- set found = [] -%}
  {%- for k in w.unique_key -%}{%- do found.append(s3tables_spark.target_column(w, k)) -%}{%- endfor -%}
  {{- return(found) -}}
{%- endmacro %}

{#-- The target columns a matched row takes from the model: `update_columns`, else every
     non-key column; of those, only the ones the model returns. --#}
{% macro columns_to_update(w) -%}
  {%- set key_names = w.unique_key | map('lower') | list -%}
  {%- set chosen = w.update_columns if w.update_columns is not none else w.target_columns -%}
  {%- set found = [] -%}
  {%- for c in chosen -%}
    {%- if (w.update_columns is not none or c | lower not in key_names)
          and s3tables_spark.source_column(w, c) is not none -%}
      {%- do found.append(c) -%}
    {%- endif -%}
  {%- endfor -%}
  {{- return(found) -}}
{%- endmacro %}

{#-- The model's rows with exactly the given target columns (default: all) in the target's
     order: a column the model lacks is NULL (never dropped from the table). --#}
{% macro aligned_select(w, columns=none) -%}
  {%- set expressions = [] -%}
  {%- for column in (columns if columns is not none else w.target_columns) -%}
    {%- set source = s3tables_spark.source_column(w, column) -%}
    {%- set value = s3tables_spark.quote(source) if source is not none else 'NULL' -%}
    {%- do expressions.append(value ~ ' AS ' ~ s3tables_spark.quote(column)) -%}
  {%- endfor -%}
  {#-- The model SQL sits on lines of its own: it may end in a `--` comment. --#}
  {{- return('SELECT ' ~ (expressions | join(', ')) ~ ' FROM (\n' ~ w.source_sql ~ '\n) AS DBT_INTERNAL_SOURCE_raw') -}}
{%- endmacro %}

{#-- One source row per unique key: the greatest watermark, else an arbitrary one. --#}
{% macro deduplicated_select(w, columns=none) -%}
  {%- set keys = s3tables_spark.key_columns(w) -%}
  {%- set order = s3tables_spark.quote(s3tables_spark.target_column(w, w.watermark_column or keys[0])) -%}
  {%- set direction = ' DESC NULLS LAST' if w.watermark_column else '' -%}
  {%- set selected = columns if columns is not none else w.target_columns -%}
  {{- return(
      'SELECT ' ~ s3tables_spark.column_list(selected) ~ ' FROM (\nSELECT *, ROW_NUMBER() OVER (PARTITION BY '
      ~ s3tables_spark.column_list(keys) ~ ' ORDER BY ' ~ order ~ direction ~ ') AS dbt_internal_row_number\nFROM ('
      ~ s3tables_spark.aligned_select(w, columns) ~ ') AS DBT_INTERNAL_SOURCE_aligned\n) AS DBT_INTERNAL_SOURCE_ranked WHERE dbt_internal_row_number = 1'
  ) -}}
{%- endmacro %}

{#-- The model's rows, one per key: as they are when `unique_key_is_unique` declares it
     (a broken promise fails the MERGE's cardinality check, as on the adapter). --#}
{% macro unique_select(w) -%}
  {{- return(s3tables_spark.aligned_select(w) if w.source_unique else s3tables_spark.deduplicated_select(w)) -}}
{%- endmacro %}

{#-- `expression` with each bare reference to one of `columns` prefixed by `alias.` (the
     adapter's sql/text.py qualify_columns): names already qualified or followed by `(`,
     type names after `AS`, lambda parameters and names inside a subquery stay. --#}
{% macro qualify_columns(expression, columns, alias) -%}
  {%- set wanted = columns | map('lower') | list -%}
  {%- set tokens = modules.re.compile('\'(?:[^\'\\\\]|\\\\.)*\'|"(?:[^"\\\\]|\\\\.)*"|`(?:[^`]|``)*`|\\d[\\w.]*|[A-Za-z_]\\w*|->|\\S', modules.re.DOTALL).finditer(expression) | list -%}
  {%- set state = namespace(parts=[], position=0, groups=[(false, [])]) -%}
  {%- for match in tokens -%}
    {%- set token = match.group() -%}
    {%- set next_token = tokens[loop.index0 + 1].group() | upper if loop.index0 + 1 < tokens | length else '' -%}
    {%- set previous_token = tokens[loop.index0 - 1].group() | upper if loop.index0 > 0 else '' -%}
    {%- if token == '(' -%}
      {%- do state.groups.append((next_token in ['SELECT', 'WITH'], [])) -%}
    {%- elif token == ')' -%}
      {%- if state.groups | length > 1 -%}{%- do state.groups.pop() -%}{%- endif -%}
    {%- else -%}
      {%- set is_name = token.startswith('`') or token[0].isalpha() or token[0] == '_' -%}
      {%- set name = token[1:-1].replace('``', '`') if token.startswith('`') else token -%}
      {%- if is_name and name | lower in wanted -%}
        {%- if next_token == '->' -%}
          {%- do state.groups[-1][1].append(name | lower) -%}
        {%- else -%}
          {%- set inside = namespace(subquery=false, parameter=false) -%}
          {%- for subquery, parameters in state.groups -%}
            {%- if subquery -%}{%- set inside.subquery = true -%}{%- endif -%}
            {%- if name | lower in parameters -%}{%- set inside.parameter = true -%}{%- endif -%}
          {%- endfor -%}
          {%- if not inside.subquery and not inside.parameter and previous_token not in ['.', 'AS'] and next_token != '(' -%}
            {%- do state.parts.append(expression[state.position:match.start()]) -%}
            {%- do state.parts.append(alias ~ '.' ~ s3tables_spark.quote(name)) -%}
            {%- set state.position = match.end() -%}
          {%- endif -%}
        {%- endif -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- do state.parts.append(expression[state.position:]) -%}
  {{- return(state.parts | join('')) -}}
{%- endmacro %}

{#-- `condition` and every incremental predicate; a predicate's bare column names are the
     target's (as in a `DELETE ... WHERE` on the target, where predicates written for other
     adapters' delete+insert run): both sides have them here. --#}
{% macro on_clause(w, condition) -%}
  {%- set parts = ['(' ~ condition ~ ')'] -%}
  {%- for p in w.predicates -%}
    {%- do parts.append('(' ~ s3tables_spark.qualify_columns(p, w.target_columns, 'DBT_INTERNAL_DEST') ~ ')') -%}
  {%- endfor -%}
  {{- return(parts | join(' AND ')) -}}
{%- endmacro %}

{% macro insert_values(columns) -%}
  {{- return('INSERT (' ~ s3tables_spark.column_list(columns) ~ ') VALUES (' ~ s3tables_spark.column_list(columns, 'DBT_INTERNAL_SOURCE') ~ ')') -}}
{%- endmacro %}

{% macro append_sql(w) -%}
  {{- return('INSERT INTO ' ~ w.target ~ ' (' ~ s3tables_spark.column_list(w.target_columns) ~ ')\n' ~ s3tables_spark.aligned_select(w)) -}}
{%- endmacro %}

{#-- Replaces the partitions present in the new rows; the materialization sets dynamic
     partition overwrite for this statement only. --#}
{% macro insert_overwrite_sql(w) -%}
  {{- return('INSERT OVERWRITE ' ~ w.target ~ ' (' ~ s3tables_spark.column_list(w.target_columns) ~ ')\n' ~ s3tables_spark.aligned_select(w)) -}}
{%- endmacro %}

{#-- Update matched rows, insert new ones; the source is first made unique per key. --#}
{% macro merge_sql(w) -%}
  {%- set keys = s3tables_spark.key_columns(w) -%}
  {%- set updates = [] -%}
  {%- for c in s3tables_spark.columns_to_update(w) -%}
    {%- do updates.append('DBT_INTERNAL_DEST.' ~ s3tables_spark.quote(c) ~ ' = DBT_INTERNAL_SOURCE.' ~ s3tables_spark.quote(c)) -%}
  {%- endfor -%}
  {%- set update_clause = ('WHEN MATCHED THEN UPDATE SET ' ~ (updates | join(', ')) ~ '\n') if updates else '' -%}
  {{- return(
      'MERGE INTO ' ~ w.target ~ ' AS DBT_INTERNAL_DEST\n'
      ~ 'USING (' ~ s3tables_spark.unique_select(w) ~ ') AS DBT_INTERNAL_SOURCE\n'
      ~ 'ON ' ~ s3tables_spark.on_clause(w, s3tables_spark.null_safe_equal(keys, 'DBT_INTERNAL_DEST', 'DBT_INTERNAL_SOURCE')) ~ '\n'
      ~ update_clause
      ~ 'WHEN NOT MATCHED THEN ' ~ s3tables_spark.insert_values(w.target_columns)
  ) -}}
{%- endmacro %}

{#-- One MERGE that deletes and inserts: its source is `delete_rows` (tagged 'delete',
     matched to target rows by `condition`) plus every model row (tagged 'insert', never
     matched, so always inserted). A failure leaves both halves undone. --#}
{% macro delete_and_insert_merge(w, delete_rows, condition) -%}
  {%- set insert_rows = 'SELECT ' ~ s3tables_spark.column_list(w.target_columns)
        ~ ", 'insert' AS dbt_internal_action FROM (" ~ s3tables_spark.aligned_select(w) ~ ') AS DBT_INTERNAL_SOURCE_rows' -%}
  {%- set on = s3tables_spark.on_clause(w, "DBT_INTERNAL_SOURCE.dbt_internal_action = 'delete' AND " ~ condition) -%}
  {{- return(
      'MERGE INTO ' ~ w.target ~ ' AS DBT_INTERNAL_DEST\n'
      ~ 'USING (' ~ delete_rows ~ '\nUNION ALL\n' ~ insert_rows ~ ') AS DBT_INTERNAL_SOURCE\n'
      ~ 'ON ' ~ on ~ '\n'
      ~ 'WHEN MATCHED THEN DELETE\n'
      ~ "WHEN NOT MATCHED AND DBT_INTERNAL_SOURCE.dbt_internal_action = 'insert' THEN "
      ~ s3tables_spark.insert_values(w.target_columns)
  ) -}}
{%- endmacro %}

{#-- Delete target rows whose key is in the source, insert every source row (no dedup):
     each distinct key is one 'delete' row. --#}
{% macro delete_insert_sql(w) -%}
  {%- set keys = s3tables_spark.key_columns(w) -%}
  {%- set values = [] -%}
  {%- for c in w.target_columns -%}
    {%- do values.append(s3tables_spark.quote(c) if c in keys else 'NULL AS ' ~ s3tables_spark.quote(c)) -%}
  {%- endfor -%}
  {%- set delete_rows = 'SELECT ' ~ ('' if w.source_unique else 'DISTINCT ') ~ (values | join(', ')) ~ ", 'delete' AS dbt_internal_action FROM ("
        ~ s3tables_spark.aligned_select(w, keys) ~ ') AS DBT_INTERNAL_SOURCE_keys' -%}
  {{- return(s3tables_spark.delete_and_insert_merge(w, delete_rows, s3tables_spark.null_safe_equal(keys, 'DBT_INTERNAL_DEST', 'DBT_INTERNAL_SOURCE'))) -}}
{%- endmacro %}

{#-- Replace exactly the batch's time window [start, end). --#}
{% macro microbatch_sql(w) -%}
  {%- set event_time = 'DBT_INTERNAL_DEST.' ~ s3tables_spark.quote(s3tables_spark.target_column(w, w.event_time)) -%}
  {%- set window = event_time ~ " >= TIMESTAMP '" ~ w.window_start ~ "' AND " ~ event_time ~ " < TIMESTAMP '" ~ w.window_end ~ "'" -%}
  {%- set nulls = [] -%}
  {%- for c in w.target_columns -%}{%- do nulls.append('NULL AS ' ~ s3tables_spark.quote(c)) -%}{%- endfor -%}
  {{- return(s3tables_spark.delete_and_insert_merge(w, 'SELECT ' ~ (nulls | join(', ')) ~ ", 'delete' AS dbt_internal_action", window)) -}}
{%- endmacro %}

{#-- History in one MERGE (see the adapter's scd2_sql): a key whose incoming row differs in
     a tracked column has its open row closed and gets a new open row. --#}
{% macro scd2_sql(w) -%}
  {%- set keys = s3tables_spark.key_columns(w) -%}
  {%- set valid_from = s3tables_spark.target_column(w, w.valid_from) -%}
  {%- set valid_to = s3tables_spark.target_column(w, w.valid_to) -%}
  {%- set history = [valid_from | lower, valid_to | lower] -%}
  {%- set data_columns = [] -%}
  {%- for c in w.target_columns if c | lower not in history -%}{%- do data_columns.append(c) -%}{%- endfor -%}
  {%- set key_names = keys | map('lower') | list -%}
  {%- set tracked = [] -%}
  {%- if w.check_columns -%}
    {%- for c in w.check_columns -%}{%- do tracked.append(s3tables_spark.target_column(w, c)) -%}{%- endfor -%}
  {%- else -%}
    {%- for c in data_columns if c | lower not in key_names and s3tables_spark.source_column(w, c) is not none -%}
      {%- do tracked.append(c) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- set differences = [] -%}
  {%- for c in tracked -%}
    {%- do differences.append('NOT (DBT_INTERNAL_DEST.' ~ s3tables_spark.quote(c) ~ ' <=> DBT_INTERNAL_SOURCE.' ~ s3tables_spark.quote(c) ~ ')') -%}
  {%- endfor -%}
  {%- set changed = (differences | join(' OR ')) or 'false' -%}
  {%- set rows = '(' ~ (s3tables_spark.aligned_select(w, data_columns) if w.source_unique else s3tables_spark.deduplicated_select(w, data_columns)) ~ ')' -%}
  {%- set open_row = 'DBT_INTERNAL_DEST.' ~ s3tables_spark.quote(valid_to) ~ ' IS NULL' -%}
  {%- set match = s3tables_spark.null_safe_equal(keys, 'DBT_INTERNAL_DEST', 'DBT_INTERNAL_SOURCE') -%}
  {%- set new_values = [] -%}
  {%- for c in data_columns -%}{%- do new_values.append('DBT_INTERNAL_SOURCE.' ~ s3tables_spark.quote(c)) -%}{%- endfor -%}
  {%- do new_values.extend(['current_timestamp()', 'NULL']) -%}
  {%- set tagged = "SELECT *, 'match' AS dbt_internal_action FROM " ~ rows ~ ' AS DBT_INTERNAL_SOURCE_rows' -%}
  {%- set new_versions = "SELECT DBT_INTERNAL_SOURCE.*, 'insert' AS dbt_internal_action FROM " ~ rows ~ ' AS DBT_INTERNAL_SOURCE\n'
        ~ 'JOIN ' ~ w.target ~ ' AS DBT_INTERNAL_DEST ON ' ~ match ~ ' AND ' ~ open_row ~ '\nWHERE ' ~ changed -%}
  {%- set on = s3tables_spark.on_clause(w, "DBT_INTERNAL_SOURCE.dbt_internal_action = 'match' AND " ~ match ~ ' AND ' ~ open_row) -%}
  {{- return(
      'MERGE INTO ' ~ w.target ~ ' AS DBT_INTERNAL_DEST\n'
      ~ 'USING (' ~ tagged ~ '\nUNION ALL\n' ~ new_versions ~ ') AS DBT_INTERNAL_SOURCE\n'
      ~ 'ON ' ~ on ~ '\n'
      ~ 'WHEN MATCHED AND (' ~ changed ~ ') THEN UPDATE SET DBT_INTERNAL_DEST.' ~ s3tables_spark.quote(valid_to) ~ ' = current_timestamp()\n'
      ~ 'WHEN NOT MATCHED THEN INSERT (' ~ s3tables_spark.column_list(data_columns + [valid_from, valid_to]) ~ ') VALUES (' ~ (new_values | join(', ')) ~ ')'
  ) -}}
{%- endmacro %}

{#-- The statement of `strategy`, by name. --#}
{% macro strategy_sql(strategy, w) -%}
  {%- set builders = {
        'append': s3tables_spark.append_sql,
        'merge': s3tables_spark.merge_sql,
        'delete+insert': s3tables_spark.delete_insert_sql,
        'insert_overwrite': s3tables_spark.insert_overwrite_sql,
        'microbatch': s3tables_spark.microbatch_sql,
        'scd2': s3tables_spark.scd2_sql,
  } -%}
  {{- return(builders[strategy](w)) -}}
{%- endmacro %}
