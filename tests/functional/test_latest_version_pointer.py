"""dbt 1.12's latest version pointer: with `latest_version_pointer: {enabled: true}`, dbt
creates a view named for a versioned model over its latest version once that is built. On
the embedded catalog the view is built and reads the latest version; in a catalog under
S3 Tables' rules (which has no views) the latest version is refused before anything is
written, naming the key and the fix, where dbt would build it and then fail on the view."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.harness import local_catalog

VERSIONS_YML = """
models:
  - name: dim
    latest_version: 2
    config:
      latest_version_pointer:
        enabled: true
    versions:
      - v: 1
      - v: 2
"""
DIM_V1 = "{{ config(materialized='table') }} select 1 as id"
DIM_V2 = (
    "{{ config(materialized='incremental', unique_key='id') }} "
    "select 1 as id, 'two' as version_name"
)


class TestALatestVersionPointer:
    @pytest.fixture(scope="class")
    def models(self):
        return {"dim_v1.sql": DIM_V1, "dim_v2.sql": DIM_V2, "schema.yml": VERSIONS_YML}

    def test_the_view_reads_the_latest_version(self, project) -> None:
        for _ in range(2):  # built, then the incremental run and the view replaced
            assert len(run_dbt(["run"])) == 2
        rows = project.run_sql(f"select * from {project.test_schema}.dim", fetch="all")
        assert [tuple(row) for row in rows] == [(1, "two")]


class TestALatestVersionPointerUnderS3TablesRules:
    @pytest.fixture(scope="class")
    def models(self):
        return {"dim_v1.sql": DIM_V1, "dim_v2.sql": DIM_V2, "schema.yml": VERSIONS_YML}

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+catalog_name": "bucket_like"}}

    @pytest.fixture(scope="class", autouse=True)
    def write_catalogs(self, project, tmp_path_factory: pytest.TempPathFactory):
        folder = tmp_path_factory.mktemp("bucket_like")
        integration = {
            "name": "bucket_like_integration",
            "catalog_type": "local",
            "adapter_properties": {"warehouse": str(folder), "s3tables_rules": True},
        }
        catalogs = {
            "catalogs": [
                {
                    "name": "bucket_like",
                    "active_write_integration": "bucket_like_integration",
                    "write_integrations": [integration],
                }
            ]
        }
        Path(project.project_root, "catalogs.yml").write_text(yaml.safe_dump(catalogs))
        return folder

    def test_the_latest_version_is_refused_before_it_is_written(
        self, project, write_catalogs: Path
    ) -> None:
        _, output = run_dbt_and_capture(["run"], expect_pass=False)
        assert (
            "Model `dim` v2: its `latest_version_pointer` is a view dbt would create over "
            "this latest version once it is built, and S3 Tables has no views. Fix: set "
            "`latest_version_pointer: {enabled: false}`" in output
        ), output
        built = local_catalog(write_catalogs, "bucket_like").list_relations(project.test_schema)
        assert [r.name for r in built] == ["dim_v1"]
