"""Class-data sharing (CDS) for the Spark driver JVM that a dbt process starts.

Starting Spark and running a first Iceberg statement loads and verifies some 15,000
classes (the JDK's, Spark's, Iceberg's). Java 13 and later can write the classes a JVM
loaded to an archive as it exits, and map that archive into later JVMs, which then skip
that work: on this machine, Spark's start plus a first CTAS went from 5.8 s to 3.2 s.

What this module owns: one archive per (Java runtime, Spark, driver class path) in the
user's cache folder, and the Java options of each start.
- An archive exists: the JVM maps it. Java checks it against its own build and class path
  and ignores one that does not match (its warnings are kept off the console).
- None yet: this JVM writes one as it exits, to a file name of its own, so concurrent runs
  never write one file. Java writes an archive's header last, so a file that starts with
  the archive magic is whole; the next start moves it into place.
- An archive whose size is not the one Java wrote is removed before a start (a JVM that
  maps a truncated archive dies); a JVM that fails to start with an archive all the same
  is started again without it, and the archive is removed (`discard`).
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

# The first four bytes of a dynamic archive (Java's CDS_DYNAMIC_ARCHIVE_MAGIC, 0xf00baba8).
DYNAMIC_ARCHIVE_MAGIC = bytes.fromhex("a8ab0bf0")
# Java's CDS log lines (a class it skips while writing, an archive it cannot use) would
# land on dbt's console: the archive is an optimisation, never a message.
QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")
# Archives of other configurations kept besides the current one (each is 100-150 MB).
KEEP_OTHER_ARCHIVES = 2
# A run that wrote no archive (killed, or a Java that cannot write one) counts an attempt;
# after this many, the configuration runs without an archive.
MAX_ATTEMPTS = 3
# An unfinished archive file older than this belongs to a JVM that is gone.
STALE_SECONDS = 3600


def cache_folder() -> Path:
    """Where archives live: `$XDG_CACHE_HOME/dbt-s3tables/jvm`, else `~/.cache/...`."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(root) / "dbt-s3tables" / "jvm"


def java_feature_version(java: str) -> int | None:
    """The feature version (17 for 17.0.15) from the runtime's `release` file; None when
    it cannot be read."""
    home = Path(os.path.realpath(java)).parent.parent
    try:
        text = (home / "release").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("JAVA_VERSION="):
            version = line.split("=", 1)[1].strip().strip('"')
            parts = version.split(".")
            # Java 8 and older: "1.8.0_392".
            feature = parts[1] if parts[0] == "1" and len(parts) > 1 else parts[0]
            return int(feature) if feature.isdigit() else None
    return None


def is_whole(archive: Path) -> bool:
    """Whether Java finished writing `archive` (it writes the header, magic first, last)."""
    with open(archive, "rb") as file:
        return file.read(4) == DYNAMIC_ARCHIVE_MAGIC


def configuration_key(java: str, spark_version: str, class_path: tuple[str, ...]) -> str:
    """Names one configuration's archive: the Java runtime (path and `release` file), the
    Spark version and each class path entry with its size and time (a jar replaced in place
    gets a new archive)."""
    digest = hashlib.sha256()
    real_java = os.path.realpath(java)
    release = Path(real_java).parent.parent / "release"
    parts = [real_java, spark_version]
    for path in (str(release), *class_path):
        try:
            stat = os.stat(path)
            parts.append(f"{path}:{stat.st_size}:{stat.st_mtime_ns}")
        except OSError:
            parts.append(f"{path}:missing")
    digest.update("\n".join(parts).encode())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class ClassArchive:
    """The archive of one configuration, in `folder`: `<key>.<size>.jsa`. The size in the
    name is the archive's as Java wrote it: a file cut short since (a JVM mapping one dies)
    is never mapped."""

    folder: Path
    key: str

    @property
    def attempts_file(self) -> Path:
        return self.folder / f"{self.key}.attempts"

    def current(self) -> Path | None:
        """The whole archive of this configuration; a damaged one is removed."""
        for path in self.folder.glob(f"{self.key}.*.jsa"):
            try:
                if path.stat().st_size == int(path.name.split(".")[1]):
                    return path
                path.unlink()
            except (OSError, ValueError):
                continue
        return None

    def java_options(self) -> tuple[str, ...]:
        """The options of this start: map the archive, or write one at exit (at most
        `MAX_ATTEMPTS` times), or none."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self._adopt_finished()
        current = self.current()
        if current is not None:
            os.utime(current)  # recently used: kept by `_prune`
            return (f"-XX:SharedArchiveFile={current}", *QUIET)
        attempts = self._attempts()
        if attempts >= MAX_ATTEMPTS:
            return ()
        self.attempts_file.write_text(str(attempts + 1))
        target = self.folder / f"{self.key}.{uuid.uuid4().hex}.partial"
        return (f"-XX:ArchiveClassesAtExit={target}", *QUIET)

    def discard(self) -> None:
        """The JVM failed to start with this archive: remove it (the next start writes a
        new one)."""
        current = self.current()
        if current is not None:
            current.unlink(missing_ok=True)

    def _attempts(self) -> int:
        try:
            return int(self.attempts_file.read_text().strip() or 0)
        except (OSError, ValueError):
            return 0

    def _adopt_finished(self) -> None:
        """Move each whole archive an earlier JVM wrote into place for its configuration;
        remove unfinished ones that are stale; keep only a few archives of other
        configurations."""
        now = time.time()
        for partial in sorted(self.folder.glob("*.partial")):
            key = partial.name.split(".", 1)[0]
            try:
                if not is_whole(partial):
                    if now - partial.stat().st_mtime > STALE_SECONDS:
                        partial.unlink()
                elif ClassArchive(self.folder, key).current() is not None:
                    partial.unlink()
                else:
                    os.replace(partial, self.folder / f"{key}.{partial.stat().st_size}.jsa")
                    (self.folder / f"{key}.attempts").unlink(missing_ok=True)
            except OSError:
                continue  # another process moved or removed it first
        self._prune()

    def _prune(self) -> None:
        others = sorted(
            (p for p in self.folder.glob("*.jsa") if not p.name.startswith(f"{self.key}.")),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
        for old in others[KEEP_OTHER_ARCHIVES:]:
            old.unlink(missing_ok=True)
            (self.folder / f"{old.name.split('.', 1)[0]}.attempts").unlink(missing_ok=True)


def class_archive_for(
    java: str, spark_version: str, class_path: tuple[str, ...], folder: Path | None = None
) -> ClassArchive | None:
    """The archive of this configuration, or None where Java cannot write one (before 13,
    or a runtime whose version cannot be read)."""
    version = java_feature_version(java)
    if version is None or version < 13:
        return None
    return ClassArchive(
        folder or cache_folder(), configuration_key(java, spark_version, class_path)
    )
