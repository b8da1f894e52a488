"""One catalog description rendered for Spark (JDBC) and PyIceberg (SQL)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.jars import SQLITE_JDBC

CONFIG = CatalogConfig(name="local", catalog_type="local", warehouse="/tmp/wh")
PREFIX = "spark.sql.catalog.local"


def jdbc_uri_parts(uri: str) -> tuple[str, dict[str, list[str]]]:
    assert uri.startswith("jdbc:sqlite:")
    path, _, query = uri.removeprefix("jdbc:sqlite:").partition("?")
    return path, parse_qs(query)


def test_spark_settings_use_iceberg_jdbc_catalog() -> None:
    settings = CONFIG.spark_settings()
    assert settings[PREFIX] == "org.apache.iceberg.spark.SparkCatalog"
    assert settings[f"{PREFIX}.type"] == "jdbc"
    assert settings[f"{PREFIX}.jdbc.schema-version"] == "V1"
    assert settings[f"{PREFIX}.cache-enabled"] == "false"
    assert settings["spark.sql.defaultCatalog"] == "local"
    assert "IcebergSparkSessionExtensions" in settings["spark.sql.extensions"]


def test_spark_uri_is_the_sqlite_file_with_wal_and_busy_timeout() -> None:
    uri = CONFIG.spark_settings()[f"{PREFIX}.uri"]
    assert uri.startswith("jdbc:sqlite:/tmp/wh/catalog.db")
    path, query = jdbc_uri_parts(uri)
    assert path == "/tmp/wh/catalog.db" == CONFIG.sqlite_path
    assert query["journal_mode"] == ["WAL"]
    assert query["busy_timeout"] == ["30000"]


def test_lock_timeout_reaches_both_sides_in_their_units() -> None:
    config = CatalogConfig(name="c", catalog_type="local", warehouse="/w", lock_timeout_seconds=7)
    _, query = jdbc_uri_parts(config.spark_settings()["spark.sql.catalog.c.uri"])
    assert query["busy_timeout"] == ["7000"]
    sql_uri = urlsplit(config.pyiceberg_properties()["uri"])
    assert parse_qs(sql_uri.query)["timeout"] == ["7"]


def test_pyiceberg_properties() -> None:
    props = CONFIG.pyiceberg_properties()
    assert props["type"] == "sql"
    assert props["uri"] == "sqlite:////tmp/wh/catalog.db?timeout=30"
    assert props["schema_version"] == "v1"


def test_both_sides_share_the_warehouse_and_catalog_file() -> None:
    spark = CONFIG.spark_settings()
    props = CONFIG.pyiceberg_properties()
    assert spark[f"{PREFIX}.warehouse"] == props["warehouse"] == "file:///tmp/wh"
    spark_path, _ = jdbc_uri_parts(spark[f"{PREFIX}.uri"])
    assert urlsplit(props["uri"]).path.removeprefix("/") == spark_path


def test_catalog_name_prefixes_every_catalog_key() -> None:
    config = CatalogConfig(name="lake", catalog_type="local", warehouse="/tmp/wh")
    settings = config.spark_settings()
    assert settings["spark.sql.defaultCatalog"] == "lake"
    catalog_keys = [k for k in settings if k.startswith("spark.sql.catalog.")]
    assert catalog_keys and all(
        k == "spark.sql.catalog.lake" or k.startswith("spark.sql.catalog.lake.")
        for k in catalog_keys
    )
    assert SQLITE_JDBC in config.jar_artifacts
