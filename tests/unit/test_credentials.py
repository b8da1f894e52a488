"""Profile contract: `spark_conf` validation, warehouse resolution, credential checks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dbt.adapters.s3tables.catalogs.embedded.catalog import resolve_warehouse
from dbt.adapters.s3tables.credentials import S3TablesCredentials, validate_spark_conf
from dbt.adapters.s3tables.engines.connect import connect_url
from dbt.adapters.s3tables.errors import ProfileError


def credentials(**keys: object) -> S3TablesCredentials:
    return S3TablesCredentials.from_dict({"schema": "analytics", **keys})


def assert_names_key(error: pytest.ExceptionInfo[ProfileError], key: str) -> None:
    message = str(error.value)
    assert f"`{key}`" in message
    assert "Fix:" in message


# --- validate_spark_conf ---


def test_spark_conf_none_is_empty() -> None:
    assert validate_spark_conf(None) == {}


def test_spark_conf_strings_pass_through() -> None:
    conf = {"spark.executor.memory": "2g", "spark.sql.shuffle.partitions": "8"}
    assert validate_spark_conf(conf) == conf


def test_spark_conf_scalars_become_spark_strings() -> None:
    settings = validate_spark_conf(
        {"spark.a.enabled": True, "spark.b.enabled": False, "spark.c": 4, "spark.d": 0.5}
    )
    assert settings == {
        "spark.a.enabled": "true",
        "spark.b.enabled": "false",
        "spark.c": "4",
        "spark.d": "0.5",
    }
    assert all(isinstance(value, str) for value in settings.values())


@pytest.mark.parametrize("value", [["spark.a=1"], "spark.a=1", 42])
def test_spark_conf_must_be_a_mapping(value: object) -> None:
    with pytest.raises(ProfileError) as error:
        validate_spark_conf(value)
    assert_names_key(error, "spark_conf")
    assert type(value).__name__ in str(error.value) and "mapping" in str(error.value)


def test_spark_conf_key_must_start_with_spark() -> None:
    with pytest.raises(ProfileError) as error:
        validate_spark_conf({"spark.ok": "1", "executor.memory": "2g"})
    assert_names_key(error, "spark_conf.executor.memory")
    assert "spark.executor.memory" in str(error.value)


@pytest.mark.parametrize("value", [{"memory": "2g"}, ["a", "b"], None])
def test_spark_conf_value_must_be_scalar(value: object) -> None:
    with pytest.raises(ProfileError) as error:
        validate_spark_conf({"spark.nested": value})
    assert_names_key(error, "spark_conf.spark.nested")
    assert "scalar" in str(error.value)


# --- resolve_warehouse ---


def test_relative_warehouse_resolves_against_project_root() -> None:
    assert resolve_warehouse("./warehouse", "/projects/shop") == "/projects/shop/warehouse"
    assert resolve_warehouse("data/../wh", "/projects/shop") == "/projects/shop/wh"


def test_relative_warehouse_without_project_root_uses_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_warehouse("wh", None) == os.path.join(os.getcwd(), "wh")


def test_absolute_warehouse_is_kept() -> None:
    assert resolve_warehouse("/data/wh/", "/projects/shop") == "/data/wh"


def test_home_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    resolved = resolve_warehouse("~/wh", "/projects/shop")
    assert resolved == os.path.join(str(tmp_path), "wh")
    assert "~" not in resolved


# --- S3TablesCredentials ---


def test_defaults() -> None:
    creds = credentials()
    assert creds.type == "s3tables"
    assert creds.method == "session"
    assert creds.warehouse == "./warehouse"
    assert creds.master == "local[*]"
    assert creds.catalog == "local"
    assert creds.catalog_type == "local"
    assert creds.spark_conf == {}
    assert creds.database is None


def test_direct_construction_validates_spark_conf() -> None:
    creds = S3TablesCredentials(schema="analytics", spark_conf={"spark.x.enabled": True})
    assert creds.spark_conf == {"spark.x.enabled": "true"}


def test_profile_spark_conf_is_validated() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(spark_conf={"executor.memory": "2g"})
    assert_names_key(error, "spark_conf.executor.memory")


def test_database_equal_to_schema_is_accepted_and_dropped() -> None:
    assert credentials(database="analytics").database is None


def test_unknown_method() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(method="odbc")
    assert_names_key(error, "method")
    assert "odbc" in str(error.value)
    assert "session, thrift, connect" in str(error.value).split("Fix:")[1]


def test_thrift_needs_a_host() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(method="thrift")
    assert_names_key(error, "host")


def test_thrift_defaults() -> None:
    creds = credentials(method="thrift", host="emr-master.internal")
    assert (creds.port, creds.user, creds.connect_timeout) == (10000, "dbt", 10)


def test_connect_defaults_and_token_kept_out_of_debug_output() -> None:
    creds = credentials(method="connect", host="127.0.0.1", token="s3cr3t")
    assert (creds.port, creds.token) == (15002, "s3cr3t")
    assert "token" not in creds._connection_keys()
    assert "s3cr3t" not in str(dict(creds.connection_info()))


def test_session_has_no_port() -> None:
    assert credentials().port is None


def test_connect_needs_a_host() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(method="connect")
    assert_names_key(error, "host")
    assert "method connect" in str(error.value)


@pytest.mark.parametrize("port", [0, -1])
def test_server_port_must_be_a_port_number(port: object) -> None:
    with pytest.raises(ProfileError) as error:
        credentials(method="connect", host="127.0.0.1", port=port)
    assert_names_key(error, "port")


def test_connect_token_must_not_be_blank() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(method="connect", host="127.0.0.1", token=" ")
    assert_names_key(error, "token")


def test_connect_url_carries_the_token_only_when_given() -> None:
    assert connect_url("h", 15002, None) == "sc://h:15002/"
    assert connect_url("h", 15002, "t") == "sc://h:15002/;token=t"


@pytest.mark.parametrize("name", ["my-catalog", "1st", "", "a b", "cat.alog"])
def test_catalog_name_must_be_plain_identifier(name: str) -> None:
    with pytest.raises(ProfileError) as error:
        credentials(catalog=name)
    assert_names_key(error, "catalog")
    assert f"`{name}` is not a plain identifier" in str(error.value)


def test_catalog_name_with_trailing_newline_is_refused() -> None:
    # `$` in _CATALOG_NAME_RE also matches before a final newline (e.g. a YAML block
    # scalar `catalog: |`), so "local\n" would become a Spark catalog name.
    with pytest.raises(ProfileError) as error:
        credentials(catalog="local\n")
    assert_names_key(error, "catalog")


@pytest.mark.parametrize("name", ["local", "_x", "Cat_2"])
def test_plain_catalog_names_are_accepted(name: str) -> None:
    assert credentials(catalog=name).catalog == name


def test_unknown_catalog_type() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(catalog_type="hive")
    assert_names_key(error, "catalog_type")
    assert "hive" in str(error.value)
    assert "local" in str(error.value).split("Fix:")[1]


def test_database_different_from_schema() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(database="other")
    assert_names_key(error, "database")
    assert "other" in str(error.value)


@pytest.mark.parametrize("warehouse", ["", "   "])
def test_empty_warehouse(warehouse: str) -> None:
    with pytest.raises(ProfileError) as error:
        credentials(warehouse=warehouse)
    assert_names_key(error, "warehouse")


def test_empty_master() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(master="")
    assert_names_key(error, "master")


@pytest.mark.parametrize("timeout", [0, -5])
def test_lock_timeout_must_be_positive(timeout: int) -> None:
    with pytest.raises(ProfileError) as error:
        credentials(catalog_lock_timeout=timeout)
    assert_names_key(error, "catalog_lock_timeout")


@pytest.mark.parametrize("version", [1, 4])
def test_format_version_is_2_or_3(version: int) -> None:
    with pytest.raises(ProfileError) as error:
        credentials(format_version=version)
    assert_names_key(error, "format_version")


def test_format_version_becomes_the_catalogs_table_default() -> None:
    from dbt.adapters.s3tables.catalogs.config import catalog_config_for

    assert catalog_config_for(credentials(format_version=3)).table_defaults() == {
        "format-version": "3"
    }
    assert "format-version" not in catalog_config_for(credentials()).table_defaults()


def test_dbt_spark_server_side_parameters_point_to_spark_conf() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(server_side_parameters={"spark.executor.memory": "2g"})
    assert "server_side_parameters" in str(error.value)
    assert "spark_conf" in str(error.value)


def test_catalog_jar_refuses_an_emulator_table_location() -> None:
    arn = "arn:aws:s3tables:us-east-1:111122223333:bucket/marts"
    keys = {"table_bucket_arn": arn, "catalog_uri": "http://127.0.0.1:4566/iceberg"}
    location = {"emulator_table_location": "s3://marts"}
    assert credentials(**keys, **location).emulator_table_location  # fine with the REST client
    with pytest.raises(ProfileError) as error:
        credentials(**keys, **location, s3tables_client="catalog_jar")
    assert_names_key(error, "emulator_table_location")
    assert "catalog_jar" in str(error.value)


def test_offline_jar_keys_are_checked(tmp_path) -> None:
    assert credentials(jars_dir=str(tmp_path)).jar_sources.jars_dir == str(tmp_path)
    with pytest.raises(ProfileError) as error:
        credentials(jars_dir=str(tmp_path / "missing"))
    assert_names_key(error, "jars_dir")
    assert "not a folder" in str(error.value) and "dbt-s3tables-jars" in str(error.value)
    mirror = "https://artifacts.example.com/maven"
    assert credentials(maven_repository=mirror).jar_sources.repository_url == mirror
    with pytest.raises(ProfileError) as error:
        credentials(maven_repository="artifacts.example.com")
    assert_names_key(error, "maven_repository")
    assert "not a URL" in str(error.value)


# --- unknown keys ---


def test_a_misspelt_key_is_refused_with_the_nearest_key() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(wharehouse="./wh")
    assert_names_key(error, "wharehouse")
    message = str(error.value)
    assert "would be ignored (did you mean `warehouse`?)" in message
    assert "Fix: rename it to `warehouse`" in message


def test_every_unknown_key_is_named_and_a_far_one_gets_no_guess() -> None:
    with pytest.raises(ProfileError) as error:
        credentials(zzzzzz=1, mastr="local[1]")
    message = str(error.value)
    assert "`zzzzzz`" in message and "did you mean" not in message.split(";")[0]
    assert "also unknown: `mastr`" in message
    assert "Fix: remove it" in message


@pytest.mark.parametrize("key", ["driver", "cluster", "endpoint", "organization"])
def test_dbt_spark_keys_of_methods_this_adapter_lacks_are_refused(key: str) -> None:
    with pytest.raises(ProfileError) as error:
        credentials(**{key: "x"})
    assert_names_key(error, key)
    assert "`method: odbc` or `http`" in str(error.value)


def test_dbt_and_dbt_spark_keys_this_adapter_reads_pass() -> None:
    creds = credentials(
        database="analytics",
        method="thrift",
        host="127.0.0.1",
        user="me",
        auth="NONE",
        connect_retries=2,
        connect_timeout=5,
        retry_all=True,
        query_timeout=60,
        poll_interval=1,
        query_retries=2,
    )
    assert creds.connect_retries == 2 and creds.query_retries == 2


def test_every_profile_key_is_documented_on_the_profile_page() -> None:
    page = (Path(__file__).parents[2] / "docs" / "profile.md").read_text()
    undocumented = [k for k in S3TablesCredentials.profile_keys() if f"`{k}`" not in page]
    assert undocumented == []


def test_a_bad_wait_is_a_profile_error_naming_it() -> None:
    # Not a TypeError: the error used to be built with five arguments.
    with pytest.raises(ProfileError) as error:
        credentials(write_conflict_wait_seconds=0)
    assert_names_key(error, "write_conflict_wait_seconds")
    assert "positive" in str(error.value)


@pytest.mark.parametrize("method", ["thrift", "connect"])
def test_server_methods_refuse_secret_spark_conf_without_printing_it(method: str) -> None:
    conf = {"spark.sql.shuffle.partitions": "2", "spark.hadoop.fs.s3a.secret.key": "s3cr3t-9"}
    with pytest.raises(ProfileError) as error:
        credentials(method=method, host="127.0.0.1", spark_conf=conf)
    message = str(error.value)
    assert_names_key(error, "spark_conf.spark.hadoop.fs.s3a.secret.key")
    assert f"`method: {method}` could only send to the server in a SET statement" in message
    assert "s3cr3t-9" not in message
    assert "Fix: configure it where the server starts" in message
    # In-process, a secret is given to the running JVM (see spark_session.py).
    assert credentials(spark_conf=conf).spark_conf == conf


def test_a_serialized_profile_reads_back() -> None:
    # dbt serializes credentials with dbt-spark's defaults of the keys this adapter refuses.
    creds = credentials(method="thrift", host="127.0.0.1")
    again = S3TablesCredentials.from_dict(creds.to_dict(omit_none=True))
    assert again.host == "127.0.0.1" and again.organization == "0"


@pytest.mark.parametrize("seconds", [0.5, -1])
def test_a_progress_interval_under_a_second_is_a_profile_error(seconds: float) -> None:
    with pytest.raises(ProfileError) as error:
        credentials(progress_interval_seconds=seconds)
    assert_names_key(error, "progress_interval_seconds")


def test_progress_lines_and_the_spark_ui_reach_the_engines() -> None:
    settings = credentials(progress_interval_seconds=0, spark_ui=True).engine_settings()
    assert (settings.progress_seconds, settings.spark_ui) == (0, True)
    assert credentials().engine_settings().progress_seconds == 10


@pytest.mark.parametrize("method", ["thrift", "connect"])
def test_spark_ui_on_a_server_method_is_refused_not_ignored(method: str) -> None:
    with pytest.raises(ProfileError) as error:
        credentials(method=method, host="127.0.0.1", spark_ui=True)
    assert_names_key(error, "spark_ui")
