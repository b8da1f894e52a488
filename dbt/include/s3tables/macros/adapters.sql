{#-- Every table is an Iceberg table, in the profile's catalog (Spark's default) or in the
     catalogs.yml catalog its relation's database names. --#}
{% macro s3tables__file_format_clause() -%}
  using iceberg
{%- endmacro %}

{#-- Locations are the catalog's business (S3 Tables forbids choosing one); only the
     test-only `emulator_table_location` profile key sets one, for an emulator. --#}
{% macro s3tables__location_clause(relation=none) %}
  {%- set location = adapter.catalog_ddl(relation).emulator_table_location(relation) if relation is not none else none -%}
  {%- if location %}
    location {{ adapter.string_literal(location) }}
  {%- endif %}
{%- endmacro %}

{% macro s3tables__options_clause() %}{% endmacro %}

{#-- `properties`, or else the model's tblproperties plus the row-level write mode of
     incremental tables; and any `extra_properties` of this build. --#}
{% macro s3tables__tblproperties_clause(extra_properties={}, properties=none) -%}
  {%- set properties = properties if properties is not none else adapter.model_build(model).table_properties(model.get('database')) -%}
  {%- do properties.update(extra_properties) -%}
  {%- if properties %}
    tblproperties (
      {%- for key, value in properties.items() -%}
      {{ adapter.string_literal(key) }} = {{ adapter.string_literal(value) }}{% if not loop.last %}, {% endif %}
      {%- endfor %}
    )
  {%- endif %}
{%- endmacro %}

{#-- A table that does not exist yet is created with CREATE TABLE, never CREATE OR
     REPLACE: when another run creates it meanwhile, this statement fails instead of
     silently replacing that run's rows. --#}
{% macro s3tables__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if temporary -%}
    {{ create_temporary_view(relation, compiled_code) }}
  {%- else -%}
    {%- set existing = adapter.get_relation(database=relation.database, schema=relation.schema, identifier=relation.identifier) -%}
    {{ s3tables_create_or_replace_table(relation, compiled_code, replace=existing is not none) }}
  {%- endif -%}
{%- endmacro %}

{#-- One atomic CREATE OR REPLACE (or CREATE, with `replace=false`); `extra_properties`
     land in the same commit, `properties` (when given) replace the model's own. A model with an enforced contract arrives already checked
     (s3tables_model_query); any other query gets its untyped (NULL) columns cast to
     string, unless the caller knows it has none (`typed`: seeds cast every column, clones
     copy an Iceberg table). --#}
{#-- dbt-spark's, except that an empty `partition_by` ([] or '') means unpartitioned, as
     partition evolution reads it: dbt-spark rendered `partitioned by ()`, a syntax error. --#}
{% macro s3tables__partition_cols(label, required=false) %}
  {%- set cols = config.get('partition_by', validator=validation.any[list, basestring]) -%}
  {%- if cols -%}
    {%- if cols is string -%}{%- set cols = [cols] -%}{%- endif -%}
    {{ label }} ({{ cols | join(', ') }})
  {%- endif %}
{%- endmacro %}

{#-- With `columns` (a typed column list, NOT NULL where declared) and no `compiled_code`:
     the table is created empty with those columns, which CREATE ... AS cannot declare (see
     required_columns.py). --#}
{% macro s3tables_create_or_replace_table(relation, compiled_code, extra_properties={}, typed=false, replace=true, properties=none, columns=none) -%}
  {%- if compiled_code is not none and not typed and not config.get('contract').enforced -%}
    {%- set compiled_code = adapter.model_build(model).typed_sql(compiled_code) -%}
  {%- endif %}
  create {{ 'or replace ' if replace }}table {{ relation }}{% if columns %} ({{ columns }}){% endif %}
  {{ file_format_clause() }}
  {{ partition_cols(label="partitioned by") }}
  {{ s3tables__location_clause(relation) }}
  {{ s3tables__tblproperties_clause(extra_properties, properties) }}
  {{ comment_clause() }}
  {%- if compiled_code is not none %}
  as
  {{ compiled_code }}
  {%- endif %}
{%- endmacro %}

{% macro s3tables__create_view_as(relation, sql) -%}
  {%- if config.get('contract').enforced -%}
    {{ get_assert_columns_equivalent(sql) }}
  {%- else -%}
    {%- set sql = adapter.model_build(model).typed_sql(sql) -%}
  {%- endif %}
  create or replace view {{ relation }}
  {{ s3tables_view_columns_clause(relation, sql) }}
  {{ comment_clause() }}
  as
  {{ sql }}
{%- endmacro %}

{#-- A view keeps its column docs in its definition: `(col comment '...', ...)` lists
     every column the query returns, with the documented ones' descriptions. --#}
{% macro s3tables_view_columns_clause(relation, sql) -%}
  {%- if config.persist_column_docs() and model.columns -%}
    {%- set query_columns = adapter.query_columns(sql) -%}
    {%- set documented = validate_doc_columns(relation, model.columns, query_columns) -%}
    {%- set descriptions = {} -%}
    {%- for name, column in documented.items() if column.get('description') -%}
      {%- do descriptions.update({name | lower: column['description']}) -%}
    {%- endfor -%}
    (
    {%- for column in query_columns %}
      {{ adapter.quote(column) }}{% if column | lower in descriptions %} comment {{ adapter.string_literal(descriptions[column | lower]) }}{% endif %}{{ "," if not loop.last }}
    {%- endfor %}
    )
  {%- endif -%}
{%- endmacro %}

{#-- The query a model writes. With an enforced contract: its columns checked against
     the contract (names, types, count), put in the contract's order, and every
     `not_null` column checked row by row inside the writing statement. --#}
{% macro s3tables_model_query(sql) -%}
  {%- if config.get('contract').enforced -%}
    {{ get_assert_columns_equivalent(sql) }}
    {{ return(get_select_subquery(sql)) }}
  {%- endif -%}
  {{ return(sql) }}
{%- endmacro %}

{% macro s3tables__get_select_subquery(sql) -%}
  {{ return(adapter.model_build(model).contract_sql(sql)) }}
{%- endmacro %}

{#-- dbt-spark's runs SHOW TABLE EXTENDED, which Spark 3.5 refuses for Iceberg tables. --#}
{% macro s3tables__list_relations_without_caching(schema_relation) -%}
  {{ return(adapter.list_relations_without_caching(schema_relation)) }}
{%- endmacro %}

{% macro s3tables__create_schema(relation) -%}
  {% do adapter.ensure_namespace(relation.schema, relation.database) %}
{%- endmacro %}

{% macro s3tables__drop_schema(relation) -%}
  {% do adapter.drop_namespace_with_contents(relation.schema, relation.database) %}
{%- endmacro %}

{#-- A node's database is its catalog: the node's `catalog_name` (a catalogs.yml catalog)
     or `database` config; none for the profile's catalog, Spark's default. dbt passes
     every kind of node here, a saved query's exports too (read in Python). --#}
{% macro s3tables__generate_database_name(custom_database_name=none, node=none) -%}
  {% do return(adapter.node_database(custom_database_name, node)) %}
{%- endmacro %}

{#-- PURGE: a dropped table's files go too (and S3 Tables rejects non-purge drops). --#}
{% macro s3tables__drop_relation(relation) -%}
  {% call statement('drop_relation', auto_begin=False) -%}
    {%- if relation.type == 'view' -%}
      drop view if exists {{ relation.render() }}
    {%- else -%}
      drop table if exists {{ relation.render() }} purge
    {%- endif -%}
  {%- endcall %}
{% endmacro %}

{#-- One Iceberg delete commit (the previous rows stay in the table's history). --#}
{% macro s3tables__truncate_relation(relation) -%}
  {% call statement('truncate_relation') -%}
    delete from {{ relation.render() }}
  {%- endcall %}
{% endmacro %}

{#-- Iceberg renames in the catalog (no data moves); the new name stays in the schema. --#}
{% macro s3tables__rename_relation(from_relation, to_relation) -%}
  {% if from_relation.type not in ('table', 'view') %}
    {% do exceptions.raise_compiler_error("Cannot rename " ~ from_relation.render() ~ ": its type `" ~ from_relation.type ~ "` is not table or view") %}
  {% endif %}
  {% call statement('rename_relation') -%}
    alter {{ from_relation.type }} {{ from_relation.render() }} rename to {{ from_relation.incorporate(path={"identifier": to_relation.identifier}).render() }}
  {%- endcall %}
{% endmacro %}

{#-- The model's description as the table comment, escaped like every literal here. --#}
{% macro s3tables__comment_clause() %}
  {%- set raw_persist_docs = config.get('persist_docs', {}) -%}
  {%- if raw_persist_docs is not mapping -%}
    {{ exceptions.raise_compiler_error("Invalid value provided for 'persist_docs'. Expected dict but got value: " ~ raw_persist_docs) }}
  {%- elif raw_persist_docs.get('relation', false) and model.description -%}
    comment {{ adapter.string_literal(model.description) }}
  {%- endif %}
{%- endmacro %}

{#-- Descriptions go to the Iceberg catalog itself. Tables: the model's as the `comment`
     property, the columns' as Iceberg column docs, in one PyIceberg commit made only when
     something changed. Views: their definition carries their docs (create_view_as).
     Documented columns the relation lacks get dbt's warning and are skipped. --#}
{% macro s3tables__persist_docs(relation, model, for_relation, for_columns) -%}
  {% if relation.type != 'view' %}
    {% set description = model.description if for_relation and config.persist_relation_docs() and model.description else none %}
    {% set columns = {} %}
    {% if for_columns and config.persist_column_docs() and model.columns %}
      {% set existing = adapter.get_columns_in_relation(relation) | map(attribute='name') | list %}
      {% for name, column in validate_doc_columns(relation, model.columns, existing).items() if column.description %}
        {% do columns.update({name: column.description}) %}
      {% endfor %}
    {% endif %}
    {% if description or columns %}
      {% if execute %}{% do adapter.catalog_ddl(relation).persist_docs(relation.schema, relation.identifier, description, columns) %}{% endif %}
    {% endif %}
  {% endif %}
{% endmacro %}

{#-- A node's unset database (the profile's catalog) reaches here Undefined. --#}
{% macro s3tables__get_or_create_relation(database, schema, identifier, type) -%}
  {{ return(default__get_or_create_relation(database if database is defined and database else none, schema, identifier, type)) }}
{%- endmacro %}

{#-- dbt renders this while compiling every Python model: over thrift, stop there. --#}
{% macro py_script_comment() %}
  {%- if target.method == 'thrift' -%}
    {{ exceptions.raise_compiler_error(
         "Python model `" ~ model.name ~ "` needs `method: session` (the Spark Thrift Server "
         ~ "at " ~ target.host ~ ":" ~ target.port ~ " only runs SQL). Fix: run it with a "
         ~ "session target, or rewrite the model in SQL") }}
  {%- endif -%}
{% endmacro %}
