"""catalogs.yml integrations as catalogs (checks and defaults), and the set of catalogs a
run uses, found by the database relations carry."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from dbt.adapters.catalogs import CatalogWriteIntegrationConfig
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.s3tables.catalogs.catalog_set import CatalogSet
from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.integrations import (
    CATALOG_INTEGRATIONS,
    catalog_config_from_integration,
)
from dbt.adapters.s3tables.catalogs.jars import ICEBERG_AWS_BUNDLE, JarSources
from dbt.adapters.s3tables.engines import spark_session
from dbt.adapters.s3tables.engines.spark_session import get_or_create_session
from dbt.adapters.s3tables.errors import CatalogsYmlError, UnknownCatalogError
from dbt.adapters.s3tables.impl import S3TablesAdapter

ARN = "arn:aws:s3tables:eu-west-1:111122223333:bucket/marts"


def integration(name: str = "marts", catalog_type: str = "local", **config) -> object:
    return CatalogWriteIntegrationConfig(name=name, catalog_type=catalog_type, **config)


def test_the_integration_types_dbt_users_write() -> None:
    assert sorted(i.catalog_type for i in CATALOG_INTEGRATIONS) == [
        "glue",
        "iceberg_rest",
        "local",
        "s3_tables",
    ]
    assert all(i.allows_writes and i.table_format == "iceberg" for i in CATALOG_INTEGRATIONS)


def test_a_local_catalog_resolves_its_warehouse_against_the_project(tmp_path: Path) -> None:
    config = catalog_config_from_integration(
        integration(adapter_properties={"warehouse": "lake/marts"}), str(tmp_path)
    )
    assert (config.name, config.catalog_type) == ("marts", "local")
    assert config.warehouse == str(tmp_path / "lake" / "marts")
    assert config.s3tables_rules is False


def test_an_external_volume_is_the_warehouse(tmp_path: Path) -> None:
    config = catalog_config_from_integration(
        integration(external_volume=str(tmp_path / "vol")), str(tmp_path)
    )
    assert config.warehouse == str(tmp_path / "vol")


def test_s3_tables_reads_the_bucket_arn_and_turns_its_rules_on() -> None:
    config = catalog_config_from_integration(
        integration(catalog_type="s3_tables", adapter_properties={"table_bucket_arn": ARN}), None
    )
    assert config.catalog_type == "s3tables"
    assert (config.warehouse, config.region, config.s3tables_rules) == (ARN, "eu-west-1", True)
    settings = config.catalog_spark_settings()
    assert settings["spark.sql.catalog.marts.rest.signing-name"] == "s3tables"
    # A declared catalog never becomes Spark's default catalog.
    assert "spark.sql.defaultCatalog" not in settings


@pytest.mark.parametrize(
    ("config", "key", "words"),
    [
        (integration(name="my-marts"), "name", "plain identifier"),
        (integration(catalog_type="unity"), "catalog_type", "s3_tables"),
        (integration(table_format="delta"), "table_format", "`delta`"),
        (
            integration(adapter_properties={"warehous": "x"}),
            "adapter_properties.warehous",
            "not a key",
        ),
        (
            integration(catalog_type="s3_tables", adapter_properties={}),
            "adapter_properties.table_bucket_arn",
            "is required",
        ),
        (
            integration(catalog_type="iceberg_rest", adapter_properties={"warehouse": "w"}),
            "adapter_properties.catalog_uri",
            "is required",
        ),
        (
            integration(catalog_type="glue", adapter_properties={"region": "eu-west-1"}),
            "adapter_properties.warehouse",
            "Glue catalog id",
        ),
        (
            integration(adapter_properties={"catalog_lock_timeout": "soon"}),
            "adapter_properties.catalog_lock_timeout",
            "has the wrong type ('soon' is not of type 'integer')",
        ),
    ],
)
def test_bad_integrations_name_the_catalog_the_key_and_the_fix(config, key, words) -> None:
    with pytest.raises(CatalogsYmlError) as error:
        catalog_config_from_integration(config, None)
    message = str(error.value)
    assert f"catalogs.yml catalog `{config.name}`, key `{key}`" in message
    assert words in message and "Fix:" in message


# ── catalogs.yml v2 (dbt 1.12, `flags: {use_catalogs_v2: true}`) ──


def v2_catalog(
    catalog_type: str, block: dict | None = None, table_format: str = "iceberg", **blocks: dict
) -> SimpleNamespace:
    """A catalog as dbt 1.12's `load_catalogs_v2` gives it (dbt-adapters types it by shape)."""
    return SimpleNamespace(
        name="marts",
        catalog_type=catalog_type,
        table_format=SimpleNamespace(value=table_format),
        config={"s3tables": block or {}, **blocks},
    )


