{#-- dbt_utils' relation lookups, answered from the Iceberg catalog: dbt_utils reads
     information_schema, spark_utils runs SHOW TABLE EXTENDED, and Spark 3.5 has neither
     for Iceberg tables. dbt_utils finds these through dispatch once a project puts `dbt`
     (the adapters' macros) first in its search order:

       dispatch:
         - macro_namespace: dbt_utils
           search_order: ['dbt', 'dbt_utils']
--#}

{% macro s3tables__get_relations_by_pattern(schema_pattern, table_pattern, exclude='', database=none) -%}
  {{ return(adapter.relations_matching(schema_pattern, table_pattern, exclude, database)) }}
{%- endmacro %}

{% macro s3tables__get_relations_by_prefix(schema, prefix, exclude='', database=none) -%}
  {{ return(adapter.relations_matching(schema, prefix ~ '%', exclude, database)) }}
{%- endmacro %}

{#-- The same lookups as a query (table_schema, table_name, table_type), for callers that
     run dbt_utils' SQL themselves. --#}
{% macro s3tables__get_tables_by_pattern_sql(schema_pattern, table_pattern, exclude='', database=none) -%}
  {%- set relations = adapter.relations_matching(schema_pattern, table_pattern, exclude, database) -%}
  {%- if relations -%}
    select * from values
    {%- for relation in relations %}
      ({{ adapter.string_literal(relation.schema) }}, {{ adapter.string_literal(relation.identifier) }}, {{ adapter.string_literal(relation.type) }}){{ "," if not loop.last }}
    {%- endfor %}
    as relations(table_schema, table_name, table_type)
  {%- else -%}
    select cast(null as string) as table_schema, cast(null as string) as table_name, cast(null as string) as table_type where false
  {%- endif -%}
{%- endmacro %}

{% macro s3tables__get_tables_by_prefix_sql(schema, prefix, exclude='', database=none) -%}
  {{ return(s3tables__get_tables_by_pattern_sql(schema, prefix ~ '%', exclude, database)) }}
{%- endmacro %}
