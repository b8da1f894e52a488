{#-- Creating and replacing Iceberg tables: no LOCATION (S3 Tables chooses it), the model's
     partitioning and table properties, and `CREATE OR REPLACE` for a rebuild, which keeps
     the table's snapshot history (dbt-spark drops the table first). --#}

{#-- The table properties a table is created with: the write mode of incremental tables,
     the format version, then the model's `tblproperties` (which win). --#}
{% macro creation_properties(incremental) -%}
  {%- set properties = {} -%}
  {%- if incremental -%}
    {%- set mode = 'copy-on-write' if config.get('write_mode') == 'copy_on_write' else 'merge-on-read' -%}
    {%- for key in ['write.merge.mode', 'write.update.mode', 'write.delete.mode'] -%}
      {%- do properties.update({key: mode}) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- set format_version = config.get('format_version') -%}
  {%- if format_version is not none -%}
    {%- if format_version | string not in ['2', '3'] -%}
      {{ s3tables_spark.config_error('format_version', 'unknown value `' ~ format_version ~ '`', 'use one of: 2, 3') }}
    {%- endif -%}
    {%- do properties.update({'format-version': format_version | string}) -%}
  {%- endif -%}
  {%- do properties.update(config.get('tblproperties') or {}) -%}
  {{ return(properties) }}
{%- endmacro %}

{% macro properties_clause(properties) -%}
  {%- if not properties -%}{{ return('') }}{%- endif -%}
  {%- set pairs = [] -%}
  {%- for key, value in properties.items() -%}
    {%- do pairs.append(s3tables_spark.sql_string(key) ~ '=' ~ s3tables_spark.sql_string(value)) -%}
  {%- endfor -%}
  {{ return('TBLPROPERTIES (' ~ pairs | join(', ') ~ ')') }}
{%- endmacro %}

{#-- `CREATE [OR REPLACE] TABLE ... USING iceberg ... AS <sql>`, one commit. --#}
{% macro create_table_as(relation, sql, replace, incremental) -%}
  {%- set partition_by = s3tables_spark.column_names(config.get('partition_by')) or [] -%}
  {%- set partitioning = ('PARTITIONED BY (' ~ partition_by | join(', ') ~ ')') if partition_by else '' -%}
  {{ return(('CREATE OR REPLACE TABLE ' if replace else 'CREATE TABLE ') ~ relation ~ '\nUSING iceberg\n'
      ~ partitioning ~ '\n' ~ s3tables_spark.properties_clause(s3tables_spark.creation_properties(incremental))
      ~ '\nAS ' ~ sql) }}
{%- endmacro %}

{#-- A temporary view of `sql` (the model's rows), cached so the statement and the checks
     read the rows once: `CACHE TABLE` computes them now. The model's `sql_header` goes
     before it, as dbt-spark puts it before its CREATE TABLE. --#}
{% macro cache_rows(view, sql) -%}
  {%- set sql_header = config.get('sql_header') -%}
  {% call statement('s3tables_rows') -%}
    {{ sql_header if sql_header is not none }}
    CACHE TABLE {{ view }} AS {{ sql }}
  {%- endcall %}
{%- endmacro %}

{% macro uncache_rows(view) -%}
  {% call statement('s3tables_uncache') -%}
    UNCACHE TABLE IF EXISTS {{ view }}
  {%- endcall %}
{%- endmacro %}

{#-- The view's rows hold none: a run with no rows commits nothing, as the adapter's. --#}
{% macro has_rows(view) -%}
  {{ return(run_query('SELECT 1 FROM ' ~ view ~ ' LIMIT 1') | length > 0) }}
{%- endmacro %}

{% macro refuse_view_kind() -%}
  {%- if var('s3tables_rules', true) -%}
    {{ exceptions.raise_compiler_error('Model `' ~ model.name ~ '`: S3 Tables has no views. Fix: materialize it as `table`, or as `ephemeral` to inline it into its consumers') }}
  {%- endif -%}
{%- endmacro %}

{#-- Refused where the package cannot keep the adapter's promise: an enforced contract. --#}
{% macro refuse_contract() -%}
  {%- if config.get('contract') and config.get('contract').enforced -%}
    {{ s3tables_spark.config_error('contract', 'an enforced contract needs the adapter here (Spark refuses NOT NULL on an existing Iceberg column, so the package could not keep `not_null` columns required)', 'set `contract: {enforced: false}`, or run the model with the dbt-s3tables adapter') }}
  {%- endif -%}
{%- endmacro %}
