{#-- Every table is an Iceberg table in the catalog that is Spark's default catalog. --#}
{% macro s3tables__file_format_clause() -%}
  using iceberg
{%- endmacro %}

{#-- Locations are the catalog's business (S3 Tables forbids choosing one); only the
     test-only `emulator_table_location` profile key sets one, for an emulator. --#}
{% macro s3tables__location_clause(relation=none) %}
  {%- set root = target.get('emulator_table_location') -%}
  {%- if root and relation is not none %}
    location '{{ root.rstrip('/') }}/{{ relation.schema }}/{{ relation.identifier }}'
  {%- endif %}
{%- endmacro %}

{% macro s3tables__options_clause() %}{% endmacro %}

{#-- The model's tblproperties, plus the row-level write mode of incremental tables and
     any `extra_properties` of this build. --#}
{% macro s3tables__tblproperties_clause(extra_properties={}) -%}
  {%- set properties = adapter.table_properties(model['name'], model['config']) -%}
  {%- do properties.update(extra_properties) -%}
  {%- if properties %}
    tblproperties (
      {%- for key, value in properties.items() -%}
      '{{ key }}' = '{{ value | replace("\\", "\\\\") | replace("'", "\\'") }}'{% if not loop.last %}, {% endif %}
      {%- endfor %}
    )
  {%- endif %}
{%- endmacro %}

{% macro s3tables__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if temporary -%}
    {{ create_temporary_view(relation, compiled_code) }}
  {%- else -%}
    {{ s3tables_create_or_replace_table(relation, compiled_code) }}
  {%- endif -%}
{%- endmacro %}

{#-- One atomic CREATE OR REPLACE; `extra_properties` land in the same commit. --#}
{% macro s3tables_create_or_replace_table(relation, compiled_code, extra_properties={}) -%}
  {%- set contract_config = config.get('contract') -%}
  {%- if contract_config.enforced -%}
    {{ get_assert_columns_equivalent(compiled_code) }}
    {%- set compiled_code = get_select_subquery(compiled_code) -%}
  {%- endif %}
  create or replace table {{ relation }}
  {{ file_format_clause() }}
  {{ partition_cols(label="partitioned by") }}
  {{ s3tables__location_clause(relation) }}
  {{ s3tables__tblproperties_clause(extra_properties) }}
  {{ comment_clause() }}
  as
  {{ compiled_code }}
{%- endmacro %}

{% macro s3tables__create_view_as(relation, sql) -%}
  create or replace view {{ relation }}
  {{ comment_clause() }}
  {%- set contract_config = config.get('contract') -%}
  {%- if contract_config.enforced -%}
    {{ get_assert_columns_equivalent(sql) }}
  {%- endif %}
  as
  {{ sql }}
{%- endmacro %}

{% macro s3tables__create_schema(relation) -%}
  {% do adapter.ensure_namespace(relation.schema) %}
{%- endmacro %}

{% macro s3tables__drop_schema(relation) -%}
  {% do adapter.drop_namespace_with_contents(relation.schema) %}
{%- endmacro %}

{#-- PURGE: a dropped table's files go too (and S3 Tables rejects non-purge drops). --#}
{% macro s3tables__drop_relation(relation) -%}
  {% call statement('drop_relation', auto_begin=False) -%}
    {%- if relation.type == 'view' -%}
      drop view if exists {{ relation }}
    {%- else -%}
      drop table if exists {{ relation }} purge
    {%- endif -%}
  {%- endcall %}
{% endmacro %}

{#-- Descriptions go to the Iceberg catalog itself: the model's as the table's `comment`
     property, the columns' as Iceberg column docs (one commit; views keep Spark's). --#}
{% macro s3tables__persist_docs(relation, model, for_relation, for_columns) -%}
  {% if relation.type != 'view' %}
    {% set description = model.description if for_relation and config.persist_relation_docs() and model.description else none %}
    {% set columns = {} %}
    {% if for_columns and config.persist_column_docs() and model.columns %}
      {% for name, column in model.columns.items() if column.description %}
        {% do columns.update({name: column.description}) %}
      {% endfor %}
    {% endif %}
    {% if description or columns %}
      {% do adapter.persist_docs_to_catalog(relation, description, columns) %}
    {% endif %}
  {% endif %}
{% endmacro %}

{#-- Spark relations have no database; a node's unset database reaches here Undefined. --#}
{% macro s3tables__get_or_create_relation(database, schema, identifier, type) -%}
  {{ return(default__get_or_create_relation(none, schema, identifier, type)) }}
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
