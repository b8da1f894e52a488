{#-- on_schema_change as the adapter does it (dbt/adapters/s3tables/incremental/
     schema_evolution.py): compare the model's columns with the table's, names
     case-insensitively and struct fields recursively; never drop a column; widen types in
     place; one sentence naming every difference when the mode refuses them. --#}

{#-- A Spark type as Iceberg keeps it, as the adapter's spark_type_name(iceberg_type(...))
     prints it (dbt/adapters/s3tables/sql/types.py), at every depth: tinyint and smallint
     are int, long is bigint, real is float, varchar and char are string, timestamp_ltz is
     timestamp, decimal without a scale gets Spark's default; array, map and struct types
     hold their element, key, value and field types so normalised; no spaces (but in
     quoted field names), struct field names unquoted. --#}
{% macro stored_type(data_type) -%}
  {%- set t = modules.re.sub('\\s+(?=(?:[^`]*`[^`]*`)*[^`]*$)', '', data_type | trim) -%}
  {%- set lowered = t | lower -%}
  {%- if lowered.startswith('array<') and lowered.endswith('>') -%}
    {{ return('array<' ~ s3tables_spark.stored_type(t[6:-1]) ~ '>') }}
  {%- endif -%}
  {%- if lowered.startswith('map<') and lowered.endswith('>') -%}
    {%- set parts = s3tables_spark.top_level_parts(t[4:-1]) -%}
    {{ return('map<' ~ s3tables_spark.stored_type(parts[0]) ~ ',' ~ s3tables_spark.stored_type(parts[1:] | join(',')) ~ '>') }}
  {%- endif -%}
  {%- if lowered.startswith('struct<') and lowered.endswith('>') -%}
    {%- set fields = [] -%}
    {%- for name, kind in s3tables_spark.struct_fields(t) -%}
      {%- do fields.append(name ~ ':' ~ s3tables_spark.stored_type(kind)) -%}
    {%- endfor -%}
    {{ return('struct<' ~ fields | join(',') ~ '>') }}
  {%- endif -%}
  {%- set decimal = modules.re.fullmatch('(?:decimal|dec|numeric)(?:\\((\\d+)(?:,(\\d+))?\\))?', lowered) -%}
  {%- if decimal is not none -%}
    {{ return('decimal(' ~ (decimal.group(1) or '10') | int ~ ',' ~ (decimal.group(2) or '0') | int ~ ')') }}
  {%- endif -%}
  {%- set aliases = {'tinyint': 'int', 'smallint': 'int', 'byte': 'int', 'short': 'int', 'integer': 'int',
        'long': 'bigint', 'real': 'float', 'timestamp_ltz': 'timestamp'} -%}
  {%- if lowered in aliases -%}{{ return(aliases[lowered]) }}{%- endif -%}
  {%- if modules.re.fullmatch('(?:var)?char\\(\\d+\\)', lowered) -%}{{ return('string') }}{%- endif -%}
  {{ return(lowered) }}
{%- endmacro %}

{#-- `text` split at its commas outside <...>, (...) and quoted names. --#}
{% macro top_level_parts(text) -%}
  {%- set state = namespace(depth=0, start=0, quoted=false, parts=[]) -%}
  {%- for i in range(text | length) -%}
    {%- set ch = text[i] -%}
    {%- if ch == '`' -%}{%- set state.quoted = not state.quoted -%}
    {%- elif state.quoted -%}
    {%- elif ch in '<(' -%}{%- set state.depth = state.depth + 1 -%}
    {%- elif ch in '>)' -%}{%- set state.depth = state.depth - 1 -%}
    {%- elif ch == ',' and state.depth == 0 -%}
      {%- do state.parts.append(text[state.start:i]) -%}
      {%- set state.start = i + 1 -%}
    {%- endif -%}
  {%- endfor -%}
  {%- do state.parts.append(text[state.start:]) -%}
  {{ return(state.parts) }}
{%- endmacro %}

{#-- The fields of a `struct<a:int,b:decimal(10,2)>` type: [(name, type)], names unquoted. --#}
{% macro struct_fields(data_type) -%}
  {%- set found = [] -%}
  {%- for part in s3tables_spark.top_level_parts(data_type[7:-1]) if part -%}
    {%- set name = modules.re.match('(`(?:[^`]|``)*`|[^:]*):?(.*)', part, modules.re.DOTALL) -%}
    {%- set quoted = name.group(1) -%}
    {%- do found.append((quoted[1:-1] | replace('``', '`') if quoted.startswith('`') else quoted, name.group(2))) -%}
  {%- endfor -%}
  {{ return(found) }}
{%- endmacro %}

{% macro is_widening(old, new) -%}
  {%- if (old, new) in [('int', 'bigint'), ('float', 'double')] -%}{{ return(true) }}{%- endif -%}
  {%- set pattern = 'decimal\\((\\d+),(\\d+)\\)' -%}
  {%- set a = modules.re.fullmatch(pattern, old) -%}
  {%- set b = modules.re.fullmatch(pattern, new) -%}
  {{ return(a is not none and b is not none and a.group(2) == b.group(2) and (b.group(1) | int) > (a.group(1) | int)) }}
{%- endmacro %}

{#-- Differences between `table_fields` and `model_fields` ([(name, type)]) under `prefix`,
     added to `diff` ({added: [(path, type)], removed: [name], changed: [(path, old, new)]}). --#}
{% macro diff_fields(table_fields, model_fields, prefix, diff) -%}
  {%- set by_name = {} -%}
  {%- for name, kind in table_fields -%}{%- do by_name.update({name | lower: (name, s3tables_spark.stored_type(kind))}) -%}{%- endfor -%}
  {%- set seen = [] -%}
  {%- for name, kind in model_fields -%}
    {%- set new = s3tables_spark.stored_type(kind) -%}
    {%- set existing = by_name.get(name | lower) -%}
    {%- if existing is none -%}
      {%- do diff.added.append((prefix + [name], new)) -%}
    {%- else -%}
      {%- do seen.append(name | lower) -%}
      {%- set old = existing[1] -%}
      {%- set path = prefix + [existing[0]] -%}
      {%- if old.startswith('struct<') and new.startswith('struct<') -%}
        {%- do s3tables_spark.diff_fields(s3tables_spark.struct_fields(old), s3tables_spark.struct_fields(new), path, diff) -%}
      {%- elif old != new -%}
        {%- do diff.changed.append((path, old, new)) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if not prefix -%}
    {%- for name, kind in table_fields if name | lower not in seen -%}{%- do diff.removed.append(name) -%}{%- endfor -%}
  {%- endif -%}
{%- endmacro %}

{#-- The table's columns against the model's: `table_only` names columns the table has by
     design (scd2's validity columns). --#}
{% macro schema_diff(table_columns, model_columns, table_only=[]) -%}
  {%- set diff = {'added': [], 'removed': [], 'changed': []} -%}
  {%- set table_fields = [] -%}{%- set model_fields = [] -%}
  {%- for c in table_columns -%}{%- do table_fields.append((c.name, c.data_type)) -%}{%- endfor -%}
  {%- for c in model_columns -%}{%- do model_fields.append((c.name, c.data_type)) -%}{%- endfor -%}
  {%- do s3tables_spark.diff_fields(table_fields, model_fields, [], diff) -%}
  {%- set skip = table_only | map('lower') | list -%}
  {%- set kept = [] -%}
  {%- for name in diff.removed if name | lower not in skip -%}{%- do kept.append(name) -%}{%- endfor -%}
  {%- do diff.update({'removed': kept}) -%}
  {{ return(diff) }}
{%- endmacro %}

{% macro describe_change(change) -%}
  {%- set kind = 'widening' if s3tables_spark.is_widening(change[1], change[2]) else 'type change' -%}
  {{ return(kind ~ ' of `' ~ change[0] | join('.') ~ '` from ' ~ change[1] ~ ' to ' ~ change[2]) }}
{%- endmacro %}

{% macro describe_diff(diff) -%}
  {%- set lines = [] -%}
  {%- for path, kind in diff.added -%}{%- do lines.append('new column `' ~ path | join('.') ~ '` ' ~ kind) -%}{%- endfor -%}
  {%- for name in diff.removed -%}{%- do lines.append('column `' ~ name ~ '` is no longer returned by the model') -%}{%- endfor -%}
  {%- for change in diff.changed -%}{%- do lines.append(s3tables_spark.describe_change(change)) -%}{%- endfor -%}
  {{ return(lines) }}
{%- endmacro %}

{#-- The changes to commit for `mode` (nothing is ever dropped), or an error naming every
     difference when the mode refuses them. --#}
{% macro plan_evolution(mode, diff) -%}
  {%- set none_ = {'added': [], 'removed': [], 'changed': []} -%}
  {%- if mode == 'ignore' or not (diff.added or diff.removed or diff.changed) -%}{{ return(none_) }}{%- endif -%}
  {%- if mode == 'fail' -%}
    {{ s3tables_spark.config_error('on_schema_change', "is `fail` and the model's columns differ from the table: " ~ s3tables_spark.describe_diff(diff) | join('; '), 'align the model, or choose append_new_columns or sync_all_columns') }}
  {%- endif -%}
  {%- if mode == 'append_new_columns' -%}{{ return({'added': diff.added, 'removed': [], 'changed': []}) }}{%- endif -%}
  {%- set narrowing = [] -%}
  {%- for change in diff.changed if not s3tables_spark.is_widening(change[1], change[2]) -%}
    {%- do narrowing.append(s3tables_spark.describe_change(change)) -%}
  {%- endfor -%}
  {%- if narrowing -%}
    {{ s3tables_spark.config_error('on_schema_change', 'sync_all_columns only widens types in place (int to bigint, float to double, decimal precision up at the same scale); refused: ' ~ narrowing | join('; '), 'cast the column in the model to its current type, or rebuild with --full-refresh') }}
  {%- endif -%}
  {{ return({'added': diff.added, 'removed': [], 'changed': diff.changed}) }}
{%- endmacro %}

{#-- Commit `evolution` on `relation`: new columns and struct fields, widened types. --#}
{% macro apply_evolution(relation, evolution) -%}
  {%- for path, kind in evolution.added -%}
    {%- set quoted = [] -%}{%- for part in path -%}{%- do quoted.append(s3tables_spark.quote(part)) -%}{%- endfor -%}
    {% call statement('s3tables_add_column') -%}
      ALTER TABLE {{ relation }} ADD COLUMNS ({{ quoted | join('.') }} {{ kind }})
    {%- endcall %}
  {%- endfor -%}
  {%- for path, old, new in evolution.changed -%}
    {%- set quoted = [] -%}{%- for part in path -%}{%- do quoted.append(s3tables_spark.quote(part)) -%}{%- endfor -%}
    {% call statement('s3tables_widen_column') -%}
      ALTER TABLE {{ relation }} ALTER COLUMN {{ quoted | join('.') }} TYPE {{ new }}
    {%- endcall %}
  {%- endfor -%}
{%- endmacro %}
