"""dbt's `catalogs.yml` with several catalogs in one run, on the embedded default: raw data
seeded into catalog `raw` and read back as a source (`database: raw`), a staging view in the
profile's catalog, marts in catalog `marts` (S3 Tables' naming rules on) chosen with
`catalog_name`. Metadata listing, docs, source freshness and schema evolution work per
catalog; what each catalog holds is read back through its own PyIceberg catalog.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.harness import local_catalog

RAW_ORDERS_CSV = "id,customer,amount\n1,ann,10\n2,bob,20\n3,ann,30\n4,cid,40\n"

SOURCES_YML = """
sources:
  - name: shop
    database: raw
    schema: "{{ target.schema }}"
    freshness:
      warn_after: {count: 100000, period: day}
    tables:
      - name: raw_orders
"""

STG_ORDERS_SQL = """
{{ config(materialized='view') }}
select id, customer, amount from {{ source('shop', 'raw_orders') }}
"""

CUSTOMER_TOTALS_SQL = """
{{ config(materialized='table', catalog_name='marts') }}
select customer, sum(amount) as total from {{ ref('stg_orders') }} group by customer
"""

ORDERS_LATEST_SQL = """
{{ config(materialized='incremental', catalog_name='marts', unique_key='id',
          on_schema_change='append_new_columns') }}
