"""The catalog a node asks for when dbt names its relation (`generate_database_name`).

dbt passes that macro every kind of node it gives a relation: models, seeds, snapshots,
data tests, analyses, hooks and functions (their config a dbt `NodeConfig`, read with
`get`), and a saved query's exports (an `Export`, whose `ExportConfig` has neither `get`
nor `catalog_name`: an export's catalog is its `database`). A project's macro may also
pass a graph node (a dictionary). Each is read here the way it is built.
"""

from __future__ import annotations

from collections.abc import Mapping

# The config key naming a node's catalog (a catalogs.yml integration).
CONFIG_KEY = "catalog_name"


def _field(thing: object, key: str) -> object:
    if isinstance(thing, Mapping):
        return thing.get(key)
    return getattr(thing, key, None)


def _config_value(config: object, key: str) -> object:
    """`key` of a node's config: a mapping, a dbt config (`get` reads its extra keys too),
    or a config without that key (an export's)."""
    if isinstance(config, Mapping):
        return config.get(key)
    get = getattr(config, "get", None)
    return get(key) if callable(get) else None


def requested_catalog(node: object, custom_database_name: object) -> object:
    """The catalog `node` names: its `catalog_name` config, else its `database` config
    (`custom_database_name`); unset (none) for the profile's catalog."""
    return _config_value(_field(node, "config"), CONFIG_KEY) or custom_database_name


def node_label(node: object) -> str:
    """The node as an error names it: "Model `orders`", "Saved query export `daily`"."""
    name = _field(node, "name")
    if not name:
        return "A relation"
    resource_type = _field(node, "resource_type")
    if resource_type:
        kind = str(resource_type).replace("_", " ").capitalize()
    elif hasattr(_field(node, "config"), "export_as"):
        kind = "Saved query export"
    else:
        kind = "Node"
    return f"{kind} `{name}`"
