{#-- `partition_by` as the adapter reads it (dbt/adapters/s3tables/incremental/
     partition_evolution.py): each entry a column or an Iceberg transform, checked before
     anything is written, in one spelling (`ts`, `day(ts)`, `bucket(4, id)`,
     `truncate(8, s)`) whatever alias the model wrote (`days`, `date`, `identity(c)`,
     `truncate(s, 8)`), so a table's partitioning compares with the model's. --#}

{% macro partition_transform_names() -%}
  {{ return({'identity': 'identity', 'year': 'year', 'years': 'year', 'month': 'month', 'months': 'month',
             'day': 'day', 'days': 'day', 'date': 'day', 'hour': 'hour', 'hours': 'hour'}) }}
{%- endmacro %}

{% macro unquoted_name(name) -%}
  {%- set name = name | trim -%}
  {{ return(name[1:-1] | replace('``', '`') if name | length >= 2 and name.startswith('`') and name.endswith('`') else name) }}
{%- endmacro %}

{#-- `text` split at its commas outside parentheses and quoted names. --#}
{% macro split_partition_entry(text) -%}
  {%- set state = namespace(depth=0, quoted=false, current='', parts=[]) -%}
  {%- for ch in text -%}
    {%- if ch == '`' -%}{%- set state.quoted = not state.quoted -%}
    {%- elif not state.quoted and ch in '()' -%}{%- set state.depth = state.depth + (1 if ch == '(' else -1) -%}
    {%- endif -%}
    {%- if ch == ',' and not state.quoted and state.depth == 0 -%}
      {%- do state.parts.append(state.current) -%}
      {%- set state.current = '' -%}
    {%- else -%}
      {%- set state.current = state.current ~ ch -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(state.parts + [state.current]) }}
{%- endmacro %}

{#-- One entry as (source column, transform, size or none), or none when it is neither a
     column nor a transform. --#}
{% macro partition_term(entry) -%}
  {%- set call = modules.re.match('^\\s*([A-Za-z_]+)\\s*\\((.*)\\)\\s*$', entry, modules.re.DOTALL) -%}
  {%- if call is none -%}
    {%- set source = s3tables_spark.unquoted_name(entry) -%}
    {%- if source and ((entry | trim).startswith('`') or not modules.re.search('[(),]', source)) -%}
      {{ return((source, 'identity', none)) }}
    {%- endif -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set name = call.group(1) | lower -%}
  {%- set arguments = [] -%}
  {%- for a in s3tables_spark.split_partition_entry(call.group(2)) -%}{%- do arguments.append(a | trim) -%}{%- endfor -%}
  {%- set transforms = s3tables_spark.partition_transform_names() -%}
  {%- if name in transforms and arguments | length == 1 and arguments[0] -%}
    {{ return((s3tables_spark.unquoted_name(arguments[0]), transforms[name], none)) }}
  {%- endif -%}
  {%- if name in ['bucket', 'truncate'] and arguments | length == 2 -%}
    {%- set sizes = [] -%}{%- set columns = [] -%}
    {%- for a in arguments -%}{%- do (sizes if a.isdigit() else columns).append(a) -%}{%- endfor -%}
    {%- if sizes | length == 1 and columns | length == 1 and sizes[0] | int > 0 -%}
      {{ return((s3tables_spark.unquoted_name(columns[0]), name, sizes[0] | int)) }}
    {%- endif -%}
  {%- endif -%}
  {{ return(none) }}
{%- endmacro %}

{% macro partition_term_text(term) -%}
  {%- set source, transform, size = term -%}
  {%- if transform == 'identity' -%}{{ return(source) }}{%- endif -%}
  {{ return(transform ~ '(' ~ ((size ~ ', ') if size is not none else '') ~ source ~ ')') }}
{%- endmacro %}

{#-- The model's partition fields, each as partition_term_text spells it; an entry that is
     neither a column nor a transform, or two time transforms of one column, refused as
     the adapter refuses them. --#}
{% macro partition_terms(entries) -%}
  {%- set terms = [] -%}
  {%- set time_terms = {} -%}
  {%- for entry in entries -%}
    {%- for part in s3tables_spark.split_partition_entry(entry) -%}
      {%- set term = s3tables_spark.partition_term(part | trim) -%}
      {%- if term is none -%}
        {{ s3tables_spark.config_error('partition_by', '`' ~ (part | trim) ~ "` is not a column or an Iceberg partition transform this adapter can evolve the table's partitioning to", 'write each entry as a column, or identity(c), years(c), months(c), days(c), hours(c), bucket(N, c), truncate(W, c), e.g. `days(ts)` or `bucket(16, id)`') }}
      {%- endif -%}
      {%- if term[1] in ['year', 'month', 'day', 'hour'] -%}
        {%- set other = time_terms.get(term[0] | lower) -%}
        {%- if other is none -%}
          {%- do time_terms.update({term[0] | lower: (term, part | trim)}) -%}
        {%- elif other[0][1] != term[1] -%}
          {{ s3tables_spark.config_error('partition_by', '`' ~ other[1] ~ '` and `' ~ (part | trim) ~ '` both partition column `' ~ term[0] ~ '` by time; Iceberg allows one time transform per column', 'keep one of them') }}
        {%- endif -%}
      {%- endif -%}
      {%- do terms.append(s3tables_spark.partition_term_text(term)) -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(terms) }}
{%- endmacro %}

{#-- A table's partition fields as `DESCRIBE TABLE` lists them (under `# Partition
     Information` after its `# col_name` header when every field is a column, else under
     `# Partitioning` as `Part 0`: `days(ts)`), spelled as partition_terms spells them. --#}
{% macro table_partitioning(relation) -%}
  {%- set state = namespace(section=none, fields=[]) -%}
  {%- for row in run_query('DESCRIBE TABLE ' ~ relation) -%}
    {%- set name = (row[0] or '') | trim -%}
    {%- if name in ['# Partition Information', '# Partitioning'] -%}
      {%- set state.section = name -%}
    {%- elif name == '' or (name.startswith('#') and name != '# col_name') -%}
      {%- set state.section = none -%}
    {%- elif state.section == '# Partition Information' and name != '# col_name' -%}
      {%- do state.fields.append(name) -%}
    {%- elif state.section == '# Partitioning' and name.startswith('Part ') -%}
      {%- do state.fields.append(row[1]) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(s3tables_spark.partition_terms(state.fields)) }}
{%- endmacro %}

{#-- The package cannot evolve a table's partition spec (the adapter does): a changed
     `partition_by` is refused, never ignored. Fields compare as the adapter compares them:
     by column (case-insensitively) and transform, in any order. --#}
{% macro same_partitioning(a, b) -%}
  {{ return(a | map('lower') | sort | list == b | map('lower') | sort | list) }}
{%- endmacro %}

{% macro check_partitioning(existing, wanted) -%}
  {%- set current = s3tables_spark.table_partitioning(existing) -%}
  {%- if not s3tables_spark.same_partitioning(current, wanted) -%}
    {{ s3tables_spark.config_error('partition_by', 'the table is partitioned by [' ~ current | join(', ') ~ '] and the model says [' ~ wanted | join(', ') ~ ']; this package cannot evolve a table\'s partitioning (the adapter does, in place)', 'rebuild the table with `dbt run -s ' ~ model.name ~ ' --full-refresh` (its history is kept), or run the model with the dbt-s3tables adapter') }}
  {%- endif -%}
{%- endmacro %}
