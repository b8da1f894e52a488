"""`dbt docs generate` and `get_catalog_for_single_relation`: metadata read through PyIceberg.

Expectations come from an independent path: Spark's `DESCRIBE` for columns and the
Iceberg `<table>.snapshots` metadata table (read by Spark) for the statistics.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from dbt.tests.adapter.basic.test_get_catalog_for_single_relation import (
    BaseGetCatalogForSingleRelation,
)
from dbt.tests.util import get_connection, run_dbt
from dbt_common.contracts.metadata import CatalogTable, ColumnMetadata, StatsItem, TableMetadata

from tests.functional.harness import described_columns, latest_snapshot_summary, spark_user

PEOPLE_CSV = "id,name,joined\n1,Ann,2024-01-01\n2,Bob,2024-02-01\n3,Cid,2024-03-01\n"

PEOPLE_TABLE_SQL = """
{{ config(materialized='table') }}
select id, name, joined, id * 10 as score from {{ ref('people') }} where id >= 2
"""

PEOPLE_VIEW_SQL = """
{{ config(materialized='view') }}
select id, upper(name) as name_upper, cast(id as double) / 2 as half
from {{ ref('people_table') }}
"""


def spark_catalog_table(project, name: str, kind: str) -> CatalogTable:
    """The CatalogTable the adapter should report, built from Spark's view of the table."""
    schema = project.test_schema
    columns = {
        column: ColumnMetadata(type=data_type, index=index, name=column, comment=comment)
        for index, (column, data_type, comment) in enumerate(
            described_columns(project, f"`{schema}`.`{name}`"), start=1
        )
    }
    stats: dict[str, StatsItem] = {}
    if kind == "table":
        summary = latest_snapshot_summary(project, f"`{schema}`.`{name}`")
        stats = {
            "row_count": StatsItem(
                id="row_count",
                label="Row count",
                value=int(summary["total-records"]),
                include=True,
                description="Rows in the current snapshot",
            ),
            "num_files": StatsItem(
                id="num_files",
                label="Data files",
                value=int(summary["total-data-files"]),
                include=True,
                description="Data files in the current snapshot",
            ),
            "bytes": StatsItem(
                id="bytes",
                label="Size (bytes)",
                value=int(summary["total-files-size"]),
                include=True,
                description="Bytes of the current snapshot's files",
            ),
        }
        stats.update(facts_read_by_spark(project, f"`{schema}`.`{name}`"))
        stats["has_stats"] = StatsItem(
            id="has_stats", label="Has Stats?", value=True, include=False, description=None
        )
    return CatalogTable(
        metadata=TableMetadata(
            type=kind,
            schema=schema,
            name=name,
            owner=spark_user() if kind == "table" else None,
        ),
        columns=columns,
        stats=stats,
    )


def facts_read_by_spark(project, table: str) -> dict[str, StatsItem]:
    """The facts of an unpartitioned v2 table without `write.merge.mode`: the last change
    and snapshot count read through Spark's `snapshots` metadata table."""
    committed, count = project.run_sql(
        f"select max(committed_at), count(*) from {table}.snapshots", fetch="one"
    )
    facts = [
        (
            "last_modified",
            "Last Modified",
            committed.strftime("%Y-%m-%d %H:%M:%S UTC"),
            "When the current snapshot was committed",
        ),
        ("snapshots", "Snapshots", count, "Snapshots kept in the table's history"),
        ("format_version", "Iceberg format version", 2, "The table's format"),
        ("partitioning", "Partitioned by", "unpartitioned", "The current partition spec"),
        (
            "merge_mode",
            "Merge mode",
            "copy-on-write (Iceberg's default)",
            "How merges write (`write.merge.mode`)",
        ),
    ]
    return {
        key: StatsItem(id=key, label=label, value=value, include=True, description=text)
        for key, label, value, text in facts
    }


# What the docs site shows of a table besides its figures.
EVENTS_SQL = """
{{ config(
    materialized='incremental', unique_key='id', format_version=3,
    partition_by=['days(joined)', 'bucket(4, id)']
) }}
select id, name, joined from {{ ref('people') }}
"""


