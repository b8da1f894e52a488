"""Which jars the Spark driver needs, found on this machine first, from Maven second.

`plan_jars` is pure (it takes what discovery found); `discover` looks at the disk.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import platform
import shutil
import socket
from dataclasses import dataclass

from dbt.adapters.s3tables.errors import MissingDependencyError

ICEBERG_VERSION = "1.10.0"
SCALA_VERSION = "2.12"
ICEBERG_MAVEN = f"org.apache.iceberg:iceberg-spark-runtime-3.5_{SCALA_VERSION}:{ICEBERG_VERSION}"
SQLITE_MAVEN = "org.xerial:sqlite-jdbc:3.46.1.3"
ICEBERG_PIP_PACKAGE = "snowpark-connect-deps-iceberg==1.0.2"
SQLITE_DEBIAN_PACKAGE = "libxerial-sqlite-jdbc-java"
SQLITE_DEBIAN_JAR = "/usr/share/java/sqlite-jdbc.jar"
MAVEN_HOST = ("repo1.maven.org", 443)


@dataclass(frozen=True)
class FoundJars:
    """What discovery found on this machine (None: not found)."""

    iceberg_runtime: str | None
    sqlite_jdbc: str | None
    # Debian's sqlite-jdbc loads its native library from here instead of from the jar.
    sqlite_native_dir: str | None = None


@dataclass(frozen=True)
class JarPlan:
    """How the Spark driver gets its jars."""

    jars: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()
    library_path: str | None = None

    def spark_settings(self) -> dict[str, str]:
        settings: dict[str, str] = {}
        if self.jars:
            settings["spark.jars"] = ",".join(self.jars)
        if self.packages:
            settings["spark.jars.packages"] = ",".join(self.packages)
        if self.library_path:
            settings["spark.driver.extraLibraryPath"] = self.library_path
            settings["spark.executor.extraLibraryPath"] = self.library_path
        return settings


def plan_jars(found: FoundJars, *, needs_sqlite: bool, maven_reachable: bool) -> JarPlan:
    """Choose installed jars first, Maven coordinates second, or raise what to install."""
    jars: list[str] = []
    packages: list[str] = []
    missing: list[str] = []
    if found.iceberg_runtime:
        jars.append(found.iceberg_runtime)
    elif maven_reachable:
        packages.append(ICEBERG_MAVEN)
    else:
        missing.append(
            f"the Iceberg Spark runtime jar (iceberg-spark-runtime-3.5_{SCALA_VERSION}): "
            f"install it with `pip install '{ICEBERG_PIP_PACKAGE}'`"
        )
    library_path = None
    if needs_sqlite:
        if found.sqlite_jdbc:
            jars.append(found.sqlite_jdbc)
            library_path = found.sqlite_native_dir
        elif maven_reachable:
            packages.append(SQLITE_MAVEN)
        else:
            missing.append(
                "the SQLite JDBC driver used by the local catalog: install it with "
                f"`apt-get install {SQLITE_DEBIAN_PACKAGE}`"
            )
    if missing:
        raise MissingDependencyError(
            "Cannot start Spark: missing "
            + "; and ".join(missing)
            + ". Maven Central is not reachable from this machine, so they cannot be "
            "downloaded through spark.jars.packages either."
        )
    return JarPlan(jars=tuple(jars), packages=tuple(packages), library_path=library_path)


def find_iceberg_runtime() -> str | None:
    spec = importlib.util.find_spec("snowpark_connect_deps_iceberg")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        pattern = os.path.join(folder, "jars", f"iceberg-spark-runtime-3.5_{SCALA_VERSION}-*.jar")
        matches = sorted(glob.glob(pattern))
        if matches:
            return matches[-1]
    return None


def find_sqlite_jdbc() -> tuple[str | None, str | None]:
    if not os.path.exists(SQLITE_DEBIAN_JAR):
        return None, None
    machine = platform.machine()
    arch = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu"}.get(machine, machine)
    native_dir = f"/usr/lib/{arch}/jni"
    return SQLITE_DEBIAN_JAR, native_dir if os.path.isdir(native_dir) else None


def discover() -> FoundJars:
    sqlite_jar, native_dir = find_sqlite_jdbc()
    return FoundJars(
        iceberg_runtime=find_iceberg_runtime(),
        sqlite_jdbc=sqlite_jar,
        sqlite_native_dir=native_dir,
    )


def maven_reachable(timeout: float = 2.0) -> bool:
    try:
        with socket.create_connection(MAVEN_HOST, timeout=timeout):
            return True
    except OSError:
        return False


def resolve_jars(*, needs_sqlite: bool) -> JarPlan:
    """Plan jars for this machine, probing Maven only when something is missing locally."""
    found = discover()
    complete = bool(found.iceberg_runtime and (found.sqlite_jdbc or not needs_sqlite))
    return plan_jars(
        found, needs_sqlite=needs_sqlite, maven_reachable=not complete and maven_reachable()
    )


def find_java() -> str:
    """Path of the `java` binary Spark will use, or raise with the install command."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = os.path.join(java_home, "bin", "java")
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("java")
    if found:
        return found
    raise MissingDependencyError(
        "Cannot start Spark: no Java runtime found (JAVA_HOME unset and no `java` on PATH). "
        "Install Java 17 with `apt-get install openjdk-17-jre-headless`."
    )
