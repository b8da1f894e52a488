"""The catalog each kind of node dbt names a relation for asks for, and how its error
names it: dbt's own node and export classes, and graph nodes as dictionaries."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from dbt.artifacts.resources.v1.saved_query import Export, ExportConfig
from dbt.contracts.graph.model_config import ModelConfig, SeedConfig, TestConfig
from dbt.node_types import NodeType

from dbt.adapters.s3tables.catalogs.node_catalog import node_label, requested_catalog


def node(resource_type: NodeType, name: str, config: object) -> SimpleNamespace:
    return SimpleNamespace(resource_type=resource_type, name=name, config=config)


MODEL_IN_MARTS = node(NodeType.Model, "orders", ModelConfig.from_dict({"catalog_name": "marts"}))
SEED = node(NodeType.Seed, "raw_orders", SeedConfig())
DATA_TEST = node(NodeType.Test, "not_null_orders_id", TestConfig())
EXPORT = Export(name="daily", config=ExportConfig(export_as="table", database="marts"))
GRAPH_NODE = {
    "resource_type": "snapshot",
    "name": "orders_snapshot",
    "config": {"catalog_name": "marts"},
}


@pytest.mark.parametrize(
    ("given", "database", "catalog"),
    [
        (MODEL_IN_MARTS, None, "marts"),
        # catalog_name wins over database, as it did before exports were handled.
        (MODEL_IN_MARTS, "raw", "marts"),
        (SEED, "raw", "raw"),
        (SEED, None, None),
        (DATA_TEST, None, None),
        # An export's config has no `get` and no catalog_name: its database names it.
        (EXPORT, "marts", "marts"),
        (EXPORT, None, None),
        (GRAPH_NODE, None, "marts"),
        (None, "raw", "raw"),
    ],
)
def test_every_kind_of_node_names_its_catalog(given, database, catalog) -> None:
    assert requested_catalog(given, database) == catalog


def test_errors_name_the_node_by_its_kind() -> None:
    assert node_label(MODEL_IN_MARTS) == "Model `orders`"
    assert node_label(DATA_TEST) == "Test `not_null_orders_id`"
    assert node_label(node(NodeType.SavedQuery, "q", None)) == "Saved query `q`"
    assert node_label(EXPORT) == "Saved query export `daily`"
    assert node_label(GRAPH_NODE) == "Snapshot `orders_snapshot`"
    assert node_label(None) == "A relation"
