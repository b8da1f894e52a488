-- persist_docs: the model and column descriptions are stored as Iceberg comments.
{%- set summary = ref('customer_order_summary') %}
{%- set model_node = graph.nodes.values() | selectattr('name', 'equalto', 'customer_order_summary') | first if execute else none %}
{%- set described = {} %}
{%- if execute %}
  {%- for row in run_query('describe table extended ' ~ summary) %}
    {%- do described.update({row[0]: row[2] if row[0] != 'Comment' else row[1]}) %}
  {%- endfor %}
{%- endif %}
{%- set expected = {'Comment': model_node.description if model_node else ''} %}
{%- if model_node %}
  {%- for name, column in model_node.columns.items() %}
    {%- do expected.update({name: column.description}) %}
  {%- endfor %}
{%- endif %}
with checks as (
  select * from values
  {%- for name, text in expected.items() %}
    ('{{ name }}', '{{ text | replace("'", "\\'") }}', {{ "'" ~ (described[name] | replace("'", "\\'")) ~ "'" if described.get(name) is not none else 'null' }}){{ ',' if not loop.last }}
  {%- endfor %}
    as t(item, expected, actual)
)

select * from checks where not (actual <=> expected)
