"""integration_tests/ on Spark 4.1 through a REST catalog builds the same tables as on Spark
3.5 in the embedded catalog (the default): one build per pair of axes, the Spark line and
the catalog.

The project is built twice by Spark 4.1's dbt (`.venv-spark41`, pyspark 4.1: `make spark41`)
with `catalog_type: rest` against Apache Iceberg's own REST catalog test server
(`org.apache.iceberg.rest.RESTCatalogServer`, from iceberg-open-api's test fixtures; `make
emulators` installs it; tests/functional/emulators.py says how it is set up), as the
`integration_builds` fixture (tests/conftest.py) builds it on Spark 3.5 in the embedded
catalog: from an empty catalog, then an incremental build with `schema_phase: 2` and the S3
Tables rules on. After each build, every table's schema and rows, read with the adapter's
own PyIceberg catalog object on the server (`catalog_config_for` + `IcebergCatalog`, from
the same kind of profile), must be the same as the reference's. The second build runs the
project's data tests on Spark 4.1 and the server too, those on snapshots (`.history`) and
`tblproperties` included: the server keeps them, as a real catalog does.

pytest runs in `.venv` (Spark 3.5) like the rest of the suite (`make test`, or this folder
alone with `make test-spark41`): the Spark 3.5 builds are `.venv`'s dbt, the Spark 4.1 ones
`.venv-spark41`'s; each build is a dbt subprocess with its own JVM.
"""

from __future__ import annotations

from pathlib import Path

import pyspark

from dbt.adapters.s3tables.catalogs.config import catalog_config_for
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.credentials import S3TablesCredentials
from tests.functional.emulators import iceberg_rest_server
from tests.functional.harness import (
    INTEGRATION_PROJECT,
    IntegrationBuilds,
    assert_integration_tables_match,
    write_profiles,
)

SCHEMA = "analytics"


def test_integration_project_gives_the_same_tables_on_spark_4_1_through_a_rest_catalog(
    tmp_path: Path, spark41_dbt: Path, integration_builds: IntegrationBuilds
) -> None:
    assert pyspark.__version__.startswith("3.5."), f"the reference is pyspark {pyspark.__version__}"
    warehouse = tmp_path / "rest-warehouse"
    with iceberg_rest_server(warehouse, tmp_path / "server.log") as uri:
        keys = {
            "schema": SCHEMA,
            "catalog_type": "rest",
            "catalog_uri": uri,
            "warehouse": warehouse.as_uri(),
        }
        output = {
            "type": "s3tables",
            "method": "session",
            "master": "local[2]",
            "threads": 4,
            # As the project's own profile reads it (build_integration_project sets it).
            "s3tables_rules": "{{ (env_var('DBT_S3TABLES_RULES') | lower == 'true') | as_bool }}",
            **keys,
        }
        profiles = tmp_path / "profiles"
        write_profiles(profiles, "integration_tests", output, target="rest")
        catalog = IcebergCatalog(catalog_config_for(S3TablesCredentials.from_dict(keys)))
        assert catalog.config.catalog_type == "rest"
        _, second = assert_integration_tables_match(
            tmp_path,
            spark41_dbt,
            integration_builds,
            "Spark 4.1 through a REST catalog",
            "Spark 3.5 in the embedded catalog",
            profiles_dir=profiles,
            catalog=catalog,
        )
        # The data tests reading what only a real catalog keeps ran (and passed).
        ran = {
            r["unique_id"].split(".")[2]
            for r in second["results"]
            if r["unique_id"].startswith("test.")
        }
        assert {
            "orders_partitioned_properties",
            "customer_tiers_upserted",
            "orders_appended_batches",
        } <= ran
        # orders_appended: created by the first build with the first orders, the rest
        # appended by the second (INSERT INTO: a snapshot of its own).
        table = catalog.load_table(SCHEMA, "orders_appended")
        assert len(table.snapshots()) > 1, table.snapshots()
        current = table.current_snapshot()
        assert current is not None and current.summary is not None
        assert current.summary.operation.value == "append", current.summary
        orders = len((INTEGRATION_PROJECT / "seeds" / "orders.csv").read_text().splitlines()) - 1
        assert int(current.summary["total-records"]) == orders, current.summary
