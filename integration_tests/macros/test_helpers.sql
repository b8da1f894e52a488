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
