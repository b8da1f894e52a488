"""dbt-tests-adapter's catalog suites: `dbt docs generate`, the single-relation catalog
entry and relation types.

Adapted: columns carry Spark's type names (seeds infer `bigint`, `string`, `timestamp`),
relation types are `table` and `view` (as dbt-spark names them; Spark has no
information_schema), a table's owner is the user Spark recorded (views have none), and a
table's statistics are its current Iceberg snapshot's row count, data-file count and
bytes, and what the table is (last change, snapshots, format version, partitioning, merge
mode). Spark has no materialized views.
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.basic import expected_catalog
from dbt.tests.adapter.basic.test_docs_generate import BaseDocsGenerate, BaseDocsGenReferences
from dbt.tests.adapter.basic.test_get_catalog_for_single_relation import (
    BaseGetCatalogForSingleRelation,
)
from dbt.tests.adapter.catalog import files
from dbt.tests.adapter.catalog.relation_types import CatalogRelationTypes
from dbt.tests.util import AnyInteger, AnyStringWith
from dbt_common.contracts.metadata import CatalogTable, ColumnMetadata, StatsItem, TableMetadata

from tests.functional.harness import spark_user


def table_stats(rows: int | None = None) -> dict:
    """Statistics of a table's current snapshot (file sizes vary from run to run)."""
    figures = {
        "row_count": ("Row count", "Rows in the current snapshot", rows or AnyInteger()),
        "num_files": ("Data files", "Data files in the current snapshot", AnyInteger()),
        "bytes": ("Size (bytes)", "Bytes of the current snapshot's files", AnyInteger()),
        "last_modified": (
            "Last Modified",
            "When the current snapshot was committed",
            AnyStringWith(" UTC"),
        ),
        "snapshots": ("Snapshots", "Snapshots kept in the table's history", AnyInteger()),
        "format_version": ("Iceberg format version", "The table's format", 2),
        "partitioning": ("Partitioned by", "The current partition spec", "unpartitioned"),
        "merge_mode": (
            "Merge mode",
            "How merges write (`write.merge.mode`)",
            "copy-on-write (Iceberg's default)",
        ),
    }
    stats = {
        key: {"id": key, "label": label, "value": value, "description": text, "include": True}
        for key, (label, text, value) in figures.items()
    }
    stats["has_stats"] = {
        "id": "has_stats",
        "label": "Has Stats?",
        "value": True,
        "description": "Indicates whether there are statistics for this table",
        "include": False,
    }
    return stats


SPARK_TYPES = {
    # Spark records the user who created a table as its `owner` property (views get none).
    "role": spark_user(),
    "id_type": "bigint",
    "text_type": "string",
    "time_type": "timestamp",
    "view_type": "view",
    "table_type": "table",
}


def views_unowned(catalog: dict) -> dict:
    """The expected catalog with no owner on views: Spark records one for tables only."""
    for node in [*catalog["nodes"].values(), *catalog["sources"].values()]:
        if node["metadata"]["type"] == "view":
            node["metadata"]["owner"] = None
    return catalog


class SparkCatalogTypes:
    @pytest.fixture(scope="class")
    def profile_user(self):
        return SPARK_TYPES["role"]


class TestDocsGenerate(SparkCatalogTypes, BaseDocsGenerate):
    @pytest.fixture(scope="class")
    def expected_catalog(self, project):
        return views_unowned(
            expected_catalog.base_expected_catalog(
                project,
                **SPARK_TYPES,
                model_stats=expected_catalog.no_stats(),
                seed_stats=table_stats(rows=1),
            )
        )


class TestDocsGenReferences(SparkCatalogTypes, BaseDocsGenReferences):
    @pytest.fixture(scope="class")
    def expected_catalog(self, project):
        return views_unowned(
            expected_catalog.expected_references_catalog(
                project,
                **SPARK_TYPES,
                bigint_type="bigint",
                model_stats=table_stats(),
                seed_stats=table_stats(rows=1),
                view_summary_stats=expected_catalog.no_stats(),
            )
        )


def single_relation_entry(project, name: str, kind: str, stats: dict) -> CatalogTable:
    types = {
        "id": "bigint",
        "first_name": "string",
        "email": "string",
        "ip_address": "string",
        "updated_at": "timestamp",
    }
    return CatalogTable(
        metadata=TableMetadata(
            type=kind,
            schema=project.test_schema,
            name=name,
            comment=None,
            owner=SPARK_TYPES["role"] if kind == "table" else None,
        ),
        columns={
            column: ColumnMetadata(type=kind_, index=index, name=column, comment=None)
            for index, (column, kind_) in enumerate(types.items(), start=1)
        },
        stats=stats,
    )


class TestGetCatalogForSingleRelation(BaseGetCatalogForSingleRelation):
    @pytest.fixture(scope="class")
    def expected_catalog_my_seed(self, project):
        stats = {
            key: StatsItem(**item)
            for key, item in table_stats(rows=1).items()
            if key != "has_stats"
        }
        stats["has_stats"] = StatsItem(
            id="has_stats", label="Has Stats?", value=True, include=False, description=None
        )
        return single_relation_entry(project, "my_seed", "table", stats)

    @pytest.fixture(scope="class")
    def expected_catalog_my_view_model(self, project):
        return single_relation_entry(project, "my_view_model", "view", {})


class TestCatalogRelationTypes(CatalogRelationTypes):
    @pytest.fixture(scope="class", autouse=True)
    def models(self):
        yield {"my_table.sql": files.MY_TABLE, "my_view.sql": files.MY_VIEW}

    @pytest.mark.parametrize(
        "node_name,relation_type",
        [
            ("seed.test.my_seed", "table"),
            ("model.test.my_table", "table"),
            ("model.test.my_view", "view"),
        ],
    )
    def test_relation_types_populate_correctly(self, docs, node_name: str, relation_type: str):
        """The base's test with Spark's relation types (`table`, `view`, not `BASE
        TABLE`, `VIEW`) and no materialized view, as the base's docstring asks."""
        super().test_relation_types_populate_correctly(docs, node_name, relation_type)
