{#-- The node's config keys that nothing reads (see config_keys.py): a warning each, or one
     error with the flag `s3tables_fail_on_unknown_config_keys`, before anything is
     written. dbt keeps the keys it does not know for the node's type in its config
     object's `extra` (`config.model` is the node; the `model` dict merges them in). --#}
{% macro s3tables_check_config_keys() %}
  {% do adapter.check_config_keys(model, config.model.config, var('s3tables_known_config_keys', none)) %}
{% endmacro %}

{#-- The model's config, every key checked (see model_config.py), keys nothing reads first. --#}
{% macro s3tables_model_config() %}
  {% do s3tables_check_config_keys() %}
  {{ return(adapter.model_build(model).config) }}
{% endmacro %}
