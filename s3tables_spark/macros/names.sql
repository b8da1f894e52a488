{#-- Amazon S3 Tables' naming rules (dbt/adapters/s3tables/catalogs/s3tables/rules.py),
     checked before anything is written; var `s3tables_rules: false` turns them off for a
     catalog that is not S3 Tables. --#}

{% macro name_rule() -%}
  {{ return('S3 Tables names are 1 to 255 lowercase letters, digits and underscores, beginning and ending with a letter or digit') }}
{%- endmacro %}

{#-- The closest name the rules accept (after `prefix`). --#}
{% macro suggested_name(name, prefix='') -%}
  {%- set cleaned = modules.re.sub('[^a-z0-9_]', '_', name | trim | lower) -%}
  {%- set cleaned = ((prefix ~ (cleaned | trim('_')))[:255]).rstrip('_') -%}
  {{ return(cleaned or 't') }}
{%- endmacro %}

{#-- Why `name` breaks the rules for a `kind` (namespace, table, column), or none. --#}
{% macro name_problem(name, kind) -%}
  {%- if not name -%}{{ return('the ' ~ kind ~ ' name is empty') }}{%- endif -%}
  {%- if name | length > 255 -%}
    {{ return(kind ~ ' name `' ~ name[:40] ~ '...` is ' ~ (name | length) ~ ' characters long') }}
  {%- endif -%}
  {%- if not modules.re.fullmatch('[a-z0-9](?:[a-z0-9_]*[a-z0-9])?', name) -%}
    {{ return(kind ~ ' name `' ~ name ~ '` breaks the S3 Tables rules (' ~ s3tables_spark.name_rule() ~ ')') }}
  {%- endif -%}
  {%- if kind == 'namespace' and name.startswith('aws') -%}
    {{ return('namespace `' ~ name ~ '` starts with `aws`, which S3 Tables reserves') }}
  {%- endif -%}
  {{ return(none) }}
{%- endmacro %}

{#-- Raise, naming the model, the offending name and a valid spelling: the namespace
     (`schema`), the table (`alias`), and the model's `columns`. --#}
{% macro check_names(relation, columns=[]) -%}
  {%- if not var('s3tables_rules', true) -%}{{ return(none) }}{%- endif -%}
  {%- for name, kind, key in [(relation.schema, 'namespace', 'schema'), (relation.identifier, 'table', 'alias')] -%}
    {%- set problem = s3tables_spark.name_problem(name, kind) -%}
    {%- if problem -%}
      {%- set suggestion = s3tables_spark.suggested_name(name) -%}
      {%- if kind == 'namespace' and suggestion.startswith('aws') -%}
        {%- set suggestion = s3tables_spark.suggested_name(name, prefix='dbt_') -%}
      {%- endif -%}
      {{ exceptions.raise_compiler_error('Model `' ~ model.name ~ '`: ' ~ problem ~ '. Fix: set `' ~ key ~ '` to `' ~ suggestion ~ '`, for example') }}
    {%- endif -%}
  {%- endfor -%}
  {%- set bad = [] -%}
  {%- for c in columns if s3tables_spark.name_problem(c, 'column') -%}{%- do bad.append(c) -%}{%- endfor -%}
  {%- if bad -%}
    {%- set quoted = [] -%}{%- set renames = [] -%}
    {%- for c in bad -%}
      {%- do quoted.append('`' ~ c ~ '`') -%}
      {%- do renames.append('`' ~ c ~ '` as `' ~ s3tables_spark.suggested_name(c) ~ '`') -%}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error('Model `' ~ model.name ~ '`: column name(s) ' ~ quoted | join(', ') ~ ' break the S3 Tables rules (' ~ s3tables_spark.name_rule() ~ '). Fix: alias them in the model\'s select: ' ~ renames | join(', ')) }}
  {%- endif -%}
{%- endmacro %}

{#-- dbt 1.12's latest version pointer is a view dbt creates over a versioned model's latest
     version once that is built (pointer enabled in its config or, unset there, by the
     project flag `latest_version_pointer_enabled_by_default`): refused before the version
     is built where S3 Tables' rules hold, in the adapter's sentence. --#}
{% macro check_latest_version_pointer() -%}
  {%- if not var('s3tables_rules', true) or model.version is none or (model.version | string) != (model.latest_version | string) -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set pointer = config.get('latest_version_pointer') -%}
  {%- set enabled = none if pointer is none else (pointer.get('enabled') if pointer is mapping else pointer.enabled) -%}
  {%- if enabled is none -%}
    {%- set enabled = invocation_args_dict.get('latest_version_pointer_enabled_by_default') -%}
  {%- endif -%}
  {%- if enabled -%}
    {{ exceptions.raise_compiler_error('Model `' ~ model.name ~ '` v' ~ model.version ~ ': its `latest_version_pointer` is a view dbt would create over this latest version once it is built, and S3 Tables has no views. Fix: set `latest_version_pointer: {enabled: false}` on the model (or leave the flag `latest_version_pointer_enabled_by_default` off) and read the version by its own name') }}
  {%- endif -%}
{%- endmacro %}
