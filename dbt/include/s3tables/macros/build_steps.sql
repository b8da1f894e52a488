{#-- The steps the table, incremental and seed materializations share (and the snapshot,
     the last one): whether a build is audited, its audited write and its end.

     Write-audit-publish (`audit_before_publish`, see audit.py and audited_build.py):
       1. s3tables_audit_build: the adapter says whether this build is audited;
       2. s3tables_audited_write: the rows go to main, or to the table's audit branch
          (the table created empty first if missing);
       3. s3tables_finish_build: grants, docs and post-hooks, then `adapter.maintenance().after_build`
          stages an audited build, which publishes when its tests pass, and checks the
          `maintenance` config's thresholds (after the publish, for a staged build). --#}

{#-- The audit handle of this build of the model (an AuditedBuild), or none: written to
     main as usual. An incremental run takes it before it writes anything. --#}
{% macro s3tables_audit_build(model_config, target_relation) %}
  {{ return(adapter.audits().audit_build(model, model_config, target_relation, graph.nodes, selected_resources)) }}
{% endmacro %}

{#-- The write of a whole table: the rows of a query replace the table's content, on main
     with one atomic CREATE [OR REPLACE] TABLE ... AS, or, audited, on the table's audit
     branch with `audit.replace_sql` (the table created empty first if missing). Returns
     {'audit': audit, 'relation': the relation written (main or the branch), 'sql': the
     writing statement (none when an incremental run writes itself)}.

       target_relation    the model's table
       audit              s3tables_audit_build's answer (none: not audited)
       table_exists       whether the table exists now (a view in its place was dropped)
       sql                the query whose rows are written (with `run`: none)
       run                an incremental run (adapter.incremental(this).run), instead of `sql`:
                          its create_sql, table_properties and replaces_table are read
                          where each statement needs them (creating the query counts its
                          rows per key). A run that does not create the table writes its
                          own statements (run.write()); audited, its branch is prepared here.
       create             how a table is created from `sql`: 'create_table_as' (dbt's
                          create_table_as, as a table model: CREATE OR REPLACE when the
                          table exists, untyped columns cast to string) or 'typed'
                          (s3tables_create_or_replace_table with typed=true: every column
                          already has its type: a seed's casts, an incremental run's
                          create_sql, with the run's table_properties). With `run`: 'typed'.
       replace            with create='typed' and no `run`: CREATE OR REPLACE (else CREATE)
       statement_name     the name of the writing statement ('main'; a seed's 'load_seed')
       enforce_not_null   an enforced contract's `not_null` columns made required in the
                          Iceberg schema (catalog_ddl's enforce_not_null): before an audited
                          write, after one on main (a seed has no contract: false). Where
                          that cannot be done after the build (format v3 on the embedded
                          catalog, model_build(model).required_columns_build), they are declared when
                          the table is created instead: CREATE TABLE with its typed column
                          list then one INSERT, or one INSERT OVERWRITE of a table that
                          already has them (see required_columns.py)
       forget_model_state a replaced table's incremental state goes (a table model over an
                          incremental model's table): at the publish, when audited --#}
{% macro s3tables_audited_write(target_relation, audit, table_exists, sql=none, run=none, create='create_table_as', replace=true, statement_name='main', enforce_not_null=true, forget_model_state=false) %}
  {%- if create not in ('create_table_as', 'typed') or (run is not none and create != 'typed') -%}
    {{ exceptions.raise_compiler_error("s3tables_audited_write argument `create`: " ~ create ~ " is not 'create_table_as' or 'typed' ('typed' with `run`)") }}
  {%- endif -%}
  {%- if run is not none and not run.creates_table -%}
    {% if audit %}
      {% do audit.prepare(run.planned_from) %}
    {% endif %}
    {{ return({'audit': audit, 'relation': audit.relation if audit else target_relation, 'sql': none}) }}
  {%- endif -%}

  {%- set query = run.create_sql if run is not none else sql -%}
  {%- set required = none -%}
  {%- if enforce_not_null -%}
    {%- set properties = run.table_properties if run is not none else adapter.model_build(model).table_properties(model.get('database')) -%}
    {%- set required = adapter.model_build(model).required_columns_build(target_relation, query, properties, config.get('partition_by'), table_exists, audit is not none) -%}
  {%- endif -%}

  {%- if audit -%}
    {% if not table_exists %}
      {%- call statement('create_empty') -%}
        {%- if required -%}
          {{ s3tables_create_or_replace_table(target_relation, none, properties=properties, typed=true, replace=false, columns=required.column_definitions) }}
        {%- else -%}
          {{ _s3tables_create_sql(target_relation, audit.empty_sql(query), run, create, replace=false) }}
        {%- endif -%}
      {%- endcall -%}
    {% elif forget_model_state %}
      {% do audit.forget_model_state() %}
    {% endif %}
    {% if enforce_not_null and not required %}
      {% do adapter.catalog_ddl(target_relation).enforce_not_null(target_relation, model) %}
    {% endif %}
    {%- set write_sql = audit.replace_sql(query) -%}
    {% do adapter.upstream_reads().tag_next_write() %}
    {%- call statement(statement_name) -%}
      {{ write_sql }}
    {%- endcall -%}
  {%- elif required -%}
    {#-- Declared at creation: the statements run in Python, which drops a table it
         created when its rows fail to commit. --#}
    {%- if required.creates_table -%}
      {%- set written = required.create_and_fill(s3tables_create_or_replace_table(target_relation, none, properties=properties, typed=true, replace=false, columns=required.column_definitions)) -%}
    {%- else -%}
      {%- set written = required.overwrite() -%}
    {%- endif -%}
    {% do store_result(statement_name, response=written[0]) %}
    {%- set write_sql = written[1] -%}
    {% do write(write_sql) %}
    {% if forget_model_state and table_exists %}
      {% do adapter.incremental(target_relation).forget_state() %}
    {% endif %}
  {%- else -%}
    {%- set write_sql = _s3tables_create_sql(target_relation, run.create_sql if run is not none else sql, run, create, replace=run.replaces_table if run is not none else replace) -%}
    {% do adapter.upstream_reads().tag_next_write() %}
    {%- call statement(statement_name) -%}
      {{ write_sql }}
    {%- endcall -%}
    {% if enforce_not_null %}
      {% do adapter.catalog_ddl(target_relation).enforce_not_null(target_relation, model) %}
    {% endif %}
    {#-- REPLACE keeps table properties: an incremental model's state must not survive. --#}
    {% if forget_model_state and table_exists %}
      {% do adapter.incremental(target_relation).forget_state() %}
    {% endif %}
  {%- endif -%}
  {{ return({'audit': audit, 'relation': audit.relation if audit else target_relation, 'sql': write_sql}) }}
{% endmacro %}

{#-- The CREATE [OR REPLACE] TABLE ... AS statement of s3tables_audited_write. --#}
{% macro _s3tables_create_sql(target_relation, sql, run, create, replace) %}
  {%- if create == 'create_table_as' -%}
    {{ return(create_table_as(False, target_relation, sql)) }}
  {%- else -%}
    {{ return(s3tables_create_or_replace_table(target_relation, sql, properties=run.table_properties if run is not none else none, typed=true, replace=replace)) }}
  {%- endif -%}
{% endmacro %}

{#-- Whether this build is skipped (`skip_when_unchanged`); if so its result is stored.
     Otherwise its data commit records what it is built from. --#}
{% macro s3tables_skips_unchanged(model_config, target_relation, query, table_exists, full_refresh) %}
  {% if not model_config.skip_when_unchanged %}
    {{ return(false) }}
  {% endif %}
  {% set check = adapter.unchanged_inputs(model, target_relation) %}
  {% if check.skips(query, table_exists, full_refresh) %}
    {% do store_result('main', response=check.response()) %}
    {{ return(true) }}
  {% endif %}
  {{ return(false) }}
{% endmacro %}

{#-- The end of a build: grants, docs, post-hooks (inside the transaction, then those
     with `transaction: false`, as dbt orders them; see hooks.sql), then
     `adapter.maintenance().after_build`: an audited build is staged (published when its
     tests pass), and the `maintenance` config's thresholds are checked (after the
     publish, for a staged build). Returns the materialization's result.

       model_config       s3tables_model_config()'s answer
       target_relation    the model's table
       audit              s3tables_audit_build's answer (none: not audited; a snapshot's)
       old_relation       the relation found before the build (grants: should_revoke)
       full_refresh_mode  whether the build replaced the table (grants: should_revoke)
       core_result        the result of a dbt-core materialization that ended the build
                          itself (the snapshot's: grants, docs, hooks and commit done):
                          only adapter.maintenance().after_build follows, and
                          `core_result` is returned --#}
{% macro s3tables_finish_build(model_config, target_relation, audit, old_relation=none, full_refresh_mode=true, core_result=none) %}
  {% if core_result is none %}
    {% set revoke = should_revoke(old_relation, full_refresh_mode=full_refresh_mode) %}
    {% do apply_grants(target_relation, config.get('grants'), should_revoke=revoke) %}
    {% do persist_docs(target_relation, model) %}

    {{ s3tables_post_hooks() }}
  {% endif %}

  {#-- upstream_changes(): what the build read, recorded and in its adapter response. --#}
  {% set upstream_reads = adapter.upstream_reads().record(model, target_relation, audit) %}
  {% if upstream_reads %}
    {% set main_result = load_result('main') %}
    {% do store_result('main', response=adapter.upstream_reads().with_reads(main_result.response if main_result else none, upstream_reads)) %}
  {% endif %}
  {% do adapter.maintenance().after_build(target_relation, model_config, audit) %}
  {{ return(core_result if core_result is not none else {'relations': [target_relation]}) }}
{% endmacro %}
