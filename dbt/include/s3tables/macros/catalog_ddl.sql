{#-- The catalog DDL API for `dbt run-operation`, e.g.
     dbt run-operation s3tables_create_table --args '{name: analytics.events, columns: [{id: bigint}, {ts: timestamp}], not_null: [id]}'
     Each macro is one adapter call (see catalog_ddl.py); errors are typed and nothing
     is changed when one is raised. --#}

{% macro s3tables_create_namespace(name, comment=none, properties=none) %}
  {% do adapter.create_namespace(name, comment, properties) %}
{% endmacro %}

{% macro s3tables_drop_namespace(name, ignore_not_found=false) %}
  {% do adapter.drop_namespace(name, ignore_not_found) %}
{% endmacro %}

{% macro s3tables_create_table(name, columns, on_conflict='error', comment=none, not_null=[]) %}
  {% do adapter.create_table(name, columns, on_conflict, comment, not_null) %}
{% endmacro %}

{% macro s3tables_drop_table(name, ignore_not_found=false) %}
  {% do adapter.drop_table(name, ignore_not_found) %}
{% endmacro %}

{% macro s3tables_add_column(table, name, type, comment=none, if_not_exists=false) %}
  {% do adapter.add_column(table, name, type, comment, if_not_exists) %}
{% endmacro %}

{#-- Drops a column: only for an operator asking by name; no materialization calls it. --#}
{% macro s3tables_remove_column(table, name, if_exists=false) %}
  {% do adapter.remove_column(table, name, if_exists) %}
{% endmacro %}
