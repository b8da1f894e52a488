{#-- Table maintenance of the tables dbt builds (see maintenance.py for each operation):

     dbt run-operation s3tables_maintain --args '{models: [orders, customers]}'
     dbt run-operation s3tables_maintain --args '{schema: analytics, operations: [compact]}'

     Every table, incremental, seed and snapshot node named in `models` (or in `schema`)
     whose table exists is maintained; one line per table says what changed. --#}
{% macro s3tables_maintain(models=none, schema=none, operations=none, snapshots_older_than_days=none, retain_last=none, orphans_older_than_days=none, force=false) %}
  {%- if models is none and schema is none -%}
    {{ exceptions.raise_compiler_error("s3tables_maintain argument `models`: names no table. Fix: pass `models: [name, ...]` or `schema: <schema>`") }}
  {%- endif -%}
  {%- set names = [models] if models is string else (models or []) -%}
  {%- set arguments = {'operations': operations, 'snapshots_older_than_days': snapshots_older_than_days, 'retain_last': retain_last, 'orphans_older_than_days': orphans_older_than_days, 'force': force} -%}
  {%- set unknown = names | reject('in', graph.nodes.values() | map(attribute='name') | list) | list -%}
  {%- if unknown -%}
    {{ exceptions.raise_compiler_error("s3tables_maintain argument `models`: no model, seed or snapshot named " ~ unknown | join(', ') ~ ". Fix: check the names") }}
  {%- endif -%}
  {%- for node in graph.nodes.values()
        if node.resource_type in ['model', 'seed', 'snapshot']
        and (node.resource_type != 'model' or node.config.materialized in ['table', 'incremental'])
        and (node.name in names or (schema is not none and node.schema == schema)) -%}
    {%- set relation = adapter.get_relation(node.database, node.schema, node.alias) -%}
    {%- if relation is none -%}
      {{ log(node.name ~ ": no table yet, nothing to maintain", info=true) }}
    {%- else -%}
      {%- do adapter.maintenance().maintain_table(relation, arguments) -%}
    {%- endif -%}
  {%- endfor -%}
{% endmacro %}

{#-- Undo a whole dbt run: every table it changed back to its state before it.

     dbt run-operation s3tables_rollback --args '{invocation_id: <id>}'
     dbt run-operation s3tables_rollback --args '{invocation_id: <id>, dry_run: true}'

     The invocation id is in the run's target/run_results.json (metadata.invocation_id).
     Tables in every schema of this project's models, seeds and snapshots are looked at. --#}
{% macro s3tables_rollback(invocation_id=none, dry_run=false) %}
  {%- if not invocation_id -%}
    {{ exceptions.raise_compiler_error("s3tables_rollback argument `invocation_id`: is required. Fix: pass the invocation_id of the run to undo (target/run_results.json, metadata)") }}
  {%- endif -%}
  {%- set schemas = [] -%}
  {%- for node in graph.nodes.values() if node.resource_type in ['model', 'seed', 'snapshot'] -%}
    {%- do schemas.append([node.database if node.database is defined else none, node.schema]) -%}
  {%- endfor -%}
  {%- do adapter.undo().undo_run(invocation_id, schemas, dry_run) -%}
{% endmacro %}