def bridged(catalog: SimpleNamespace, project_root: str | None = None) -> CatalogConfig:
    adapter = object.__new__(S3TablesAdapter)
    integration = adapter.bridge_v2_catalog(catalog)
    return catalog_config_from_integration(integration, project_root, "config.s3tables")


@pytest.mark.parametrize(
    ("catalog_type", "block", "spark_type", "warehouse"),
    [
        ("s3_tables", {"table_bucket_arn": ARN}, "s3tables", ARN),
        ("glue", {"region": "eu-west-1", "warehouse": "111122223333"}, "glue", "111122223333"),
        ("iceberg_rest", {"catalog_uri": "http://rest", "warehouse": "w"}, "rest", "w"),
        ("local", {"external_volume": "/tmp/lake"}, "local", "/tmp/lake"),
    ],
)
def test_every_catalog_type_in_the_v2_spec(catalog_type, block, spark_type, warehouse) -> None:
    config = bridged(v2_catalog(catalog_type, block))
    assert (config.name, config.catalog_type, config.warehouse) == ("marts", spark_type, warehouse)


def test_a_v2_catalog_database_names_the_spark_catalog() -> None:
    catalog = v2_catalog("local", {"warehouse": "/tmp/lake", "catalog_database": "lake"})
    adapter = object.__new__(S3TablesAdapter)
    integration = adapter.bridge_v2_catalog(catalog)
    assert (integration.name, integration.catalog_database) == ("marts", "lake")
    assert "catalog_database" not in integration.adapter_properties
    assert catalog_config_from_integration(integration, None).name == "lake"
    relation = CATALOG_INTEGRATIONS[0](integration).build_relation(None)
    assert (relation.catalog_name, relation.catalog_database) == ("marts", "lake")


def test_the_v2_default_table_format_is_iceberg() -> None:
    config = bridged(v2_catalog("local", {"warehouse": "/tmp/lake"}, table_format="default"))
    assert config.catalog_type == "local"


@pytest.mark.parametrize(
    ("catalog", "key", "words"),
    [
        (v2_catalog("s3tables"), "type", "did you mean `s3_tables`?"),
        (v2_catalog("unity"), "type", "use one of: local, s3_tables, glue, iceberg_rest"),
        (
            v2_catalog("s3_tables", s3table={"table_bucket_arn": ARN}),
            "config.s3table",
            "did you mean `s3tables`?",
        ),
        (
            v2_catalog("s3_tables", {"table_bucket_ar": ARN}),
            "config.s3tables.table_bucket_ar",
            "did you mean `table_bucket_arn`?",
        ),
        (
            v2_catalog("s3_tables", {"table_bucket_arn": ARN, "file_format": "orc"}),
            "file_format",
            "as Parquet",
        ),
        (
            v2_catalog("s3_tables", {}),
            "config.s3tables.table_bucket_arn",
            "is required",
        ),
        (
            v2_catalog("local", {"warehouse": "/tmp/w", "catalog_database": "my-lake"}),
            "catalog_database",
            "plain identifier",
        ),
    ],
)
def test_bad_v2_catalogs_name_the_catalog_the_key_and_the_fix(catalog, key, words) -> None:
    with pytest.raises(CatalogsYmlError) as error:
        bridged(catalog)
    message = str(error.value)
    assert f"catalogs.yml catalog `marts`, key `{key}`" in message
    assert words in message and "Fix:" in message


