"""The jars the Spark driver needs, as Maven artifacts pinned here, and where they come from.

Every jar is named by Maven coordinates with its version pinned in this module (one place).
A jar is looked for, in order, in the profile's `jars_dir` (an offline folder), in the
local Maven repository (`~/.m2/repository`, the layout `mvn` and Spark's `--packages`
share), and otherwise downloaded once from `maven_repository` (Maven Central unless the
profile names a mirror) into that local repository, checked against its published SHA-1.
`dbt-s3tables-jars` fetches them ahead of time (`make setup` does), or
into a folder to copy to a machine without network.

Iceberg's Spark runtime is built per Spark line and Scala version: the one chosen matches the
installed pyspark (3.5 with Scala 2.12, the default, or 4.1 with Scala 2.13). The other jars
are Scala-free and the same for both.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dbt.adapters.s3tables.errors import MissingDependencyError

# Iceberg's Spark runtime and its AWS bundle move together (the bundle is the AWS SDK the
# runtime's S3FileIO and SigV4 signer call).
ICEBERG_VERSION = "1.12.0"
# The Spark lines Iceberg 1.12's Spark runtime is published for, each with the Scala version
# its pyspark is built with (1.12 has no runtime for Spark 4.0, nor yet for 4.2).
SCALA_VERSION_BY_SPARK_LINE = {"3.5": "2.12", "4.1": "2.13"}
MAVEN_CENTRAL = "https://repo.maven.apache.org/maven2"
LOCAL_REPOSITORY = Path.home() / ".m2" / "repository"
DOWNLOAD_TIMEOUT_SECONDS = 30
FETCH_COMMAND = "dbt-s3tables-jars"


@dataclass(frozen=True)
class Artifact:
    """One jar by Maven coordinates."""

    group: str
    name: str
    version: str
    # Why the adapter needs it, for messages.
    purpose: str

    @property
    def coordinates(self) -> str:
        return f"{self.group}:{self.name}:{self.version}"

    @property
    def file_name(self) -> str:
        return f"{self.name}-{self.version}.jar"

    @property
    def repository_path(self) -> str:
        """Its path inside a Maven repository (local folder or remote URL)."""
        return "/".join([*self.group.split("."), self.name, self.version, self.file_name])


def spark_line(spark_version: str) -> str:
    """The Spark line (`4.1` for `4.1.4`) of a supported Spark version, or raise with the fix."""
    line = ".".join(spark_version.split(".")[:2])
    if line not in SCALA_VERSION_BY_SPARK_LINE:
        supported = " and ".join(SCALA_VERSION_BY_SPARK_LINE)
        raise MissingDependencyError(
            f"pyspark {spark_version} is not supported: Iceberg {ICEBERG_VERSION}'s Spark "
            f"runtime exists for Spark {supported}. Fix: `pip install dbt-s3tables` (Spark "
            "3.5, the default) or `pip install 'dbt-s3tables-core[spark41]'` (Spark 4.1)."
        )
    return line


def installed_spark_line() -> str:
    """The Spark line of the pyspark this Python runs."""
    import pyspark

    return spark_line(pyspark.__version__)


def scala_version(line: str) -> str:
    """The Scala version pyspark of this Spark line is built with."""
    return SCALA_VERSION_BY_SPARK_LINE[spark_line(line)]


def iceberg_spark_runtime(line: str | None = None) -> Artifact:
    """Iceberg's Spark runtime for a Spark line (default: the installed pyspark's)."""
    line = spark_line(line or installed_spark_line())
    return Artifact(
        "org.apache.iceberg",
        f"iceberg-spark-runtime-{line}_{scala_version(line)}",
        ICEBERG_VERSION,
        f"Iceberg's Spark {line} runtime",
    )


ICEBERG_AWS_BUNDLE = Artifact(
    "org.apache.iceberg",
    "iceberg-aws-bundle",
    ICEBERG_VERSION,
    "Iceberg's AWS bundle (SigV4 signing, S3FileIO)",
)
SQLITE_JDBC = Artifact(
    "org.xerial", "sqlite-jdbc", "3.46.1.3", "the SQLite JDBC driver of the embedded catalog"
)
S3TABLES_CATALOG_RUNTIME = Artifact(
    "software.amazon.s3tables",
    "s3-tables-catalog-for-iceberg-runtime",
    "0.1.8",
    "Amazon's S3 Tables catalog (s3tables_client: catalog_jar)",
)


def spark_connect_server(line: str | None = None) -> tuple[Artifact, ...]:
    """Spark Connect's server jar (`dbt-s3tables-engine start connect`), run on pyspark's
    own Spark jars: pyspark 4 ships it; for 3.5, the newest 3.5 release on Maven Central
    (3.5 patch releases keep the server's interfaces)."""
    line = spark_line(line or installed_spark_line())
    if line != "3.5":
        return ()
    return (
        Artifact(
            "org.apache.spark",
            f"spark-connect_{scala_version(line)}",
            "3.5.7",
            "Spark Connect's server (dbt-s3tables-engine start connect)",
        ),
    )


def default_artifacts(line: str | None = None) -> tuple[Artifact, ...]:
    """What `make setup` and the fetch command get by default: what every catalog type but
    `catalog_jar` needs, on a Spark line (default: the installed pyspark's)."""
    return (iceberg_spark_runtime(line), ICEBERG_AWS_BUNDLE, SQLITE_JDBC)


@dataclass(frozen=True)
class JarSources:
    """Where jars are looked for and fetched from (profile keys `jars_dir`, `maven_repository`)."""

    jars_dir: str | None = None
    repository_url: str = MAVEN_CENTRAL
    local_repository: Path = LOCAL_REPOSITORY

    def find(self, artifact: Artifact) -> str | None:
        """The jar's path on this machine, if it is there."""
        candidates = [self.local_repository / artifact.repository_path]
        if self.jars_dir:
            candidates.insert(0, Path(self.jars_dir) / artifact.file_name)
        return next((str(path) for path in candidates if path.is_file()), None)

    def url(self, artifact: Artifact) -> str:
        return f"{self.repository_url.rstrip('/')}/{artifact.repository_path}"


@dataclass(frozen=True)
class JarPlan:
    """The jar files the Spark driver starts with."""

    jars: tuple[str, ...] = ()

    def spark_settings(self) -> dict[str, str]:
        return {"spark.jars": ",".join(self.jars)} if self.jars else {}


def unique(artifacts: Iterable[Artifact]) -> tuple[Artifact, ...]:
    return tuple(dict.fromkeys(artifacts))


def download(artifact: Artifact, sources: JarSources, target: Path) -> None:
    """Download the jar to `target`, checked against the repository's SHA-1, atomically
    (a concurrent process downloading the same jar never sees half a file)."""
    url = sources.url(artifact)
    with urllib.request.urlopen(f"{url}.sha1", timeout=DOWNLOAD_TIMEOUT_SECONDS) as response:
        expected = response.read().decode().split()[0].strip().lower()
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1(usedforsecurity=False)
    with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".part", delete=False) as part:
        try:
            with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_SECONDS) as response:
                while chunk := response.read(1 << 20):
                    digest.update(chunk)
                    part.write(chunk)
        except BaseException:
            os.unlink(part.name)
            raise
    if digest.hexdigest() != expected:
        os.unlink(part.name)
        raise OSError(f"{url} does not match its published SHA-1")
    os.replace(part.name, target)