class TestDocsShowWhatATableIs:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"people.csv": PEOPLE_CSV}

    @pytest.fixture(scope="class")
    def models(self):
        return {"people_events.sql": EVENTS_SQL}

    def test_docs_show_partitioning_format_merge_mode_owner_and_history(self, project):
        run_dbt(["seed"])
        run_dbt(["run"])
        run_dbt(["run"])
        run_dbt(["docs", "generate"])
        catalog = json.loads((Path(project.project_root) / "target" / "catalog.json").read_text())
        events = catalog["nodes"]["model.test.people_events"]
        stats = {key: item["value"] for key, item in events["stats"].items()}
        table = f"`{project.test_schema}`.`people_events`"
        committed, count = project.run_sql(
            f"select max(committed_at), count(*) from {table}.snapshots", fetch="one"
        )
        assert count >= 2  # the create and the merge
        assert stats["snapshots"] == count
        assert stats["last_modified"] == committed.strftime("%Y-%m-%d %H:%M:%S UTC")
        assert stats["format_version"] == 3
        assert stats["partitioning"] == "day(joined), bucket(4, id)"
        assert stats["merge_mode"] == "merge-on-read"
        # Spark records the user who created the table (`owner` is reserved to it).
        assert events["metadata"]["owner"] == spark_user()


class TestDocsGenerateCatalog:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"people.csv": PEOPLE_CSV}

    @pytest.fixture(scope="class")
    def models(self):
        return {"people_table.sql": PEOPLE_TABLE_SQL, "people_view.sql": PEOPLE_VIEW_SQL}

    def test_docs_generate_reads_iceberg_metadata(self, project):
        assert len(run_dbt(["seed"])) == 1
        assert len(run_dbt(["run"])) == 2
        run_dbt(["docs", "generate"])

        catalog_path = Path(project.project_root) / "target" / "catalog.json"
        catalog = json.loads(catalog_path.read_text(encoding="utf-8"))
        nodes = catalog["nodes"]
        assert catalog.get("errors") in (None, [])
        assert set(nodes) == {
            "seed.test.people",
            "model.test.people_table",
            "model.test.people_view",
        }

        schema = project.test_schema
        table = nodes["model.test.people_table"]
        assert table["metadata"]["type"] == "table"
        assert table["metadata"]["schema"] == schema
        assert table["metadata"]["name"] == "people_table"
        stats = table["stats"]
        assert stats["row_count"]["value"] == 2
        assert stats["num_files"]["value"] >= 1
        assert stats["bytes"]["value"] > 0
        assert stats["has_stats"]["value"] is True
        # The same figures as the snapshot summary Spark reads from the table's metadata.
        summary = latest_snapshot_summary(project, f"`{schema}`.`people_table`")
        assert stats["row_count"]["value"] == int(summary["total-records"])
        assert stats["num_files"]["value"] == int(summary["total-data-files"])
        assert stats["bytes"]["value"] == int(summary["total-files-size"])
        table_columns = {c["name"]: c["type"] for c in table["columns"].values()}
        assert table_columns == {
            "id": "bigint",
            "name": "string",
            "joined": "date",
            "score": "bigint",
        }

        seed = nodes["seed.test.people"]
        assert seed["metadata"]["type"] == "table"
        assert seed["stats"]["row_count"]["value"] == 3

        view = nodes["model.test.people_view"]
        assert view["metadata"]["type"] == "view"
        assert "row_count" not in view["stats"]
        view_columns = {c["name"]: (c["type"], c["index"]) for c in view["columns"].values()}
        assert view_columns == {
            "id": ("bigint", 1),
            "name_upper": ("string", 2),
            "half": ("double", 3),
        }

        # Column names and types agree with Spark's own DESCRIBE of each relation.
        for unique_id, name in [
            ("model.test.people_table", "people_table"),
            ("model.test.people_view", "people_view"),
            ("seed.test.people", "people"),
        ]:
            listed = sorted(nodes[unique_id]["columns"].values(), key=lambda c: c["index"])
            assert [(c["name"], c["type"]) for c in listed] == [
                (n, t) for n, t, _ in described_columns(project, f"`{schema}`.`{name}`")
            ]

    def test_single_relation_matches_docs(self, project):
        run_dbt(["seed"])
        run_dbt(["run"])
        adapter = project.adapter
        with get_connection(adapter):
            table = adapter.get_catalog_for_single_relation(
                adapter.Relation.create(schema=project.test_schema, identifier="people_table")
            )
            view = adapter.get_catalog_for_single_relation(
                adapter.Relation.create(schema=project.test_schema, identifier="people_view")
            )
            missing = adapter.get_catalog_for_single_relation(
                adapter.Relation.create(schema=project.test_schema, identifier="no_such_table")
            )
        assert missing is None

        assert table is not None
        assert table.metadata.type == "table"
        assert {n: c.type for n, c in table.columns.items()} == {
            "id": "bigint",
            "name": "string",
            "joined": "date",
            "score": "bigint",
        }
        assert [c.index for c in table.columns.values()] == [1, 2, 3, 4]
        assert table.stats["row_count"].value == 2
        assert table == spark_catalog_table(project, "people_table", "table")

        assert view is not None
        assert view.metadata.type == "view"
        assert {n: c.type for n, c in view.columns.items()} == {
            "id": "bigint",
            "name_upper": "string",
            "half": "double",
        }
        assert view == spark_catalog_table(project, "people_view", "view")

        # After a rebuild the figures follow the new current snapshot.
        run_dbt(["run", "--select", "people_table"])
        with get_connection(adapter):
            rebuilt = adapter.get_catalog_for_single_relation(
                adapter.Relation.create(schema=project.test_schema, identifier="people_table")
            )
        assert rebuilt == spark_catalog_table(project, "people_table", "table")
        assert rebuilt.stats["row_count"].value == 2


