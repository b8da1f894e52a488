"""`dbt docs generate` and `get_catalog_for_single_relation`: metadata read through PyIceberg.

Expectations come from an independent path: Spark's `DESCRIBE` for columns and the
Iceberg `<table>.snapshots` metadata table (read by Spark) for the statistics; dbt-spark's
own catalog of the same tables for the fields it fills; and the model's page of the
generated docs site as headless Chromium renders it, for what a person reads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from dbt.adapters.spark.impl import SparkAdapter
from dbt.tests.adapter.basic.test_get_catalog_for_single_relation import (
    BaseGetCatalogForSingleRelation,
)
from dbt.tests.util import get_connection, run_dbt
from dbt_common.contracts.metadata import CatalogTable, ColumnMetadata, StatsItem, TableMetadata

from tests.functional.docs_site import NodePage, rendered_dom, screenshot, served
from tests.functional.harness import (
    described_columns,
    latest_snapshot_summary,
    spark_user,
    table_comment,
    write_profiles,
)

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
            "rows": StatsItem(
                id="rows",
                label="Rows",
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
                label="Size",
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


# What the docs site shows of a table besides its figures: a partitioned v3 table, merged
# into once, its description persisted as the Iceberg table's comment.
EVENTS_SQL = """
{{ config(
    materialized='incremental', unique_key='id', format_version=3,
    partition_by=['days(joined)', 'bucket(4, id)'],
    persist_docs={'relation': true, 'columns': true}
) }}
select id, name, joined from {{ ref('people') }}
"""

EVENTS_DESCRIPTION = "People as they joined, one row per person"

EVENTS_YML = f"""
version: 2
models:
  - name: people_events
    description: "{EVENTS_DESCRIPTION}"
    columns:
      - name: id
        description: "The person's id"
