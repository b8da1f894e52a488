{#- Helpers for the singular tests in tests/. -#}

{#- Rows of `actual` and `expected` (CTE names) that differ, as a multiset: duplicates and
    NULLs count. Zero rows means the two are equal. -#}
{% macro diff_rows(actual, expected) -%}
select 'missing' as problem, * from (select * from {{ expected }} except all select * from {{ actual }})
union all
select 'unexpected' as problem, * from (select * from {{ actual }} except all select * from {{ expected }})
{%- endmacro %}

{#- Commits on the Iceberg table's current lineage (its `history` metadata table): 1 right
    after the table is created or replaced, plus one per incremental run that wrote to it. -#}
{% macro commits_since_create(relation) -%}
(select count(*) from {{ relation }}.history where is_current_ancestor)
{%- endmacro %}

{#- The Iceberg table's properties as Spark shows them (`format-version` among them), as a
    dict; empty while parsing. -#}
{% macro table_properties(relation) -%}
  {%- set properties = {} %}
  {%- if execute %}
    {%- for row in run_query('show tblproperties ' ~ relation) %}
      {%- do properties.update({row[0]: row[1]}) %}
    {%- endfor %}
  {%- endif %}
  {{- return(properties) }}
{%- endmacro %}