select id, amount
{% if var('phase', 1) == 2 %}, upper(customer) as customer_code{% endif %}
from {{ ref('stg_orders') }}
"""

ORDERS_SNAPSHOT_SQL = """
{% snapshot orders_snapshot %}
{{ config(unique_key='id', strategy='check', check_cols=['amount'], catalog_name='marts') }}
select id, customer, amount from {{ source('shop', 'raw_orders') }}
{% endsnapshot %}
"""


@pytest.fixture(scope="class")
def catalog_folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("catalogs")
    return {name: root / name for name in ("raw", "marts")}


def catalogs_yml(folders: dict[str, Path]) -> dict:
    def catalog(name: str, **properties) -> dict:
        return {
            "name": name,
            "active_write_integration": f"{name}_integration",
            "write_integrations": [
                {
                    "name": f"{name}_integration",
                    "catalog_type": "local",
                    "table_format": "iceberg",
                    "adapter_properties": {"warehouse": str(folders[name]), **properties},
                }
            ],
        }

    return {"catalogs": [catalog("raw"), catalog("marts", s3tables_rules=True)]}


class TestCatalogsYml:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"raw_orders.csv": RAW_ORDERS_CSV}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SOURCES_YML,
            "stg_orders.sql": STG_ORDERS_SQL,
            "customer_totals.sql": CUSTOMER_TOTALS_SQL,
            "orders_latest.sql": ORDERS_LATEST_SQL,
        }

    @pytest.fixture(scope="class")
    def snapshots(self):
        return {"orders_snapshot.sql": ORDERS_SNAPSHOT_SQL}

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"seeds": {"+catalog_name": "raw"}}

    @pytest.fixture(scope="class", autouse=True)
    def write_catalogs(self, project, catalog_folders):
        Path(project.project_root, "catalogs.yml").write_text(
            yaml.safe_dump(catalogs_yml(catalog_folders))
        )

    def test_sources_models_and_docs_across_catalogs(self, project, catalog_folders) -> None:
        schema = project.test_schema
        run_dbt(["seed"])
        run_dbt(["run"])
        run_dbt(["snapshot"])

        # Each catalog holds what was written to it, and only that.
        raw, marts = (
            local_catalog(catalog_folders["raw"], "raw"),
            local_catalog(catalog_folders["marts"], "marts"),
        )
        assert [r.name for r in raw.list_relations(schema)] == ["raw_orders"]
        assert sorted(r.name for r in marts.list_relations(schema)) == [
            "customer_totals",
            "orders_latest",
            "orders_snapshot",
        ]
        snapshot_rows = project.run_sql(
            f"select count(*) from marts.`{schema}`.orders_snapshot where dbt_valid_to is null",
            fetch="one",
        )
        assert snapshot_rows[0] == 4
        default = project.adapter.iceberg.list_relations(schema)
        assert [(r.name, r.kind) for r in default] == [("stg_orders", "view")]
        totals = project.run_sql(
            f"select customer, total from marts.`{schema}`.customer_totals order by customer",
            fetch="all",
        )
        assert [tuple(row) for row in totals] == [("ann", 40), ("bob", 20), ("cid", 40)]

        # Schema evolution of a table in `marts` goes through that catalog.
        run_dbt(["run", "--select", "orders_latest", "--vars", "{phase: 2}"])
        columns = [c.name for c in marts.columns(schema, "orders_latest", "table")]
        assert columns == ["id", "amount", "customer_code"]
        codes = project.run_sql(
            f"select customer_code from marts.`{schema}`.orders_latest where id = 4", fetch="one"
        )
        assert codes[0] == "CID"

        # docs: every relation under its own catalog.
        run_dbt(["docs", "generate"])
        catalog = json.loads(Path(project.project_root, "target", "catalog.json").read_text())
        databases = {
            key.split(".")[-1]: node["metadata"].get("database")
            for key, node in {**catalog["nodes"], **catalog["sources"]}.items()
        }
        assert databases == {
            "orders_snapshot": "marts",
            "raw_orders": "raw",
            "stg_orders": None,
            "customer_totals": "marts",
            "orders_latest": "marts",
        }

    def test_source_freshness_reads_the_source_catalog(self, project) -> None:
        run_dbt(["seed"])
        run_dbt(["source", "freshness"])
        sources = json.loads(Path(project.project_root, "target", "sources.json").read_text())
        [result] = sources["results"]
        assert result["status"] == "pass"
        assert result["max_loaded_at"]

    def test_s3tables_rules_apply_per_catalog(self, project) -> None:
        # The profile's catalog takes views; `marts` follows S3 Tables' rules.
        (Path(project.project_root) / "models" / "marts_view.sql").write_text(
            "{{ config(materialized='view', catalog_name='marts') }} select 1 as id"
        )
        try:
            _, output = run_dbt_and_capture(["run", "--select", "marts_view"], expect_pass=False)
        finally:
            (Path(project.project_root) / "models" / "marts_view.sql").unlink()
        assert "Model `marts_view`" in output and "S3 Tables has no views" in output
        # The same view in the profile's catalog builds.
        (Path(project.project_root) / "models" / "default_view.sql").write_text(
            "{{ config(materialized='view') }} select 1 as id"
        )
        try:
            run_dbt(["run", "--select", "default_view"])
        finally:
            (Path(project.project_root) / "models" / "default_view.sql").unlink()

    def test_upstream_changes_reads_a_source_in_another_catalog(self, project) -> None:
        """A model in `marts` reads only the new rows of a source in `raw`; the read is
        recorded under the source's own catalog, in the model's commit in `marts`."""
        schema = project.test_schema
        model = Path(project.project_root) / "models" / "orders_changes.sql"
        model.write_text(
            "{{ config(materialized='incremental', catalog_name='marts') }}\n"
            "select id, amount from {{ upstream_changes(source('shop', 'raw_orders')) }}"
        )
        try:
            run_dbt(["seed"])
            run_dbt(["run", "--select", "orders_changes"])
            project.run_sql(f"insert into raw.`{schema}`.raw_orders values (5, 'dan', 50)")
            run_dbt(["run", "--select", "orders_changes"])
        finally:
            model.unlink()
        ids = project.run_sql(
            f"select id from marts.`{schema}`.orders_changes order by id", fetch="all"
        )
        assert [row[0] for row in ids] == [1, 2, 3, 4, 5]
        results = json.loads(Path(project.project_root, "target", "run_results.json").read_text())
        [read] = results["results"][0]["adapter_response"]["upstream_reads"]
        assert (read["upstream"], read["read"], read["rows"]) == (
            f"raw.{schema}.raw_orders",
            "changes",
            1,
        )
        head = project.run_sql(
            f"select summary from marts.`{schema}`.orders_changes.snapshots "
            "order by committed_at desc limit 1",
            fetch="one",
        )
        assert f"dbt.read.raw.{schema}.raw_orders" in head[0]
