{#-- dbt's column macros, answered from the Iceberg catalog through PyIceberg (never
     while dbt parses: a model's body may call them, and parsing changes nothing). dbt-spark's
     versions run DESCRIBE (raw rows, not columns), ALTER TABLE ADD COLUMNS (refused by
     Iceberg's Spark 3.5 integration for snapshots' new columns) and refuse to drop
     columns. Every relation is rendered with render(): under --empty a ref() prints as
     a subquery. --#}

{% macro s3tables__get_columns_in_relation(relation) -%}
  {{ return(adapter.get_columns_in_relation(relation)) }}
{%- endmacro %}

{% macro s3tables__alter_column_type(relation, column_name, new_column_type) -%}
  {% if execute %}{% do adapter.catalog_ddl(relation).change_column_type(relation.schema ~ '.' ~ relation.identifier, column_name, new_column_type) %}{% endif %}
{%- endmacro %}

{% macro s3tables__alter_relation_add_remove_columns(relation, add_columns, remove_columns) -%}
  {% if execute %}{% do adapter.catalog_ddl(relation).alter_relation_columns(relation, add_columns, remove_columns) %}{% endif %}
{%- endmacro %}

{#-- Snapshots: columns the source gained. --#}
{% macro s3tables__create_columns(relation, columns) -%}
  {% if execute %}{% do adapter.catalog_ddl(relation).alter_relation_columns(relation, columns, none) %}{% endif %}
{%- endmacro %}

{% macro s3tables__alter_column_comment(relation, column_dict) -%}
  {% set docs = {} %}
  {% for name, column in column_dict.items() if column.get('description') %}
    {% do docs.update({name: column['description']}) %}
  {% endfor %}
  {% if execute %}{% do adapter.catalog_ddl(relation).persist_docs(relation.schema, relation.identifier, none, docs) %}{% endif %}
{%- endmacro %}

{% macro s3tables__alter_relation_comment(relation, relation_comment) -%}
  {% if execute %}{% do adapter.catalog_ddl(relation).persist_docs(relation.schema, relation.identifier, relation_comment, {}) %}{% endif %}
{%- endmacro %}
