{#-- A model's hooks. dbt's run_hooks, without the `commit;` it sends before the first
     hook outside the transaction: Spark has no transactions (each statement commits on
     its own) and no COMMIT statement. Every materialization here runs the hooks as
     dbt's own do: `transaction: false` pre-hooks first, then the others; post-hooks
     inside the transaction, then the `transaction: false` ones (s3tables_pre_hooks,
     s3tables_post_hooks). --#}
{% macro run_hooks(hooks, inside_transaction=True) %}
  {% for hook in hooks | selectattr('transaction', 'equalto', inside_transaction) %}
    {% set rendered = render(hook.get('sql')) | trim %}
    {% if (rendered | length) > 0 %}
      {% call statement(auto_begin=inside_transaction) %}
        {{ rendered }}
      {% endcall %}
    {% endif %}
  {% endfor %}
{% endmacro %}

{% macro s3tables_pre_hooks() %}
  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}
{% endmacro %}

{#-- A model's `sql_header`, run before anything reads the model's SQL (the connection's
     session keeps what it sets, as dbt-spark's, which sends it with its CREATE): the
     statements this adapter writes with are its own, and carried none of it. --#}
{% macro s3tables_sql_header() %}
  {%- set sql_header = config.get('sql_header') -%}
  {%- if sql_header -%}
    {% call statement('sql_header') %}{{ sql_header }}{% endcall %}
  {%- endif -%}
{% endmacro %}

{% macro s3tables_post_hooks() %}
  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {{ run_hooks(post_hooks, inside_transaction=False) }}
{% endmacro %}
