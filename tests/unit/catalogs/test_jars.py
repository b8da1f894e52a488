"""Jars by Maven coordinates: where each is found, downloading with a checksum, what
each catalog type needs, and Java discovery."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.jars import (
    ICEBERG_AWS_BUNDLE,
    ICEBERG_VERSION,
    S3TABLES_CATALOG_RUNTIME,
    SQLITE_JDBC,
    Artifact,
    JarPlan,
    JarSources,
    default_artifacts,
    find_java,
    iceberg_spark_runtime,
    installed_spark_line,
    main,
    resolve_jars,
    spark_connect_server,
    spark_line,
)
from dbt.adapters.s3tables.errors import MissingDependencyError

JAR = Artifact("org.example", "thing-runtime", "1.2.3", "a test jar")
# The runtime of the pyspark these tests run on.
ICEBERG_SPARK_RUNTIME = iceberg_spark_runtime()


def publish(repository: Path, artifact: Artifact, content: bytes, sha1: str | None = None) -> None:
    """Put `artifact` in a Maven repository folder, with its `.sha1` file."""
    path = repository / artifact.repository_path
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    digest = sha1 or hashlib.sha1(content).hexdigest()
    Path(f"{path}.sha1").write_text(f"{digest}  {artifact.file_name}\n")


def test_coordinates_and_repository_layout() -> None:
    assert JAR.coordinates == "org.example:thing-runtime:1.2.3"
    assert JAR.repository_path == "org/example/thing-runtime/1.2.3/thing-runtime-1.2.3.jar"
    # The runtime and its AWS bundle are pinned together.
    assert ICEBERG_AWS_BUNDLE.version == ICEBERG_SPARK_RUNTIME.version


@pytest.mark.parametrize(
    ("spark_version", "runtime"),
    [
        ("3.5.9", "iceberg-spark-runtime-3.5_2.12"),
        ("3.5.0", "iceberg-spark-runtime-3.5_2.12"),
        ("4.1.4", "iceberg-spark-runtime-4.1_2.13"),
        ("4.1.0.dev1", "iceberg-spark-runtime-4.1_2.13"),
    ],
)
def test_the_runtime_matches_the_spark_line_and_its_scala(spark_version: str, runtime) -> None:
    artifact = iceberg_spark_runtime(spark_line(spark_version))
    assert artifact.coordinates == f"org.apache.iceberg:{runtime}:{ICEBERG_VERSION}"
    assert artifact == iceberg_spark_runtime(spark_version)


def test_the_runtime_follows_the_installed_pyspark() -> None:
    import pyspark

    assert installed_spark_line() == ".".join(pyspark.__version__.split(".")[:2])
    assert ICEBERG_SPARK_RUNTIME == iceberg_spark_runtime(pyspark.__version__)
    assert default_artifacts()[0] == ICEBERG_SPARK_RUNTIME


@pytest.mark.parametrize("spark_version", ["3.4.3", "4.0.5", "4.2.1", "3.3.2"])
def test_an_unsupported_pyspark_is_named_with_the_fix(spark_version: str) -> None:
    with pytest.raises(MissingDependencyError) as error:
        spark_line(spark_version)
    message = str(error.value)
    assert f"pyspark {spark_version} is not supported" in message
    assert "Spark 3.5 and 4.1" in message
    assert "`pip install dbt-s3tables` (Spark 3.5, the default)" in message
    assert "`pip install 'dbt-s3tables-core[spark41]'` (Spark 4.1)" in message


def test_jars_dir_comes_before_the_local_repository(tmp_path: Path) -> None:
    local = tmp_path / "m2"
    publish(local, JAR, b"from the local repository")
    sources = JarSources(local_repository=local)
    assert sources.find(JAR) == str(local / JAR.repository_path)
    offline = tmp_path / "offline"
    offline.mkdir()
    (offline / JAR.file_name).write_bytes(b"from the offline folder")
    with_folder = JarSources(jars_dir=str(offline), local_repository=local)
    assert with_folder.find(JAR) == str(offline / JAR.file_name)


def test_a_missing_jar_is_downloaded_once_into_the_local_repository(tmp_path: Path) -> None:
    remote = tmp_path / "remote"
    publish(remote, JAR, b"jar bytes")
    sources = JarSources(repository_url=remote.as_uri(), local_repository=tmp_path / "m2")
    plan = resolve_jars([JAR, JAR], sources)
    target = tmp_path / "m2" / JAR.repository_path
    assert plan.jars == (str(target),)
    assert target.read_bytes() == b"jar bytes"
    (remote / JAR.repository_path).unlink()  # found locally now: no second download
    assert resolve_jars([JAR], sources).jars == (str(target),)


def test_a_download_that_does_not_match_its_checksum_is_refused(tmp_path: Path) -> None:
    remote = tmp_path / "remote"
    publish(remote, JAR, b"tampered", sha1="0" * 40)
    sources = JarSources(repository_url=remote.as_uri(), local_repository=tmp_path / "m2")
    with pytest.raises(MissingDependencyError, match="does not match its published SHA-1"):
        resolve_jars([JAR], sources)
    folder = tmp_path / "m2" / JAR.repository_path
    assert not folder.parent.exists() or list(folder.parent.iterdir()) == []


def test_every_missing_jar_is_named_with_the_fix(tmp_path: Path) -> None:
    other = Artifact("org.example", "other", "9", "another jar")
    sources = JarSources(
        jars_dir=str(tmp_path),
        repository_url=(tmp_path / "empty").as_uri(),
        local_repository=tmp_path / "m2",
    )
    with pytest.raises(MissingDependencyError) as error:
        resolve_jars([JAR, other], sources)
    message = str(error.value)
    assert JAR.coordinates in message and other.coordinates in message
    assert f"`jars_dir` ({tmp_path})" in message
    assert "dbt-s3tables-jars --to <folder>" in message
    assert "`maven_repository`" in message


def test_fetch_command_copies_into_a_folder(tmp_path: Path) -> None:
    remote = tmp_path / "remote"
    for artifact in (ICEBERG_SPARK_RUNTIME, ICEBERG_AWS_BUNDLE, SQLITE_JDBC):
        publish(remote, artifact, artifact.name.encode())
    arguments = ["--to", str(tmp_path / "offline"), "--repository", remote.as_uri()]
    assert main([*arguments, "--local-repository", str(tmp_path / "m2")]) == 0
    assert sorted(p.name for p in (tmp_path / "offline").iterdir()) == sorted(
        a.file_name for a in (ICEBERG_SPARK_RUNTIME, ICEBERG_AWS_BUNDLE, SQLITE_JDBC)
    )


def test_fetch_command_fetches_for_the_other_spark_line(tmp_path: Path) -> None:
    remote = tmp_path / "remote"
    spark41 = (iceberg_spark_runtime("4.1"), ICEBERG_AWS_BUNDLE, SQLITE_JDBC)
    for artifact in spark41:
        publish(remote, artifact, artifact.name.encode())
    arguments = ["--spark", "4.1", "--to", str(tmp_path / "offline"), "--repository"]
    assert main([*arguments, remote.as_uri(), "--local-repository", str(tmp_path / "m2")]) == 0
    assert sorted(p.name for p in (tmp_path / "offline").iterdir()) == sorted(
        a.file_name for a in spark41
    )


def config(catalog_type: str, **values) -> CatalogConfig:
    return CatalogConfig(name="c", catalog_type=catalog_type, warehouse="w", **values)


@pytest.mark.parametrize(
    ("catalog", "expected"),
    [
        (config("local"), (ICEBERG_SPARK_RUNTIME, SQLITE_JDBC)),
        (config("rest", uri="http://x"), (ICEBERG_SPARK_RUNTIME,)),
        (
            config("rest", uri="http://x", signing_name="execute-api", region="eu-west-1"),
            (ICEBERG_SPARK_RUNTIME, ICEBERG_AWS_BUNDLE),
        ),
        (
            config(
                "rest",
                uri="http://x",
                extra_properties=(("io-impl", "org.apache.iceberg.aws.s3.S3FileIO"),),
            ),
            (ICEBERG_SPARK_RUNTIME, ICEBERG_AWS_BUNDLE),
        ),
        (config("glue", region="eu-west-1"), (ICEBERG_SPARK_RUNTIME, ICEBERG_AWS_BUNDLE)),
        (config("s3tables", region="eu-west-1"), (ICEBERG_SPARK_RUNTIME, ICEBERG_AWS_BUNDLE)),
        (
            config("s3tables", region="eu-west-1", s3tables_client="catalog_jar"),
            (ICEBERG_SPARK_RUNTIME, ICEBERG_AWS_BUNDLE, S3TABLES_CATALOG_RUNTIME),
        ),
    ],
)
def test_each_catalog_type_names_the_jars_it_needs(catalog: CatalogConfig, expected) -> None:
    assert catalog.jar_artifacts == expected


def test_spark_settings_list_the_jars() -> None:
    assert JarPlan(jars=("a.jar", "b.jar")).spark_settings() == {"spark.jars": "a.jar,b.jar"}
    assert JarPlan().spark_settings() == {}


def test_find_java_without_java_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "")
    with pytest.raises(MissingDependencyError) as error:
        find_java()
    assert "apt-get install openjdk-17-jre-headless" in str(error.value)


def fake_java(folder: Path) -> str:
    java = folder / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\n")
    java.chmod(0o755)
    return str(java)


def test_find_java_prefers_java_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    java = fake_java(tmp_path / "jdk")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    monkeypatch.setenv("PATH", "")
    assert find_java() == java


def test_a_java_home_without_java_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Spark's launch script runs $JAVA_HOME/bin/java: a `java` on PATH would not be used.
    java = fake_java(tmp_path / "usr")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-such-jdk"))
    monkeypatch.setenv("PATH", os.path.dirname(java))
    with pytest.raises(MissingDependencyError) as error:
        find_java()
    message = str(error.value)
    assert f"JAVA_HOME is {tmp_path / 'no-such-jdk'}, which has no bin/java" in message
    assert f"or unset it to use {java} on PATH" in message


def test_without_java_home_java_comes_from_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    java = fake_java(tmp_path / "usr")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", os.path.dirname(java))
    assert find_java() == java


def test_the_connect_server_jar_comes_from_maven_for_35_and_with_pyspark_4() -> None:
    (server,) = spark_connect_server("3.5.9")
    assert server.coordinates == "org.apache.spark:spark-connect_2.12:3.5.7"
    assert spark_connect_server("4.1.4") == ()  # pyspark 4 ships spark-connect_2.13
