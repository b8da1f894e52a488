"""Jar planning (pure) and Java discovery."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dbt.adapters.s3tables.errors import MissingDependencyError
from dbt.adapters.s3tables.jars import (
    ICEBERG_MAVEN,
    SQLITE_MAVEN,
    FoundJars,
    JarPlan,
    find_java,
    plan_jars,
)

ICEBERG_JAR = "/site/jars/iceberg-spark-runtime-3.5_2.12-1.10.0.jar"
SQLITE_JAR = "/usr/share/java/sqlite-jdbc.jar"
NATIVE_DIR = "/usr/lib/x86_64-linux-gnu/jni"
ALL_FOUND = FoundJars(
    iceberg_runtime=ICEBERG_JAR, sqlite_jdbc=SQLITE_JAR, sqlite_native_dir=NATIVE_DIR
)
NOTHING_FOUND = FoundJars(iceberg_runtime=None, sqlite_jdbc=None)


@pytest.mark.parametrize("reachable", [True, False])
def test_everything_installed_uses_local_jars(reachable: bool) -> None:
    plan = plan_jars(ALL_FOUND, needs_sqlite=True, maven_reachable=reachable)
    assert plan.jars == (ICEBERG_JAR, SQLITE_JAR)
    assert plan.library_path == NATIVE_DIR
    assert plan.packages == ()


def test_missing_iceberg_comes_from_maven() -> None:
    found = FoundJars(iceberg_runtime=None, sqlite_jdbc=SQLITE_JAR)
    plan = plan_jars(found, needs_sqlite=True, maven_reachable=True)
    assert plan.packages == (ICEBERG_MAVEN,)
    assert plan.jars == (SQLITE_JAR,)
    assert plan.spark_settings()["spark.jars.packages"] == ICEBERG_MAVEN
    assert "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:" in ICEBERG_MAVEN


def test_nothing_installed_comes_from_maven() -> None:
    plan = plan_jars(NOTHING_FOUND, needs_sqlite=True, maven_reachable=True)
    assert plan.jars == ()
    assert set(plan.packages) == {ICEBERG_MAVEN, SQLITE_MAVEN}
    assert plan.library_path is None


def test_nothing_installed_and_maven_unreachable_says_what_to_install() -> None:
    with pytest.raises(MissingDependencyError) as error:
        plan_jars(NOTHING_FOUND, needs_sqlite=True, maven_reachable=False)
    message = str(error.value)
    assert "pip install 'snowpark-connect-deps-iceberg==1.0.2'" in message
    assert "apt-get install libxerial-sqlite-jdbc-java" in message


def test_only_sqlite_missing_and_maven_unreachable_names_only_sqlite() -> None:
    found = FoundJars(iceberg_runtime=ICEBERG_JAR, sqlite_jdbc=None)
    with pytest.raises(MissingDependencyError) as error:
        plan_jars(found, needs_sqlite=True, maven_reachable=False)
    assert "libxerial-sqlite-jdbc-java" in str(error.value)
    assert "pip install" not in str(error.value)


def test_sqlite_ignored_when_not_needed() -> None:
    found = FoundJars(iceberg_runtime=ICEBERG_JAR, sqlite_jdbc=None)
    plan = plan_jars(found, needs_sqlite=False, maven_reachable=False)
    assert plan.jars == (ICEBERG_JAR,)
    assert plan.packages == ()
    assert plan.library_path is None
    installed = plan_jars(ALL_FOUND, needs_sqlite=False, maven_reachable=True)
    assert SQLITE_JAR not in installed.jars
    assert installed.library_path is None


def test_spark_settings_keys() -> None:
    plan = JarPlan(jars=("a.jar", "b.jar"), packages=("g:a:1", "g:b:2"), library_path="/lib")
    assert plan.spark_settings() == {
        "spark.jars": "a.jar,b.jar",
        "spark.jars.packages": "g:a:1,g:b:2",
        "spark.driver.extraLibraryPath": "/lib",
        "spark.executor.extraLibraryPath": "/lib",
    }


def test_empty_plan_sets_nothing() -> None:
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


def test_find_java_falls_back_to_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    java = fake_java(tmp_path / "usr")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-such-jdk"))
    monkeypatch.setenv("PATH", os.path.dirname(java))
    assert find_java() == java
