"""Class-data sharing (CDS) for the Spark driver JVM that a dbt process starts.

Starting Spark and running a first Iceberg statement loads and verifies some 15,000
classes (the JDK's, Spark's, Iceberg's). Java 13 and later can write the classes a JVM
loaded to an archive as it exits, and map that archive into later JVMs, which then skip
that work: on this machine, Spark's start plus a first CTAS went from 5.8 s to 3.2 s.

What this module owns: one archive per (Java runtime, Spark, driver class path) in the
user's cache folder, and the Java options of each start.
- An archive exists: the JVM maps it. Java checks it against its own build and class path
  and ignores one that does not match (its warnings are kept off the console).
- None yet: this JVM writes one as it exits, to a file name of its own
  (`<key>.<id>.partial`), while it holds a lock on `<key>.<id>.writer` (a file descriptor
  it inherits and the operating system releases when it ends). One JVM at a time writes a
  configuration's archive; another start meanwhile neither maps nor writes one. Java
  writes an archive's header last, so a file that starts with the archive magic is whole;
  the next start moves it into place.
- A writer whose lock is free is gone (killed, or stopped while writing): its unfinished
  file is removed at the next start. A live writer's file is never touched.
- An archive whose size is not the one Java wrote is removed before a start (a JVM that
  maps a truncated archive dies); a JVM that crashes starting with an archive all the same
  is started again without it, and the archive is removed (`discard`).
- Size bound: each start removes the least recently used archives of other configurations
  while the cache holds more than `MAX_CACHE_BYTES`; the current configuration's archive
  and files being written are kept.
"""

from __future__ import annotations

import fcntl
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
# The cache's size bound: archives of other configurations beyond it are removed, least
# recently used first. An archive is 150-210 MB, and one machine may hold ten
# configurations (two Spark lines, several catalogs' jar lists, Thrift and Connect
# servers): at 1 GiB, this repository's test run found four of its five archives evicted
# by benchmarks run in between and wrote them again, each start without its archive
# 2.5 s slower.
MAX_CACHE_BYTES = 2 * 1024**3
# A run that wrote no archive (killed, or a Java that cannot write one) counts an attempt;
# after this many, the configuration runs without an archive.
MAX_ATTEMPTS = 3
# An unfinished archive file without a writer lock (written by an older version of the
# adapter) older than this belongs to a JVM that is gone.
STALE_SECONDS = 3600


def cache_folder(kind: str) -> Path:
    """The user's cache folder of one kind of state: `$XDG_CACHE_HOME/dbt-s3tables/<kind>`,
    else `~/.cache/...`; class archives live in `jvm`."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(root) / "dbt-s3tables" / kind


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


def writer_alive(lock: Path) -> bool:
    """Whether a JVM still holds this writer lock (a live process writing an archive)."""
    try:
        descriptor = os.open(lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)
    return False


@dataclass
class ArchiveStart:
    """What one JVM start does with the archive: its Java options and, when it writes the
    archive, the writer lock's file descriptor, which the JVM must inherit (and this
    process close once the JVM runs: `release`)."""

    options: tuple[str, ...] = ()
    writer_lock: int | None = None

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return () if self.writer_lock is None else (self.writer_lock,)

    def release(self) -> None:
        """Close this process's copy of the writer lock: the JVM holds its own."""
        if self.writer_lock is not None:
            os.close(self.writer_lock)
            self.writer_lock = None


@dataclass(frozen=True)
class ClassArchive:
    """The archive of one configuration, in `folder`: `<key>.<size>.jsa`. The size in the
    name is the archive's as Java wrote it: a file cut short since (a JVM mapping one dies)
    is never mapped."""

    folder: Path
    key: str
    max_bytes: int = MAX_CACHE_BYTES

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

    def start(self) -> ArchiveStart:
        """This start's use of the archive: map it, or write one at exit (at most
        `MAX_ATTEMPTS` times, one JVM at a time), or neither."""
        self.folder.mkdir(parents=True, exist_ok=True)
        being_written = self._tidy()
        current = self.current()
        if current is not None:
            os.utime(current)  # recently used: kept by `_prune`
            return ArchiveStart((f"-XX:SharedArchiveFile={current}", *QUIET))
        attempts = self._attempts()
        if being_written or attempts >= MAX_ATTEMPTS:
            return ArchiveStart()
        self.attempts_file.write_text(str(attempts + 1))
        name = f"{self.key}.{uuid.uuid4().hex}"
        # Locked before it appears under its name: a lock file never looks abandoned.
        pending = self.folder / f"{name}.pending"
        descriptor = os.open(pending, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        os.replace(pending, self.folder / f"{name}.writer")
        target = self.folder / f"{name}.partial"
        return ArchiveStart((f"-XX:ArchiveClassesAtExit={target}", *QUIET), descriptor)

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

    def _tidy(self) -> bool:
        """Move each whole archive an earlier JVM wrote into place for its configuration;
        remove the unfinished files of writers that are gone; keep the cache within its
        bound. Returns whether a live JVM is writing this configuration's archive."""
        being_written = False
        now = time.time()
        names = {p.name.rsplit(".", 1)[0] for p in self.folder.glob("*.partial")}
        names |= {p.name.rsplit(".", 1)[0] for p in self.folder.glob("*.writer")}
        for name in sorted(names):
            key = name.split(".", 1)[0]
            partial = self.folder / f"{name}.partial"
            lock = self.folder / f"{name}.writer"
            try:
                if partial.exists() and is_whole(partial):
                    if ClassArchive(self.folder, key).current() is not None:
                        partial.unlink()
                    else:
                        os.replace(partial, self.folder / f"{key}.{partial.stat().st_size}.jsa")
                        (self.folder / f"{key}.attempts").unlink(missing_ok=True)
                elif writer_alive(lock):
                    being_written = being_written or key == self.key
                    continue
                elif lock.exists():
                    partial.unlink(missing_ok=True)  # its writer is gone
                elif now - partial.stat().st_mtime > STALE_SECONDS:
                    partial.unlink()
                else:
                    continue
                lock.unlink(missing_ok=True)
            except OSError:
                continue  # another process moved or removed it first
        for pending in self.folder.glob("*.pending"):  # a start that died in `start`
            try:
                if now - pending.stat().st_mtime > STALE_SECONDS:
                    pending.unlink()
            except OSError:
                continue
        self._prune()
        return being_written

    def _prune(self) -> None:
        """Remove the least recently used archives of other configurations while the
        archives and files being written take more than `max_bytes`."""
        stats = {}
        for path in self.folder.iterdir():
            if path.suffix in (".jsa", ".partial"):
                try:
                    stats[path] = path.stat()
                except OSError:
                    continue  # removed meanwhile
        total = sum(stat.st_size for stat in stats.values())
        others = sorted(
            (p for p in stats if p.suffix == ".jsa" and not p.name.startswith(f"{self.key}.")),
            key=lambda p: stats[p].st_mtime,
        )
        for old in others:
            if total <= self.max_bytes:
                break
            old.unlink(missing_ok=True)
            (self.folder / f"{old.name.split('.', 1)[0]}.attempts").unlink(missing_ok=True)
            total -= stats[old].st_size


def class_archive_for(
    java: str, spark_version: str, class_path: tuple[str, ...], folder: Path | None = None
) -> ClassArchive | None:
    """The archive of this configuration, or None where Java cannot write one (before 13,
    or a runtime whose version cannot be read)."""
    version = java_feature_version(java)
    if version is None or version < 13:
        return None
    return ClassArchive(
        folder or cache_folder("jvm"), configuration_key(java, spark_version, class_path)
    )
