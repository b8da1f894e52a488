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

{#-- `CREATE [OR REPLACE] TABLE ... USING iceberg ... AS <sql>`, one commit, with the
     creation properties and `extra_properties`. --#}
{% macro create_table_as(relation, sql, replace, incremental, extra_properties={}) -%}
  {%- set partition_by = s3tables_spark.column_names(config.get('partition_by')) or [] -%}
  {%- set partitioning = ('PARTITIONED BY (' ~ partition_by | join(', ') ~ ')') if partition_by else '' -%}
  {{ return(('CREATE OR REPLACE TABLE ' if replace else 'CREATE TABLE ') ~ relation ~ '\nUSING iceberg\n'
      ~ partitioning ~ '\n' ~ s3tables_spark.properties_clause(dict(s3tables_spark.creation_properties(incremental), **extra_properties))
      ~ '\nAS ' ~ sql) }}
{%- endmacro %}

{#-- A temporary view of `sql` (the model's rows), cached so the statement and the checks
     read the rows once: `CACHE TABLE` computes them now. --#}
{% macro cache_rows(view, sql) -%}
  {% call statement('s3tables_rows') -%}
    CACHE TABLE {{ view }} AS {{ sql }}
  {%- endcall %}
{%- endmacro %}

{#-- The model's `sql_header`, each of its statements on its own before anything reads the
     model's SQL (the session keeps what it sets): the Thrift server runs one statement a
     call, and a `SET` would take the rest of the text as its value. --#}
{% macro run_sql_header() -%}
  {%- for header_statement in s3tables_spark.split_statements(config.get('sql_header') or '') -%}
    {% call statement('s3tables_sql_header') %}{{ header_statement }}{% endcall %}
  {%- endfor -%}
{%- endmacro %}

{#-- The statements of a script, split at semicolons outside literals, quoted names and
     comments, as the adapter's sql/text.py split_statements: parts holding only comments
     or blanks are dropped. --#}
{% macro split_statements(script) -%}
  {%- set state = namespace(start=0, parts=[]) -%}
  {%- for match in modules.re.compile('\'(?:[^\'\\\\]|\\\\.)*\'|"(?:[^"\\\\]|\\\\.)*"|`(?:[^`]|``)*`|--[^\\n]*|/\\*.*?\\*/|;', modules.re.DOTALL).finditer(script) if match.group() == ';' -%}
    {%- do state.parts.append(script[state.start:match.start()]) -%}
    {%- set state.start = match.end() -%}
  {%- endfor -%}
  {%- do state.parts.append(script[state.start:]) -%}
  {%- set statements = [] -%}
  {%- for part in state.parts if modules.re.sub('--[^\\n]*|/\\*.*?\\*/', '', part, flags=modules.re.DOTALL) | trim -%}
    {%- do statements.append(part | trim) -%}
  {%- endfor -%}
  {{ return(statements) }}
{%- endmacro %}

{% macro uncache_rows(view) -%}
  {% call statement('s3tables_uncache') -%}
    UNCACHE TABLE IF EXISTS {{ view }}
  {%- endcall %}
{%- endmacro %}

{#-- The columns of `relation`, or of the query `sql` (`DESCRIBE QUERY`: Spark analyses it
     without running it), as dbt's column objects with their whole types. DESCRIBE cuts a
     struct of more than `spark.sql.debug.maxToStringFields` (25) fields short (`... 6 more
     fields`), which no statement can use: when a type comes back cut, the setting is
     raised for the session (once) and the columns are read again. --#}
{% macro columns_with_types(relation=none, sql=none) -%}
  {%- set columns = s3tables_spark.described_columns(relation, sql) -%}
  {%- for c in columns if ' more field' in c.data_type -%}
    {%- if loop.first -%}
      {% call statement('s3tables_whole_types') %}SET spark.sql.debug.maxToStringFields = 100000{% endcall %}
      {{ return(s3tables_spark.described_columns(relation, sql)) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(columns) }}
{%- endmacro %}

{% macro described_columns(relation, sql) -%}
  {%- if relation is not none -%}{{ return(adapter.get_columns_in_relation(relation)) }}{%- endif -%}
  {%- set columns = [] -%}
  {%- for row in run_query('DESCRIBE QUERY ' ~ sql) if row[0] and not row[0].startswith('#') -%}
    {%- do columns.append(api.Column.create(row[0], row[1])) -%}
  {%- endfor -%}
  {{ return(columns) }}
{%- endmacro %}

{#-- The view's rows hold none: a run with no rows commits nothing, as the adapter's. --#}
{% macro has_rows(view) -%}
  {{ return(run_query('SELECT 1 FROM ' ~ view ~ ' LIMIT 1') | length > 0) }}
{%- endmacro %}

{#-- Refused on an incremental model, where the package cannot keep the adapter's promise
     (contracts.sql builds a `table` model with one). --#}
{% macro refuse_contract() -%}
  {%- if s3tables_spark.contract_enforced() -%}
    {{ s3tables_spark.config_error('contract', 'an enforced contract on an incremental model needs the adapter (Spark refuses NOT NULL on an existing Iceberg column, so the package could not keep `not_null` columns required as the table evolves)', 'set `contract: {enforced: false}`, materialize the model as `table`, or run it with the dbt-s3tables adapter') }}
  {%- endif -%}
{%- endmacro %}

{#-- `persist_docs`: the model's description as the table's comment, each documented column's
     as its comment (dbt-spark writes column comments only when `file_format` is set, and
     the table comment only in its own CREATE TABLE), each set only when the table does
     not hold it already: a metadata commit each, and a run that changes nothing commits
     none. `properties` are the table's, when the caller has just read them. --#}
{% macro persist_docs(relation, properties=none) -%}
  {%- if config.persist_relation_docs() and model.description -%}
    {%- set properties = s3tables_spark.table_properties(relation) if properties is none else properties -%}
    {%- do s3tables_spark.set_properties(relation, s3tables_spark.changed_properties({'comment': model.description}, properties)) -%}
  {%- endif -%}
  {%- set documented = {} -%}
  {%- for key, column in (model.columns if config.persist_column_docs() else {}).items() if column.get('description') -%}
    {%- do documented.update({column.get('name', key) | lower: column}) -%}
  {%- endfor -%}
  {%- if documented -%}
    {%- for row in run_query('DESCRIBE TABLE ' ~ relation) if row[0] and not row[0].startswith('#') -%}
      {%- set column = documented.get(row[0] | lower) -%}
      {%- if column is not none and row[2] != column.description -%}
        {% call statement('s3tables_column_comment') -%}
          ALTER TABLE {{ relation }} ALTER COLUMN {{ s3tables_spark.quote(row[0]) }} COMMENT {{ s3tables_spark.sql_string(column.description) }}
        {%- endcall %}
      {%- endif -%}
    {%- endfor -%}
  {%- endif -%}
{%- endmacro %}
