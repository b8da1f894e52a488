{#-- Two jobs running one model at once (a schedule starting a run before the last one
     ended), as the adapter keeps them apart (dbt/adapters/s3tables/incremental/
     run_branch.py): a run whose SQL reads its own table (`{{ this }}`, `is_incremental()`,
     `last_processed_value()`, or a chunked rebuild's progress) notes the table's snapshot
     before it reads it, its base; its statement writes an Iceberg branch created at the
     base; main takes the branch's head only while main is still at the base (Iceberg's
     `fast_forward` refuses a main that is not an ancestor of the branch, and the run
     checks first, to say so in one sentence). So of two runs that read the same state, the
     second to publish writes nothing and says so: no row is written twice. No lock of our
     own: the catalog's commit is the arbiter. --#}

{#-- Whether the model's SQL may read its own table's state (a conservative reading of its
     text: a run that reads nothing only pays the branch's few statements). --#}
{% macro reads_own_table() -%}
  {{ return(modules.re.search('\\bthis\\b|is_incremental|last_processed_value', model.raw_code) is not none) }}
{%- endmacro %}

{#-- The table's current snapshot id (a string) from its properties, or none when the table
     has no snapshot yet (nothing to branch from). --#}
{% macro base_snapshot(properties) -%}
  {%- set snapshot = properties.get('current-snapshot-id') -%}
  {{ return(none if snapshot in [none, 'none', '-1'] else snapshot) }}
{%- endmacro %}

{#-- The snapshot main is at (a string), or none. --#}
{% macro main_snapshot(target) -%}
  {%- set rows = run_query("SELECT CAST(snapshot_id AS STRING) FROM " ~ target ~ ".refs WHERE name = 'main'") -%}
  {{ return(rows[0][0] if rows | length > 0 else none) }}
{%- endmacro %}

{% macro branch_prefix() -%}{{ return('dbt_pkg_') }}{%- endmacro %}

{#-- A branch of `target` at snapshot `base`, named for this run (the time it starts, so
     one a failed run left can be told from a live one): {'name', 'relation'}. --#}
{% macro begin_run_branch(target, base) -%}
  {%- set started = modules.datetime.datetime.now(modules.pytz.utc).timestamp() | int -%}
  {%- set name = s3tables_spark.branch_prefix() ~ started ~ '_' ~ (invocation_id | replace('-', ''))[:12] -%}
  {% call statement('s3tables_run_branch') -%}
    ALTER TABLE {{ target }} CREATE OR REPLACE BRANCH {{ s3tables_spark.quote(name) }} AS OF VERSION {{ base }}
  {%- endcall %}
  {{ return({'name': name, 'relation': target ~ '.' ~ s3tables_spark.quote('branch_' ~ name)}) }}
{%- endmacro %}

{#-- Main takes the branch's head if main is still at `base`; else the branch is dropped and
     the run fails in one sentence, nothing written. Branches of runs that started more
     than a day ago (a run that failed before it could drop its own) are dropped on the way.
     The branch's head: the next base. --#}
{% macro publish_run_branch(target, branch, base) -%}
  {%- set refs = {} -%}
  {%- for row in run_query('SELECT name, CAST(snapshot_id AS STRING) FROM ' ~ target ~ '.refs') -%}
    {%- do refs.update({row[0]: row[1]}) -%}
  {%- endfor -%}
  {%- set now = modules.datetime.datetime.now(modules.pytz.utc).timestamp() | int -%}
  {%- for name in refs if name.startswith(s3tables_spark.branch_prefix()) and name != branch.name -%}
    {%- set started = name[s3tables_spark.branch_prefix() | length:].split('_')[0] -%}
    {%- if started.isdigit() and now - (started | int) > 86400 -%}
      {%- do s3tables_spark.drop_branch(target, name) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if refs.get('main') != (base | string) -%}
    {%- do s3tables_spark.drop_branch(target, branch.name) -%}
    {{ exceptions.raise_compiler_error('Model `' ~ model.name ~ '`: its run planned from its table\'s snapshot ' ~ base ~ ' (read by its SQL: `{{ this }}`, `is_incremental()` or `last_processed_value()`), and since then a writer outside this run committed to it (now at snapshot ' ~ refs.get('main') ~ '), so another run wrote from the same state; nothing was written. Fix: run the model again (`dbt retry`): it plans from where the other run left off') }}
  {%- endif -%}
  {% call statement('s3tables_publish') -%}
    CALL system.fast_forward({{ s3tables_spark.sql_string(s3tables_spark.quote(target.schema) ~ '.' ~ s3tables_spark.quote(target.identifier)) }}, 'main', {{ s3tables_spark.sql_string(branch.name) }})
  {%- endcall %}
  {{ return(refs[branch.name]) }}
{%- endmacro %}

{% macro drop_branch(target, name) -%}
  {% call statement('s3tables_branch_dropped') -%}
    ALTER TABLE {{ target }} DROP BRANCH IF EXISTS {{ s3tables_spark.quote(name) }}
  {%- endcall %}
{%- endmacro %}
