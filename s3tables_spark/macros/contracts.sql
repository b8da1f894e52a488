{#-- A `table` model with an enforced contract, as the adapter builds one where it cannot
     make columns required after a CTAS (dbt/adapters/s3tables/lifecycle/required_columns.py):
     Spark forbids a column list in `CREATE ... AS SELECT`, makes every column of one
     nullable, and refuses `ALTER COLUMN ... SET NOT NULL` on Iceberg tables. So:

     - the rows are checked first (names and types by dbt's contract check, then each
       `not_null` column row by row inside the statement that caches them): a NULL fails
       the build before anything is written;
     - no `not_null` column: one `CREATE [OR REPLACE] TABLE ... AS`, as any table;
     - no table yet: `CREATE TABLE` with the typed column list, `not_null` columns NOT NULL
       (a metadata commit, no snapshot), then one `INSERT INTO`;
     - a table with exactly these columns (names, order, types, which are required) and this
       partitioning: its properties set, then one `INSERT OVERWRITE` of every row (one
       commit, history kept);
     - a table that differs: refused before anything is written. --#}

{% macro contract_enforced() -%}
  {{ return(config.get('contract') is not none and config.get('contract').enforced) }}
{%- endmacro %}

{#-- dbt's contract check (assert_columns_equivalent: the same names, count, types and
     error), on the types Spark gives the model's query and the contract's columns
     (`DESCRIBE QUERY`), as the adapter reads them. dbt-spark's over thrift compares
     PyHive's type codes, which hold no decimal precision and one code for `timestamp` and
     `timestamp_ntz`. --#}
{% macro assert_contract_columns(sql) -%}
  {%- if not model['columns'] -%}{{ exceptions.raise_contract_error([], []) }}{%- endif -%}
  {%- set sql_columns = format_columns(s3tables_spark.columns_with_types(sql=sql)) -%}
  {%- set yaml_columns = format_columns(s3tables_spark.columns_with_types(sql=get_empty_schema_sql(model['columns']))) -%}
  {%- set by_name = {} -%}
  {%- for c in yaml_columns -%}{%- do by_name.setdefault(c['name'], c) -%}{%- endfor -%}
  {%- if sql_columns | length != yaml_columns | length -%}{{ exceptions.raise_contract_error(yaml_columns, sql_columns) }}{%- endif -%}
  {%- for c in sql_columns if by_name.get(c['name'], {}).get('formatted') != c['formatted'] -%}
    {{ exceptions.raise_contract_error(yaml_columns, sql_columns) }}
  {%- endfor -%}
{%- endmacro %}

{#-- The contract's `not_null` columns (on the column or the model), in lower case. --#}
{% macro not_null_columns() -%}
  {%- set named = [] -%}
  {%- for constraint in model.get('constraints', []) if constraint.type == 'not_null' -%}
    {%- for c in constraint.columns or [] -%}{%- do named.append(c | lower) -%}{%- endfor -%}
  {%- endfor -%}
  {%- for key, column in model.columns.items() -%}
    {%- for constraint in column.get('constraints', []) if constraint.type == 'not_null' -%}
      {%- do named.append(column.get('name', key) | lower) -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(named | unique | list) }}
{%- endmacro %}

{#-- The model's rows in the contract's column order, each `not_null` column checked: a
     NULL fails the statement, with the adapter's message. --#}
{% macro contract_select(sql, not_null) -%}
  {%- set selected = [] -%}
  {%- for key, column in model.columns.items() -%}
    {%- set name = column.get('name', key) -%}
    {%- set quoted = s3tables_spark.quote(name) -%}
    {%- if name | lower in not_null -%}
      {%- set message = 'Contract of model `' ~ model.name ~ '`: column `' ~ name ~ '` is not_null, but the query returned NULL in it. Nothing was written.' -%}
      {%- do selected.append('CASE WHEN ' ~ quoted ~ ' IS NULL THEN raise_error(' ~ s3tables_spark.sql_string(message) ~ ') ELSE ' ~ quoted ~ ' END AS ' ~ quoted) -%}
    {%- else -%}
      {%- do selected.append(quoted) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return('SELECT ' ~ selected | join(', ') ~ '\nFROM (\n' ~ sql ~ '\n) AS model_subq') }}
{%- endmacro %}

{#-- The columns of an existing table as `SHOW CREATE TABLE` declares them:
     [(name, type, required)]. Spark prints one indented line per column, `name TYPE[ NOT
     NULL][ COMMENT '...']`, each but the last ending in `,`, the last in the `)` closing
     the list. --#}
{% macro declared_columns(relation) -%}
  {%- set text = run_query('SHOW CREATE TABLE ' ~ relation)[0][0] -%}
  {%- set state = namespace(inside=false, done=false, lines=[]) -%}
  {%- for line in text.splitlines() if not state.done -%}
    {%- if not state.inside -%}
      {%- set state.inside = line.rstrip().endswith('(') -%}
    {%- elif line.startswith('  ') -%}
      {%- do state.lines.append(line.strip()) -%}
    {%- else -%}
      {%- set state.done = true -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set columns = [] -%}
  {%- for line in state.lines -%}
    {%- set line = line[:-1] if line.endswith(',') or loop.last else line -%}
    {%- set parts = modules.re.match('(`(?:[^`]|``)+`|[^ ]+) +(.*)', line) -%}
    {%- set declared = parts.group(2).split(" COMMENT '")[0].strip() -%}
    {%- set name = parts.group(1) -%}
    {%- set name = name[1:-1] | replace('``', '`') if name.startswith('`') else name -%}
    {%- set required = declared.endswith(' NOT NULL') -%}
    {%- do columns.append((name, (declared[:-9] if required else declared) | lower, required)) -%}
  {%- endfor -%}
  {{ return(columns) }}
{%- endmacro %}

{#-- How the table's columns differ from the wanted ones, one phrase each (the adapter's). --#}
{% macro declared_differences(table_columns, wanted) -%}
  {%- set found = {} -%}
  {%- for name, type, required in table_columns -%}{%- do found.update({name | lower: (type, required)}) -%}{%- endfor -%}
  {%- set wanted_names = wanted | map(attribute=0) | map('lower') | list -%}
  {%- set differences = [] -%}
  {%- for name, type, required in wanted if name | lower not in found -%}
    {%- do differences.append('column `' ~ name ~ '` is new') -%}
  {%- endfor -%}
  {%- for name, type, required in table_columns if name | lower not in wanted_names -%}
    {%- do differences.append('column `' ~ name ~ '` is no longer returned') -%}
  {%- endfor -%}
  {%- for name, type, required in wanted if name | lower in found -%}
    {%- set existing = found[name | lower] -%}
    {%- if s3tables_spark.stored_type(existing[0]) != s3tables_spark.stored_type(type) -%}
      {%- do differences.append('column `' ~ name ~ '` changes type to ' ~ type) -%}
    {%- endif -%}
    {%- if existing[1] != required -%}
      {%- do differences.append('column `' ~ name ~ '` becomes ' ~ ('NOT NULL' if required else 'nullable')) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set kept = [] -%}
  {%- for name in wanted_names if name in found -%}{%- do kept.append(name) -%}{%- endfor -%}
  {%- if not differences and kept != table_columns | map(attribute=0) | map('lower') | list -%}
    {%- do differences.append('the columns are in another order') -%}
  {%- endif -%}
  {{ return(differences) }}
{%- endmacro %}

{#-- Build `target` from the cached, checked rows `rows_view`, whose columns are
     `row_columns` (see the top of this file). --#}
{% macro build_with_contract(target, existing, rows_view, row_columns) -%}
  {%- set not_null = s3tables_spark.not_null_columns() -%}
  {%- set partition_by = s3tables_spark.column_names(config.get('partition_by')) or [] -%}
  {%- set wanted_partitioning = s3tables_spark.partition_terms(partition_by) -%}
  {%- set wanted = [] -%}
  {%- for column in row_columns -%}
    {%- do wanted.append((column.name, column.data_type, column.name | lower in not_null)) -%}
  {%- endfor -%}
  {%- if not not_null -%}
    {#-- Nothing to declare: one CREATE [OR REPLACE] TABLE ... AS, as any table. --#}
    {%- call statement('main') -%}
      {{ s3tables_spark.create_table_as(target, 'SELECT * FROM ' ~ rows_view, existing is not none, false) }}
    {%- endcall -%}
  {%- elif existing is none -%}
    {%- set declared = [] -%}
    {%- for name, type, required in wanted -%}
      {%- do declared.append(s3tables_spark.quote(name) ~ ' ' ~ type ~ (' NOT NULL' if required else '')) -%}
    {%- endfor -%}
    {% call statement('s3tables_declared') -%}
      CREATE TABLE {{ target }} ({{ declared | join(', ') }})
      USING iceberg
      {{ ('PARTITIONED BY (' ~ partition_by | join(', ') ~ ')') if partition_by }}
      {{ s3tables_spark.properties_clause(s3tables_spark.creation_properties(false)) }}
    {%- endcall %}
    {%- call statement('main') -%}
      INSERT INTO {{ target }} SELECT * FROM {{ rows_view }}
    {%- endcall -%}
  {%- else -%}
    {%- set differences = s3tables_spark.declared_differences(s3tables_spark.declared_columns(existing), wanted) -%}
    {%- set partitioning = s3tables_spark.table_partitioning(existing) -%}
    {%- if not s3tables_spark.same_partitioning(partitioning, wanted_partitioning) -%}
      {%- do differences.append('the partitioning changes ([' ~ partitioning | join(', ') ~ '] to [' ~ wanted_partitioning | join(', ') ~ '])') -%}
    {%- endif -%}
    {%- if differences -%}
      {{ s3tables_spark.config_error('contract', 'its table `' ~ existing.schema ~ '.' ~ existing.identifier ~ '` declares its NOT NULL columns and this build changes it (' ~ differences | join('; ') ~ '), but Spark can neither declare columns in CREATE OR REPLACE TABLE ... AS SELECT nor make a column NOT NULL in place, so no statement replaces it in one commit; nothing was written', 'drop the table (`DROP TABLE ' ~ existing ~ '`; its snapshot history goes with it) and build the model again, or keep its columns and partitioning as they are') }}
    {%- endif -%}
    {%- do s3tables_spark.set_properties(target, s3tables_spark.creation_properties(false)) -%}
    {% call statement('s3tables_overwrite_mode') %}SET spark.sql.sources.partitionOverwriteMode = STATIC{% endcall %}
    {%- call statement('main') -%}
      INSERT OVERWRITE {{ target }} SELECT * FROM {{ rows_view }}
    {%- endcall -%}
  {%- endif -%}
{%- endmacro %}