def test_other_adapters_blocks_may_sit_beside_this_ones() -> None:
    catalog = v2_catalog("s3_tables", {"table_bucket_arn": ARN}, snowflake={"external_volume": "v"})
    assert bridged(catalog).warehouse == ARN


def local(name: str) -> CatalogConfig:
    return CatalogConfig(name=name, catalog_type="local", warehouse=f"/tmp/{name}")


def test_relations_find_their_catalog_by_database() -> None:
    catalogs = CatalogSet(local("local"))
    catalogs.declare(local("marts"))
    assert catalogs.named(None) is catalogs.default
    assert catalogs.named("LOCAL") is catalogs.default
    assert catalogs.named("marts").name == "marts"
    assert catalogs.named("Marts").name == "marts"
    assert [c.name for c in catalogs.all()] == ["local", "marts"]
    with pytest.raises(UnknownCatalogError) as error:
        catalogs.named("raw", relation="raw.shop.orders")
    message = str(error.value)
    assert "raw.shop.orders is in catalog `raw`" in message
    assert "one of: local, marts" in message


def test_a_declared_catalog_cannot_take_the_profile_catalog_name() -> None:
    catalogs = CatalogSet(local("local"))
    with pytest.raises(CatalogsYmlError, match="the profile's own catalog"):
        catalogs.declare(local("Local"))


class FakeSession:
    """A running SparkSession, as far as the session registry looks."""

    _jsc = object()


@pytest.fixture
def running_session(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    """The process's session, running with catalog `local`; what is added to it at run time."""
    applied: list[dict[str, str]] = []
    monkeypatch.setattr(spark_session, "_session", FakeSession())
    monkeypatch.setattr(spark_session, "_session_catalog", local("local"))
    monkeypatch.setattr(spark_session, "_session_catalogs", {"local": local("local")})
    monkeypatch.setattr(spark_session, "_session_jars", frozenset(local("local").jar_artifacts))
    monkeypatch.setattr(spark_session, "apply_at_runtime", lambda _, s: applied.append(s))
    return applied


def test_a_running_session_gains_a_declared_catalog_once(running_session) -> None:
    for _ in range(2):
        get_or_create_session(local("local"), "local[1]", {}, JarSources(), (local("marts"),))
    [added] = running_session
    assert added["spark.sql.catalog.marts"] == "org.apache.iceberg.spark.SparkCatalog"
    assert "spark.sql.defaultCatalog" not in added


@pytest.mark.parametrize(
    ("default", "declared", "switching_to"),
    [
        # Spark's default catalog cannot change in a running session.
        (local("lake"), (), "`lake` at /tmp/lake"),
        # A declared catalog of a known name cannot move elsewhere.
        (
            local("local"),
            (CatalogConfig(name="local", catalog_type="local", warehouse="/elsewhere"),),
            "/elsewhere",
        ),
    ],
)
def test_a_running_session_refuses_to_switch_catalogs(
    running_session, default, declared, switching_to
) -> None:
    with pytest.raises(DbtRuntimeError, match="Run each target in its own process") as error:
        get_or_create_session(default, "local[1]", {}, JarSources(), declared)
    assert switching_to in str(error.value)
    assert running_session == []


def test_a_declared_catalog_needing_other_jars_asks_for_a_new_process(running_session) -> None:
    bucket = CatalogConfig(
        name="bucket", catalog_type="s3tables", warehouse=ARN, region="eu-west-1"
    )
    with pytest.raises(DbtRuntimeError) as error:
        get_or_create_session(local("local"), "local[1]", {}, JarSources(), (bucket,))
    assert ICEBERG_AWS_BUNDLE.coordinates in str(error.value)
    assert "its own process" in str(error.value)


def test_the_adapter_side_rules_of_a_known_catalog_may_differ(running_session) -> None:
    strict = CatalogConfig(
        name="local", catalog_type="local", warehouse="/tmp/local", s3tables_rules=True
    )
    get_or_create_session(strict, "local[1]", {}, JarSources())
    assert running_session == []