def missing_jar_error(artifact: Artifact, sources: JarSources, reason: str) -> str:
    where = f"`jars_dir` ({sources.jars_dir}) or " if sources.jars_dir else ""
    return (
        f"{artifact.purpose}, {artifact.coordinates}, is not in {where}the local Maven "
        f"repository ({sources.local_repository}) and could not be downloaded from "
        f"{sources.repository_url} ({reason})"
    )


def resolve_jars(artifacts: Iterable[Artifact], sources: JarSources) -> JarPlan:
    """Each artifact's jar on this machine, downloading what is missing, or raise naming
    every jar that cannot be had and the fix."""
    from dbt.adapters.events.logging import AdapterLogger

    logger = AdapterLogger("s3tables")
    paths: list[str] = []
    failures: list[str] = []
    for artifact in unique(artifacts):
        path = sources.find(artifact)
        if path is None:
            target = sources.local_repository / artifact.repository_path
            logger.info(f"Downloading {artifact.coordinates} (once) into {target.parent}")
            try:
                download(artifact, sources, target)
                path = str(target)
            except (OSError, urllib.error.URLError) as error:
                failures.append(missing_jar_error(artifact, sources, str(error)))
                continue
        paths.append(path)
    if failures:
        raise MissingDependencyError(
            "Cannot start Spark: "
            + "; ".join(failures)
            + f". Fix: on a machine with network run `{FETCH_COMMAND} --to <folder>` and set "
            "`jars_dir` to that folder, or set `maven_repository` to a reachable mirror."
        )
    return JarPlan(jars=tuple(paths))


