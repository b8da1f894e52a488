"""Bad profiles fail at `dbt debug` with a message naming the key and the fix, and
create nothing. Each case runs dbt in a subprocess: no Spark starts, and the missing-Java
case needs an environment of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dbt.adapters.s3tables.catalogs.jars import ICEBERG_VERSION, SQLITE_JDBC, iceberg_spark_runtime
from tests.functional.harness import run_dbt_process, write_project


def run_debug(
    tmp_path: Path, target: dict, env: dict | None = None, command: str = "debug"
) -> subprocess.CompletedProcess:
    profile = {"type": "s3tables", "schema": "analytics", **target}
    project = write_project(
        tmp_path / "project", "profile_errors", profile="errors", output=profile
    )
    return run_dbt_process(
        [command], project_dir=project, profiles_dir=project, env=env, timeout=300
    )


# Three bad profiles through dbt: a bad value, a misspelt key, and a secret the engine
# could only send where its logs record it. Each other key's message is checked without a
# dbt process in tests/unit/test_credentials.py; a dbt process each added 5 s of CPU.
@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ({"method": "odbc"}, ["`method`", "unknown value `odbc`", "session"]),
        (
            {"wharehouse": "./wh"},
            ["`wharehouse`", "(did you mean `warehouse`?)", "rename it to `warehouse`"],
        ),
        (
            {
                "method": "thrift",
                "host": "127.0.0.1",
                "spark_conf": {"spark.hadoop.fs.s3a.secret.key": "s3cr3t-9"},
            },
            [
                "`spark_conf.spark.hadoop.fs.s3a.secret.key`",
                "names a secret",
                "where the server starts",
            ],
        ),
    ],
)
def test_bad_profile_key_is_named(tmp_path: Path, target: dict, expected: list[str]) -> None:
    warehouse = tmp_path / "warehouse"
    result = run_debug(tmp_path, {"warehouse": str(warehouse), **target})
    output = result.stdout + result.stderr
    assert result.returncode != 0
    for fragment in expected:
        assert fragment in output, output
    assert "Fix:" in output
    assert "s3cr3t-9" not in output
    assert not warehouse.exists()


@pytest.mark.parametrize("command", ["run"])
def test_a_misspelt_profile_key_fails_every_command(tmp_path: Path, command: str) -> None:
    result = run_debug(tmp_path, {"wharehouse": "./wh"}, command=command)
    assert result.returncode != 0
    assert "(did you mean `warehouse`?)" in result.stdout + result.stderr
    assert not (tmp_path / "project" / "warehouse").exists()


def test_warehouse_under_a_file_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("x")
    warehouse = blocker / "warehouse"
    result = run_debug(tmp_path, {"warehouse": str(warehouse)})
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "`warehouse`" in output and "is a file, not a folder" in output, output
    assert blocker.read_text() == "x"


def test_missing_java_is_named_with_install_command(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    # Keep the virtualenv's scripts and python, drop every folder that holds a `java`.
    env["PATH"] = str(Path(sys.executable).parent)
    warehouse = tmp_path / "warehouse"
    result = run_debug(tmp_path, {"warehouse": str(warehouse)}, env=env)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "no Java runtime found" in output, output
    assert "apt-get install openjdk-17-jre-headless" in output


def test_debug_reports_versions_and_catalog(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    result = run_debug(tmp_path, {"warehouse": str(warehouse), "master": "local[1]"})
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Spark 3.5." in output and "Iceberg 1.12." in output and "PyIceberg 0.12." in output
    assert str(warehouse / "catalog.db") in output


def test_missing_jars_are_named_with_the_fix(tmp_path: Path) -> None:
    # No local Maven repository (a fresh HOME) and a repository that has nothing.
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    empty = (tmp_path / "empty-repository").as_uri()
    result = run_debug(
        tmp_path, {"warehouse": str(tmp_path / "warehouse"), "maven_repository": empty}, env=env
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0
    for coordinates in (iceberg_spark_runtime().coordinates, SQLITE_JDBC.coordinates):
        assert coordinates in output, output
    assert "dbt-s3tables-jars --to <folder>" in output and "`jars_dir`" in output


def test_an_offline_jar_folder_is_enough(tmp_path: Path) -> None:
    # Prepared where the jars are (`dbt-s3tables-jars --to`), used where nothing else is.
    jars = tmp_path / "jars"
    fetch = subprocess.run(
        [str(Path(sys.executable).parent / "dbt-s3tables-jars"), "--to", str(jars)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert fetch.returncode == 0, fetch.stderr
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    target = {
        "warehouse": str(tmp_path / "warehouse"),
        "master": "local[1]",
        "jars_dir": str(jars),
        "maven_repository": (tmp_path / "empty-repository").as_uri(),
    }
    result = run_debug(tmp_path, target, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert f"Iceberg {ICEBERG_VERSION}" in output
    assert not (tmp_path / "home" / ".m2").exists()
