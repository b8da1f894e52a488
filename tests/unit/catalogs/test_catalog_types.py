"""Catalog types of the profile (local, s3tables, rest, glue): profile validation and the
settings rendered for Spark (Java Iceberg) and PyIceberg.

The s3tables and glue expectations are the catalog properties AWS documents for its
S3 Tables and Glue Iceberg REST endpoints, with AWS's own example names.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dbt.adapters.s3tables.catalogs.config import (
    MASK,
    CatalogConfig,
    catalog_config_for,
    is_secret,
    masked,
)
from dbt.adapters.s3tables.credentials import S3TablesCredentials
from dbt.adapters.s3tables.errors import ProfileError

ARN = "arn:aws:s3tables:us-east-1:111122223333:bucket/amzn-s3-demo-table-bucket"
GLUE_CATALOG_ID = "111122223333:s3tablescatalog/amzn-s3-demo-table-bucket"
NAME = "s3tablesbucket"
PREFIX = f"spark.sql.catalog.{NAME}"
EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
S3_FILE_IO = "org.apache.iceberg.aws.s3.S3FileIO"
SECRET = "s3cr3t-V4lue-that-must-never-be-printed"


def credentials(**keys: object) -> S3TablesCredentials:
    return S3TablesCredentials.from_dict({"schema": "analytics", **keys})


def config(**keys: object) -> CatalogConfig:
    return catalog_config_for(credentials(**keys))


def s3tables(**keys: object) -> CatalogConfig:
    return config(catalog=NAME, table_bucket_arn=ARN, **keys)


def rest(**keys: object) -> CatalogConfig:
    return config(catalog=NAME, catalog_type="rest", **keys)


def glue(**keys: object) -> CatalogConfig:
    return config(
        catalog=NAME, catalog_type="glue", region="us-east-1", warehouse=GLUE_CATALOG_ID, **keys
    )


def assert_names_key(error: pytest.ExceptionInfo[ProfileError], key: str) -> None:
    message = str(error.value)
    assert f"`{key}`" in message
    assert "Fix:" in message
    assert message.split("Fix:")[1].strip()


# --- s3tables through the S3 Tables Iceberg REST endpoint ---


def test_s3tables_spark_settings_are_the_documented_rest_endpoint_settings() -> None:
    assert s3tables().spark_settings() == {
        "spark.sql.extensions": EXTENSIONS,
        "spark.sql.defaultCatalog": NAME,
        PREFIX: "org.apache.iceberg.spark.SparkCatalog",
        f"{PREFIX}.type": "rest",
        f"{PREFIX}.uri": "https://s3tables.us-east-1.amazonaws.com/iceberg",
        f"{PREFIX}.warehouse": ARN,
        f"{PREFIX}.rest.sigv4-enabled": "true",
        f"{PREFIX}.rest.signing-name": "s3tables",
        f"{PREFIX}.rest.signing-region": "us-east-1",
        f"{PREFIX}.io-impl": S3_FILE_IO,
        f"{PREFIX}.rest-metrics-reporting-enabled": "false",
        # The adapter's own addition: PyIceberg commits behind Spark's back.
        f"{PREFIX}.cache-enabled": "false",
    }


def test_s3tables_pyiceberg_properties_are_the_documented_rest_sigv4_properties() -> None:
    assert s3tables().pyiceberg_properties() == {
        "type": "rest",
        "uri": "https://s3tables.us-east-1.amazonaws.com/iceberg",
        "warehouse": ARN,
        "rest.sigv4-enabled": "true",
        "rest.signing-name": "s3tables",
        "rest.signing-region": "us-east-1",
        "client.region": "us-east-1",
    }


def test_s3tables_endpoint_and_signing_region_follow_the_arn_region() -> None:
    arn = "arn:aws:s3tables:eu-west-3:111122223333:bucket/sales"
    cfg = config(table_bucket_arn=arn)
    spark = cfg.spark_settings()
    assert (
        spark["spark.sql.catalog.local.uri"] == "https://s3tables.eu-west-3.amazonaws.com/iceberg"
    )
    assert spark["spark.sql.catalog.local.rest.signing-region"] == "eu-west-3"
    assert cfg.pyiceberg_properties()["rest.signing-region"] == "eu-west-3"
    assert cfg.pyiceberg_properties()["client.region"] == "eu-west-3"
    assert cfg.catalog_uri == "https://s3tables.eu-west-3.amazonaws.com/iceberg"
    assert cfg.sigv4_signing_name == "s3tables"


def test_s3tables_catalog_jar_uses_amazons_catalog_implementation() -> None:
    assert s3tables(s3tables_client="catalog_jar").spark_settings() == {
        "spark.sql.extensions": EXTENSIONS,
        "spark.sql.defaultCatalog": NAME,
        PREFIX: "org.apache.iceberg.spark.SparkCatalog",
        f"{PREFIX}.catalog-impl": "software.amazon.s3tables.iceberg.S3TablesCatalog",
        f"{PREFIX}.warehouse": ARN,
        f"{PREFIX}.cache-enabled": "false",
    }


def test_s3tables_catalog_jar_keeps_pyiceberg_on_rest_with_sigv4() -> None:
    jar = s3tables(s3tables_client="catalog_jar").pyiceberg_properties()
    assert jar == s3tables().pyiceberg_properties()
    assert jar["type"] == "rest"
    assert jar["rest.sigv4-enabled"] == "true"
    assert jar["rest.signing-name"] == "s3tables"


def test_s3tables_location_names_endpoint_and_bucket() -> None:
    location = s3tables().location
    assert "https://s3tables.us-east-1.amazonaws.com/iceberg" in location
    assert ARN in location


# --- glue through the Glue Iceberg REST endpoint ---


def test_glue_spark_settings() -> None:
    settings = glue().spark_settings()
    assert settings[PREFIX] == "org.apache.iceberg.spark.SparkCatalog"
    assert settings[f"{PREFIX}.type"] == "rest"
    assert settings[f"{PREFIX}.uri"] == "https://glue.us-east-1.amazonaws.com/iceberg"
    assert settings[f"{PREFIX}.warehouse"] == GLUE_CATALOG_ID
    assert settings[f"{PREFIX}.rest.sigv4-enabled"] == "true"
    assert settings[f"{PREFIX}.rest.signing-name"] == "glue"
    assert settings[f"{PREFIX}.rest.signing-region"] == "us-east-1"
    assert settings[f"{PREFIX}.io-impl"] == S3_FILE_IO
    assert settings["spark.sql.defaultCatalog"] == NAME
    assert f"{PREFIX}.catalog-impl" not in settings


def test_glue_pyiceberg_properties() -> None:
    assert glue().pyiceberg_properties() == {
        "type": "rest",
        "uri": "https://glue.us-east-1.amazonaws.com/iceberg",
        "warehouse": GLUE_CATALOG_ID,
        "rest.sigv4-enabled": "true",
        "rest.signing-name": "glue",
        "rest.signing-region": "us-east-1",
        "client.region": "us-east-1",
    }


def test_glue_endpoint_follows_the_region() -> None:
    cfg = config(catalog_type="glue", region="ap-southeast-2", warehouse="111122223333")
    assert cfg.catalog_uri == "https://glue.ap-southeast-2.amazonaws.com/iceberg"
    assert cfg.pyiceberg_properties()["warehouse"] == "111122223333"
    assert cfg.sigv4_signing_name == "glue"


# --- rest: any Iceberg REST catalog ---


def test_rest_without_signing_or_auth() -> None:
    cfg = rest(catalog_uri="https://catalog.example.com/iceberg/", warehouse="wh")
    assert cfg.catalog_uri == "https://catalog.example.com/iceberg"
    assert cfg.sigv4_signing_name is None
    assert cfg.spark_settings() == {
        "spark.sql.extensions": EXTENSIONS,
        "spark.sql.defaultCatalog": NAME,
        PREFIX: "org.apache.iceberg.spark.SparkCatalog",
        f"{PREFIX}.cache-enabled": "false",
        f"{PREFIX}.type": "rest",
        f"{PREFIX}.uri": "https://catalog.example.com/iceberg",
        f"{PREFIX}.warehouse": "wh",
    }
    assert cfg.pyiceberg_properties() == {
        "type": "rest",
        "uri": "https://catalog.example.com/iceberg",
        "warehouse": "wh",
    }


def test_rest_strips_every_trailing_slash() -> None:
    cfg = rest(catalog_uri="http://localhost:8181//")
    assert cfg.catalog_uri == "http://localhost:8181"
    assert cfg.spark_settings()[f"{PREFIX}.uri"] == "http://localhost:8181"
    assert cfg.pyiceberg_properties()["uri"] == "http://localhost:8181"


def test_rest_token_reaches_both_sides() -> None:
    cfg = rest(catalog_uri="https://c.example.com", token=SECRET)
    assert cfg.spark_settings()[f"{PREFIX}.token"] == SECRET
    assert cfg.pyiceberg_properties()["token"] == SECRET
    assert f"{PREFIX}.credential" not in cfg.spark_settings()
    assert "credential" not in cfg.pyiceberg_properties()


def test_rest_credential_reaches_both_sides() -> None:
    cfg = rest(catalog_uri="https://c.example.com", credential=f"client-id:{SECRET}")
    assert cfg.spark_settings()[f"{PREFIX}.credential"] == f"client-id:{SECRET}"
    assert cfg.pyiceberg_properties()["credential"] == f"client-id:{SECRET}"
    assert "token" not in cfg.pyiceberg_properties()


def test_rest_sigv4_only_with_signing_name() -> None:
    unsigned = rest(catalog_uri="https://c.example.com", region="us-west-2")
    assert not any("sigv4" in key or "signing" in key for key in unsigned.spark_settings())
    assert not any("sigv4" in key or "signing" in key for key in unsigned.pyiceberg_properties())

    signed = rest(
        catalog_uri="https://c.example.com", region="us-west-2", signing_name="execute-api"
    )
    assert signed.sigv4_signing_name == "execute-api"
    for prefix, properties in (
        (f"{PREFIX}.", signed.spark_settings()),
        ("", signed.pyiceberg_properties()),
    ):
        assert properties[f"{prefix}rest.sigv4-enabled"] == "true"
        assert properties[f"{prefix}rest.signing-name"] == "execute-api"
        assert properties[f"{prefix}rest.signing-region"] == "us-west-2"


def test_rest_has_no_aws_file_io_or_metrics_setting() -> None:
    settings = rest(catalog_uri="https://c.example.com").spark_settings()
    assert f"{PREFIX}.io-impl" not in settings
    assert f"{PREFIX}.rest-metrics-reporting-enabled" not in settings


# --- catalog_properties, aws_profile, region ---


@pytest.mark.parametrize("make", [s3tables, rest, glue], ids=["s3tables", "rest", "glue"])
def test_catalog_properties_reach_both_sides(make: Callable[..., CatalogConfig]) -> None:
    keys: dict[str, object] = {
        "catalog_properties": {"header.x-client": "dbt", "s3.path-style-access": True}
    }
    if make is rest:
        keys["catalog_uri"] = "https://c.example.com"
    cfg = make(**keys)
    spark = cfg.spark_settings()
    props = cfg.pyiceberg_properties()
    assert spark[f"{PREFIX}.header.x-client"] == props["header.x-client"] == "dbt"
    assert spark[f"{PREFIX}.s3.path-style-access"] == props["s3.path-style-access"] == "true"


def test_catalog_properties_override_defaults_on_both_sides() -> None:
    cfg = s3tables(
        catalog_properties={
            "uri": "https://vpce.example.com/iceberg",
            "rest-metrics-reporting-enabled": True,
            "io-impl": "org.example.FileIO",
        }
    )
    spark = cfg.spark_settings()
    assert spark[f"{PREFIX}.uri"] == "https://vpce.example.com/iceberg"
    assert spark[f"{PREFIX}.rest-metrics-reporting-enabled"] == "true"
    assert spark[f"{PREFIX}.io-impl"] == "org.example.FileIO"
    assert cfg.pyiceberg_properties()["uri"] == "https://vpce.example.com/iceberg"


def test_catalog_properties_on_local_catalog_also_reach_both_sides() -> None:
    cfg = config(catalog_properties={"jdbc.x": 5}, warehouse="/tmp/wh")
    assert cfg.spark_settings()["spark.sql.catalog.local.jdbc.x"] == "5"
    assert cfg.pyiceberg_properties()["jdbc.x"] == "5"


def test_aws_profile_reaches_both_sides() -> None:
    cfg = s3tables(aws_profile="analytics")
    assert cfg.pyiceberg_properties()["client.profile-name"] == "analytics"
    assert cfg.spark_settings()["spark.executorEnv.AWS_PROFILE"] == "analytics"


def test_no_aws_profile_no_profile_settings() -> None:
    cfg = s3tables()
    assert "client.profile-name" not in cfg.pyiceberg_properties()
    assert "spark.executorEnv.AWS_PROFILE" not in cfg.spark_settings()


def test_region_becomes_pyiceberg_client_region() -> None:
    assert (
        rest(catalog_uri="https://c.example.com", region="eu-north-1").pyiceberg_properties()[
            "client.region"
        ]
        == "eu-north-1"
    )
    assert "client.region" not in rest(catalog_uri="https://c.example.com").pyiceberg_properties()


# --- local: unchanged ---


def test_local_catalog_is_unchanged() -> None:
    cfg = config(warehouse="/tmp/wh")
    spark = cfg.spark_settings()
    assert spark["spark.sql.catalog.local"] == "org.apache.iceberg.spark.SparkCatalog"
    assert spark["spark.sql.catalog.local.type"] == "jdbc"
    assert spark["spark.sql.catalog.local.uri"].startswith("jdbc:sqlite:/tmp/wh/catalog.db?")
    assert spark["spark.sql.catalog.local.warehouse"] == "file:///tmp/wh"
    assert not any("sigv4" in key or "io-impl" in key for key in spark)
    props = cfg.pyiceberg_properties()
    assert props["type"] == "sql"
    assert props["uri"] == "sqlite:////tmp/wh/catalog.db?timeout=30"
    assert props["warehouse"] == "file:///tmp/wh"
    assert "client.region" not in props
    assert cfg.location == "/tmp/wh/catalog.db"
    assert cfg.catalog_uri is None
    assert cfg.sigv4_signing_name is None


# --- secrets ---


@pytest.mark.parametrize(
    "key",
    [
        "token",
        "credential",
        "s3.secret-access-key",
        "s3.session-token",
        "client.SECRET-access-key",
        "jdbc.password",
        "rest.session",
        "oauth2.Credential",
    ],
)
def test_is_secret(key: str) -> None:
    assert is_secret(key)


@pytest.mark.parametrize("key", ["uri", "warehouse", "s3.access-key-id", "header.x-client"])
def test_is_not_secret(key: str) -> None:
    assert not is_secret(key)


def test_masked_replaces_only_secret_values() -> None:
    assert masked({"uri": "u", "token": "t", "a.password": "p"}) == {
        "uri": "u",
        "token": MASK,
        "a.password": MASK,
    }


@pytest.mark.parametrize(
    "keys",
    [
        {"catalog_type": "rest", "catalog_uri": "https://c.example.com", "token": SECRET},
        {"catalog_type": "rest", "catalog_uri": "https://c.example.com", "credential": SECRET},
        {"table_bucket_arn": ARN, "catalog_properties": {"s3.secret-access-key": SECRET}},
        {"table_bucket_arn": ARN, "catalog_properties": {"s3.session-token": SECRET}},
        {"table_bucket_arn": ARN, "catalog_properties": {"client.credential-x": SECRET}},
        {"table_bucket_arn": ARN, "catalog_properties": {"db.Password": SECRET}},
        {"catalog_properties": {"my.secret": SECRET}},
    ],
    ids=["token", "credential", "secret", "session", "credential-prop", "password", "local"],
)
def test_describe_never_shows_a_secret(keys: dict[str, object]) -> None:
    cfg = config(**keys)
    described = cfg.describe()
    assert SECRET not in str(described)
    assert SECRET not in cfg.location
    assert MASK in described.values()
    # The secret is still handed to the catalog clients themselves.
    assert SECRET in str(cfg.spark_settings()) + str(cfg.pyiceberg_properties())


def test_describe_masks_token_on_both_sides_and_keeps_the_rest() -> None:
    described = rest(catalog_uri="https://c.example.com", token=SECRET).describe()
    assert described["token"] == MASK
    assert described[f"{PREFIX}.token"] == MASK
    assert described["uri"] == "https://c.example.com"
    assert described[f"{PREFIX}.type"] == "rest"


# --- credentials: catalog types ---


def test_table_bucket_arn_implies_s3tables() -> None:
    creds = credentials(table_bucket_arn=ARN)
    assert creds.catalog_type == "s3tables"
    assert creds.region == "us-east-1"
    assert creds.warehouse == ARN
    assert creds.s3tables_client == "rest"
    assert creds.unique_field == f"s3tables:{ARN}"


def test_no_arn_means_local() -> None:
    creds = credentials()
    assert creds.catalog_type == "local"
    assert creds.warehouse == "./warehouse"
    assert creds.region is None


def test_arn_is_stripped_and_its_region_is_used() -> None:
    creds = credentials(table_bucket_arn=f"  {ARN}\n", region="us-east-1")
    assert creds.warehouse == ARN
    assert creds.region == "us-east-1"


def test_s3tables_requires_an_arn() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(catalog_type="s3tables")
    assert_names_key(error, "table_bucket_arn")


@pytest.mark.parametrize(
    "arn",
    [
        "arn:aws:s3:us-east-1:111122223333:bucket/amzn-s3-demo-table-bucket",
        "arn:aws:s3tables:us-east-1:11112222333:bucket/amzn-s3-demo-table-bucket",
        "arn:aws:s3tables:us-east-1:111122223333:bucket/Amzn-Demo",
        "my-bucket",
    ],
)
def test_bad_arn_is_a_profile_error(arn: str) -> None:
    with pytest.raises(ProfileError) as error:
        credentials(table_bucket_arn=arn)
    assert_names_key(error, "table_bucket_arn")


def test_conflicting_region_is_an_error() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(table_bucket_arn=ARN, region="eu-west-1")
    assert_names_key(error, "region")
    assert "eu-west-1" in str(error.value)
    assert "us-east-1" in str(error.value)


def test_unknown_s3tables_client() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(table_bucket_arn=ARN, s3tables_client="boto")
    assert_names_key(error, "s3tables_client")
    assert "boto" in str(error.value)
    fix = str(error.value).split("Fix:")[1]
    assert "rest" in fix and "catalog_jar" in fix


def test_rest_requires_catalog_uri() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(catalog_type="rest")
    assert_names_key(error, "catalog_uri")


def test_rest_signing_name_requires_region() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(catalog_type="rest", catalog_uri="https://c.example.com", signing_name="x")
    assert_names_key(error, "region")
    assert "signing_name" in str(error.value)


def test_rest_token_and_credential_are_exclusive() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(
            catalog_type="rest",
            catalog_uri="https://c.example.com",
            token=SECRET,
            credential=f"id:{SECRET}",
        )
    assert_names_key(error, "token")
    assert "credential" in str(error.value)
    assert SECRET not in str(error.value)


def test_glue_requires_region() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(catalog_type="glue", warehouse=GLUE_CATALOG_ID)
    assert_names_key(error, "region")


def test_glue_requires_catalog_id_as_warehouse() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(catalog_type="glue", region="us-east-1")
    assert_names_key(error, "warehouse")


@pytest.mark.parametrize("value", [["a=1"], "a=1", 3])
def test_catalog_properties_must_be_a_mapping(value: object) -> None:
    with pytest.raises(ProfileError) as error:
        credentials(catalog_properties=value)
    assert_names_key(error, "catalog_properties")


@pytest.mark.parametrize("value", [{"a": 1}, [1, 2]])
def test_catalog_properties_values_must_be_scalars(value: object) -> None:
    with pytest.raises(ProfileError) as error:
        credentials(catalog_properties={"nested": value})
    assert_names_key(error, "catalog_properties.nested")


def test_catalog_properties_become_strings() -> None:
    creds = credentials(catalog_properties={"a": True, "b": False, "c": 8, "d": 0.5, "e": "x"})
    assert creds.catalog_properties == {"a": "true", "b": "false", "c": "8", "d": "0.5", "e": "x"}


def test_no_catalog_properties_is_empty() -> None:
    assert credentials().catalog_properties == {}


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ({"table_bucket_arn": ARN}, True),
        ({}, False),
        ({"catalog_type": "rest", "catalog_uri": "https://c.example.com"}, False),
        ({"catalog_type": "glue", "region": "us-east-1", "warehouse": "111122223333"}, False),
        ({"table_bucket_arn": ARN, "s3tables_rules": False}, False),
        ({"s3tables_rules": True}, True),
    ],
    ids=["s3tables", "local", "rest", "glue", "s3tables-off", "local-on"],
)
def test_s3tables_rules_default(keys: dict[str, object], expected: bool) -> None:
    assert credentials(**keys).s3tables_rules is expected


def test_connection_keys_never_include_secrets() -> None:
    creds = credentials(catalog_type="rest", catalog_uri="https://c.example.com", token=SECRET)
    keys = creds._connection_keys()
    assert "token" not in keys
    assert "credential" not in keys
    assert {"catalog_type", "warehouse", "region", "catalog_uri"} <= set(keys)
    assert SECRET not in str(dict(creds.connection_info()))


def test_connection_info_never_shows_the_credential() -> None:
    creds = credentials(
        catalog_type="rest", catalog_uri="https://c.example.com", credential=f"id:{SECRET}"
    )
    assert SECRET not in str(dict(creds.connection_info()))


# --- catalog_config_for ---


def test_catalog_config_for_round_trip() -> None:
    creds = credentials(
        catalog="cat",
        catalog_type="rest",
        catalog_uri="https://c.example.com/",
        warehouse="wh",
        region="us-west-2",
        signing_name="execute-api",
        token=SECRET,
        aws_profile="p",
        catalog_lock_timeout=9,
        catalog_properties={"z": 1, "a": True},
    )
    assert catalog_config_for(creds) == CatalogConfig(
        name="cat",
        catalog_type="rest",
        warehouse="wh",
        lock_timeout_seconds=9,
        region="us-west-2",
        uri="https://c.example.com/",
        token=SECRET,
        credential=None,
        signing_name="execute-api",
        aws_profile="p",
        s3tables_client="rest",
        extra_properties=(("a", "true"), ("z", "1")),
    )


def test_catalog_config_for_s3tables() -> None:
    cfg = catalog_config_for(
        credentials(catalog=NAME, table_bucket_arn=ARN, s3tables_client="catalog_jar")
    )
    assert cfg.catalog_type == "s3tables"
    assert cfg.warehouse == ARN
    assert cfg.region == "us-east-1"
    assert cfg.s3tables_client == "catalog_jar"
    assert cfg.uri is None
    assert cfg.extra_properties == ()
    # Hashable: one PyIceberg catalog is cached per config.
    assert hash(cfg) == hash(s3tables(s3tables_client="catalog_jar"))


def test_secret_settings_never_become_launch_arguments() -> None:
    from dbt.adapters.s3tables.engines.spark_session import split_secrets

    settings = {
        "spark.master": "local[2]",
        "spark.sql.catalog.c.token": "t0k",
        "spark.sql.catalog.c.credential": "id:s3cr3t",
        "spark.hadoop.fs.s3a.secret.key": "k3y",
        "spark.sql.catalog.c.jdbc.password": "pw",
        "spark.driver.memory": "2g",
    }
    launch, secrets = split_secrets(settings)
    assert launch == {"spark.master": "local[2]", "spark.driver.memory": "2g"}
    assert set(secrets) == set(settings) - set(launch)