"""


def dbt_spark_catalog(project, folder: Path) -> dict[str, Any]:
    """The catalog.json dbt-spark itself writes for the project: its adapter (`type: spark`,
    `method: session`) run in this process, where Spark's `getOrCreate` hands it the
    SparkSession this adapter started, so it reads the same Iceberg tables."""
    root = Path(project.project_root)
    profile = yaml.safe_load((root / "dbt_project.yml").read_text())["profile"]
    output = {"type": "spark", "method": "session", "host": "localhost"}
    write_profiles(folder, profile, {**output, "schema": project.test_schema})
    # Its own target folder: the adapter's catalog.json stays as it wrote it.
    target = folder / "target"
    args = ["--profiles-dir", str(folder), "--target-path", str(target)]
    run_dbt(["docs", "generate", "--no-compile", *args])
    return json.loads((target / "catalog.json").read_text())


class TestDocsShowWhatATableIs:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"people.csv": PEOPLE_CSV}

    @pytest.fixture(scope="class")
    def models(self):
        return {"people_events.sql": EVENTS_SQL, "people_events.yml": EVENTS_YML}

    @pytest.fixture(scope="class")
    def catalog(self, project) -> dict[str, Any]:
        """The docs catalog once the table was created and then merged into."""
        run_dbt(["seed"])
        run_dbt(["run"])
        run_dbt(["run"])
        run_dbt(["docs", "generate"])
        return json.loads((Path(project.project_root) / "target" / "catalog.json").read_text())

    def test_docs_show_partitioning_format_merge_mode_owner_and_history(self, project, catalog):
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
        assert stats["rows"] == 3  # exact: deletion vectors are subtracted on v3
        # Spark records the user who created the table (`owner` is reserved to it).
        assert events["metadata"]["owner"] == spark_user()
        # persist_docs made the description the Iceberg table's comment.
        assert table_comment(project, table) == EVENTS_DESCRIPTION
        assert events["metadata"]["comment"] == EVENTS_DESCRIPTION
        assert events["columns"]["id"]["comment"] == "The person's id"

    def test_catalog_holds_every_field_dbt_spark_fills(self, project, catalog, tmp_path):
        ours = catalog["nodes"]
        theirs = dbt_spark_catalog(project, tmp_path)["nodes"]
        assert set(theirs) == set(ours) == {"seed.test.people", "model.test.people_events"}
        for unique_id, their in theirs.items():
            our = ours[unique_id]
            filled = {key: value for key, value in their["metadata"].items() if value is not None}
            assert filled.items() <= our["metadata"].items(), unique_id
            assert set(their["stats"]) <= set(our["stats"]), unique_id
            # dbt-spark numbers columns from 0, dbt's other adapters and this one from 1.
            assert [(c["name"], c["type"], c["index"] + 1) for c in their["columns"].values()] == [
                (c["name"], c["type"], c["index"]) for c in our["columns"].values()
            ]
            for name, column in their["columns"].items():
                assert column["comment"] in (None, our["columns"][name]["comment"])

        # What dbt-spark leaves out of an Iceberg table's entry and this adapter fills, as
        # docs/dbt-features.md says (update it when dbt-spark fills one of them).
        their, our = theirs["model.test.people_events"], ours["model.test.people_events"]
        assert their["metadata"]["comment"] is None
        assert our["metadata"]["comment"] == EVENTS_DESCRIPTION
        assert their["columns"]["id"]["comment"] is None
        assert our["columns"]["id"]["comment"] == "The person's id"
        assert set(their["stats"]) == {"has_stats"}  # Spark has no statistics row for Iceberg
        assert their["stats"]["has_stats"]["value"] is False

        # Every field dbt-spark's catalog query can return at all: the table's type, schema,
        # name, comment and owner (its database is none, as here for the profile's catalog),
        # and the `bytes` and `rows` of Spark's statistics of non-Iceberg tables.
        fields = SparkAdapter.COLUMN_NAMES
        table_fields = {f.removeprefix("table_") for f in fields if f.startswith("table_")}
        assert table_fields - {"database"} == {"type", "schema", "name", "comment", "owner"}
        assert all(our["metadata"][key] is not None for key in table_fields - {"database"})
        assert our["metadata"]["database"] is None
        stats_ids = {f.split(":")[1] for f in fields if f.startswith("stats:")}
        assert stats_ids == {"bytes", "rows"}
        assert stats_ids <= set(our["stats"])

    def test_rendered_page_shows_what_the_table_is(self, project, catalog):
        events = catalog["nodes"]["model.test.people_events"]
        stats = {key: item["value"] for key, item in events["stats"].items()}
        url_path = "#!/model/model.test.people_events"
        picture = Path(project.project_root) / "docs-page.png"
        with served(Path(project.project_root) / "target") as base:
            page = NodePage(rendered_dom(f"{base}/{url_path}"))
            screenshot(f"{base}/{url_path}", picture)
        print(f"The page as Chromium drew it: {picture}")

        details = dict(page.details)
        shown = {
            "Owner": spark_user(),
            "Type": "table",
            "Last Modified": stats["last_modified"],
            "Snapshots": str(stats["snapshots"]),
            "Iceberg format version": "3",
            "Partitioned by": "day(joined), bucket(4, id)",
            "Merge mode": "merge-on-read",
            "Rows": "3",
            "Data files": str(stats["num_files"]),
        }
        assert {label: details.get(label) for label in shown} == shown, page.details
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", details["Last Modified"])
        # dbt docs writes the `bytes` figure as a size.
        assert re.fullmatch(r"\d+ (bytes|KB|MB)", details["Size"]), details["Size"]
        # Each figure's description is its hover text.
        for item in events["stats"].values():
            if item["include"]:
                assert page.hover[item["label"]] == item["description"]
        # dbt docs shows the model's description (the table's comment, by persist_docs);
        # it does not show the catalog's comment itself.
        assert page.description == EVENTS_DESCRIPTION == events["metadata"]["comment"]


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
        assert stats["rows"]["value"] == 2
        assert stats["num_files"]["value"] >= 1
        assert stats["bytes"]["value"] > 0
        assert stats["has_stats"]["value"] is True
        # The same figures as the snapshot summary Spark reads from the table's metadata.
        summary = latest_snapshot_summary(project, f"`{schema}`.`people_table`")
        assert stats["rows"]["value"] == int(summary["total-records"])
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
        assert seed["stats"]["rows"]["value"] == 3

        view = nodes["model.test.people_view"]
        assert view["metadata"]["type"] == "view"
        assert "rows" not in view["stats"]
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
        assert table.stats["rows"].value == 2
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
        assert rebuilt.stats["rows"].value == 2


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
        assert expected_seed.stats["rows"].value == 1
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