class TestGetCatalogForSingleRelation(BaseGetCatalogForSingleRelation):
    """dbt-tests-adapter's test, with expectations read through Spark.

    The base test asks for `expected_catalog_my_seed` and `expected_catalog_my_view_model`
    as fixtures, and pytest evaluates them before the test body runs `dbt seed`: at that
    point neither relation exists, so Spark has no schema or snapshot to read. The fixtures
    therefore return builders, and the overridden test below (the base test's steps, in
    order) calls them once each relation has been built.
    """

    @pytest.fixture(scope="class")
    def expected_catalog_my_seed(self, project) -> Callable[[], CatalogTable]:
        return lambda: spark_catalog_table(project, "my_seed", "table")

    @pytest.fixture(scope="class")
    def expected_catalog_my_view_model(self, project) -> Callable[[], CatalogTable]:
        return lambda: spark_catalog_table(project, "my_view_model", "view")

    def test_get_catalog_for_single_relation(
        self, project, expected_catalog_my_seed, expected_catalog_my_view_model
    ):
        results = run_dbt(["seed"])
        assert len(results) == 1

        my_seed_relation = self.get_relation_for_identifier(project, "my_seed")
        assert my_seed_relation is not None
        with get_connection(project.adapter):
            actual_catalog_my_seed = project.adapter.get_catalog_for_single_relation(
                my_seed_relation
            )
        expected_seed = expected_catalog_my_seed()
        # Guard the expectation itself: the seed has 5 columns and one row.
        assert [c.type for c in expected_seed.columns.values()] == [
            "bigint",
            "string",
            "string",
            "string",
            "timestamp",
        ]
        assert expected_seed.stats["row_count"].value == 1
        assert expected_seed.stats["bytes"].value > 0
        assert actual_catalog_my_seed == expected_seed

        results = run_dbt(["run"])
        assert len(results) == 2

        my_view_model_relation = self.get_relation_for_identifier(project, "my_view_model")
        assert my_view_model_relation is not None
        with get_connection(project.adapter):
            actual_catalog_my_view_model = project.adapter.get_catalog_for_single_relation(
                my_view_model_relation
            )
        expected_view = expected_catalog_my_view_model()
        assert list(expected_view.columns) == [
            "id",
            "first_name",
            "email",
            "ip_address",
            "updated_at",
        ]
        assert actual_catalog_my_view_model == expected_view