def find_java() -> str:
    """Path of the `java` binary Spark will use, or raise with the install command."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = os.path.join(java_home, "bin", "java")
        if os.access(candidate, os.X_OK):
            return candidate
        # Spark's launch script runs $JAVA_HOME/bin/java whenever JAVA_HOME is set.
        on_path = shutil.which("java")
        instead = f", or unset it to use {on_path} on PATH" if on_path else ""
        raise MissingDependencyError(
            f"Cannot start Spark: JAVA_HOME is {java_home}, which has no bin/java (Spark runs "
            f"$JAVA_HOME/bin/java). Fix: point JAVA_HOME at a Java 17 runtime{instead}."
        )
    found = shutil.which("java")
    if found:
        return found
    raise MissingDependencyError(
        "Cannot start Spark: no Java runtime found (JAVA_HOME unset and no `java` on PATH). "
        "Install Java 17 with `apt-get install openjdk-17-jre-headless`."
    )


def main(argv: list[str] | None = None) -> int:
    """Fetch the pinned jars ahead of time, into the local Maven repository or a folder."""
    parser = argparse.ArgumentParser(prog=FETCH_COMMAND, description=main.__doc__)
    parser.add_argument("--to", help="a folder to copy the jars into (for `jars_dir`)")
    parser.add_argument(
        "--repository", default=MAVEN_CENTRAL, help="Maven repository URL (default: Central)"
    )
    parser.add_argument(
        "--local-repository",
        default=str(LOCAL_REPOSITORY),
        help=f"local Maven repository (default: {LOCAL_REPOSITORY})",
    )
    parser.add_argument(
        "--spark",
        choices=list(SCALA_VERSION_BY_SPARK_LINE),
        help="the Spark line to fetch Iceberg's runtime for (default: the installed pyspark's)",
    )
    parser.add_argument(
        "--with-catalog-jar",
        action="store_true",
        help=f"also fetch {S3TABLES_CATALOG_RUNTIME.coordinates}",
    )
    arguments = parser.parse_args(argv)
    try:
        artifacts = list(default_artifacts(arguments.spark))
        if arguments.with_catalog_jar:
            artifacts.append(S3TABLES_CATALOG_RUNTIME)
        sources = JarSources(
            repository_url=arguments.repository,
            local_repository=Path(arguments.local_repository),
        )
        plan = resolve_jars(artifacts, sources)
    except MissingDependencyError as error:
        print(error, file=sys.stderr)
        return 1
    for path in plan.jars:
        if arguments.to:
            os.makedirs(arguments.to, exist_ok=True)
            shutil.copy2(path, arguments.to)
        print(path)
    return 0
