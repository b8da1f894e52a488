{#-- The catalog DDL API for `dbt run-operation`, e.g.
     dbt run-operation s3tables_create_table --args '{name: analytics.events, columns: [{id: bigint}, {ts: timestamp}], not_null: [id]}'
     Each macro is one call of the catalog DDL API (catalogs/ddl.py); errors are typed and nothing
     is changed when one is raised. --#}

{% macro s3tables_create_namespace(name, comment=none, properties=none) %}
  {% if execute %}{% do adapter.catalog_ddl().create_namespace(name, comment, properties) %}{% endif %}
{% endmacro %}

{% macro s3tables_drop_namespace(name, ignore_not_found=false) %}
  {% if execute %}{% do adapter.catalog_ddl().drop_namespace(name, ignore_not_found) %}{% endif %}
{% endmacro %}

{% macro s3tables_create_table(name, columns, on_conflict='error', comment=none, not_null=[]) %}
  {% if execute %}{% do adapter.catalog_ddl().create_table(name, columns, on_conflict, comment, not_null) %}{% endif %}
{% endmacro %}

{#-- The table at Iceberg format `version` in place: one metadata commit, no data rewritten. --#}
{% macro s3tables_upgrade_format_version(table, version=3) %}
  {% if execute %}{% do adapter.catalog_ddl().upgrade_format_version(table, version) %}{% endif %}
{% endmacro %}

{% macro s3tables_drop_table(name, ignore_not_found=false) %}
  {% if execute %}{% do adapter.catalog_ddl().drop_table(name, ignore_not_found) %}{% endif %}
{% endmacro %}

{% macro s3tables_add_column(table, name, type, comment=none, if_not_exists=false) %}
  {% if execute %}{% do adapter.catalog_ddl().add_column(table, name, type, comment, if_not_exists) %}{% endif %}
{% endmacro %}

{#-- Drops a column: only for an operator asking by name; no materialization calls it. --#}
{% macro s3tables_remove_column(table, name, if_exists=false) %}
  {% if execute %}{% do adapter.catalog_ddl().remove_column(table, name, if_exists) %}{% endif %}
{% endmacro %}
