"""Class-data sharing for the driver JVM: which Java can write an archive, one archive per
configuration, finished archives moved into place, one writer at a time, the unfinished
files of writers that are gone removed (a live writer's kept), a bounded number of
attempts, the cache within its size bound; and the driver's Java options and class path in
the session settings."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.jars import JarPlan
from dbt.adapters.s3tables.engines.class_archive import (
    DYNAMIC_ARCHIVE_MAGIC,
    MAX_ATTEMPTS,
    MAX_CACHE_BYTES,
    STALE_SECONDS,
    ClassArchive,
    class_archive_for,
    configuration_key,
    java_feature_version,
    writer_alive,
)
from dbt.adapters.s3tables.engines.spark_session import archive_use, session_settings


def fake_java(root: Path, version: str | None) -> str:
    """A `bin/java` under a runtime folder whose `release` file names `version`."""
    (root / "bin").mkdir(parents=True)
    java = root / "bin" / "java"
    java.write_text("")
    if version is not None:
        (root / "release").write_text(f'IMPLEMENTOR="x"\nJAVA_VERSION="{version}"\n')
    return str(java)


@pytest.mark.parametrize(
    ("version", "feature"), [("17.0.15", 17), ("21", 21), ("1.8.0_392", 8), ("weird", None)]
)
def test_the_feature_version_comes_from_the_release_file(tmp_path, version, feature):
    assert java_feature_version(fake_java(tmp_path, version)) == feature


def test_a_java_without_a_release_file_or_before_13_gets_no_archive(tmp_path):
    assert class_archive_for(fake_java(tmp_path / "a", None), "3.5.9", ()) is None
    assert class_archive_for(fake_java(tmp_path / "b", "11.0.2"), "3.5.9", ()) is None
    archive = class_archive_for(fake_java(tmp_path / "c", "17.0.15"), "3.5.9", (), tmp_path)
    assert archive is not None and archive.folder == tmp_path


def test_the_key_changes_with_spark_java_and_every_jar(tmp_path):
    java = fake_java(tmp_path / "jdk", "17.0.15")
    jar = tmp_path / "iceberg.jar"
    jar.write_bytes(b"1")
    key = configuration_key(java, "3.5.9", (str(jar),))
    assert key == configuration_key(java, "3.5.9", (str(jar),))
    assert key != configuration_key(java, "4.0.5", (str(jar),))
    assert key != configuration_key(java, "3.5.9", (str(jar), str(tmp_path / "other.jar")))
    jar.write_bytes(b"22")  # the same jar replaced in place
    assert key != configuration_key(java, "3.5.9", (str(jar),))


def write_partial(archive: ClassArchive, name: str, whole: bool) -> Path:
    path = archive.folder / f"{name}.partial"
    path.write_bytes((DYNAMIC_ARCHIVE_MAGIC if whole else b"\0\0\0\0") + b"classes")
    return path


def options(archive: ClassArchive) -> tuple[str, ...]:
    """The Java options of a start whose JVM has ended since (its writer lock released)."""
    start = archive.start()
    start.release()
    return start.options


def written_name(options: tuple[str, ...]) -> str:
    """`<key>.<id>` of the file a writing start's JVM writes."""
    return Path(options[0].split("=", 1)[1]).name.removesuffix(".partial")


def test_one_jvm_at_a_time_writes_each_to_a_name_of_its_own(tmp_path):
    archive = ClassArchive(tmp_path, "k1")
    first = archive.start()
    assert archive_use(first.options) == "write"
    assert first.options[0].startswith(f"-XX:ArchiveClassesAtExit={tmp_path}/k1.")
    assert "-Xlog:cds=off" in first.options  # Java's archive warnings stay off the console
    lock = tmp_path / f"{written_name(first.options)}.writer"
    assert first.pass_fds and writer_alive(lock)
    # While that JVM lives, another start neither writes nor maps.
    assert archive.start().options == ()
    first.release()  # the JVM ended without writing
    assert not writer_alive(lock)
    second = options(archive)
    assert archive_use(second) == "write" and written_name(second) != written_name(first.options)


def test_attempts_are_bounded(tmp_path):
    archive = ClassArchive(tmp_path, "k1")
    for _ in range(MAX_ATTEMPTS):
        assert archive_use(options(archive)) == "write"
    assert options(archive) == ()


def test_a_whole_archive_is_moved_into_place_and_mapped(tmp_path):
    archive = ClassArchive(tmp_path, "k1")
    name = written_name(options(archive))  # an attempt, whose JVM wrote the archive
    write_partial(archive, name, whole=True)
    mapped = options(archive)
    current = archive.current()
    assert current is not None and current.name == f"k1.{len(DYNAMIC_ARCHIVE_MAGIC) + 7}.jsa"
    assert mapped[0] == f"-XX:SharedArchiveFile={current}"
    assert not archive.attempts_file.exists()
    assert [p.name for p in tmp_path.iterdir()] == [current.name]


def test_a_second_whole_archive_of_the_same_configuration_is_dropped(tmp_path):
    archive = ClassArchive(tmp_path, "k1")
    write_partial(archive, "k1.a", whole=True)
    write_partial(archive, "k1.b", whole=True)
    options(archive)
    assert [p.name for p in tmp_path.iterdir()] == ["k1.11.jsa"]


def test_a_dead_writers_unfinished_file_is_removed_and_a_live_ones_kept(tmp_path):
    archive = ClassArchive(tmp_path, "k1")
    other = ClassArchive(tmp_path, "k2")
    dead, live = archive.start(), other.start()
    dead_name, live_name = written_name(dead.options), written_name(live.options)
    write_partial(archive, dead_name, whole=False)
    write_partial(other, live_name, whole=False)
    dead.release()  # killed while writing: its lock is free
    assert archive_use(options(archive)) == "write"
    assert not (tmp_path / f"{dead_name}.partial").exists()
    assert not (tmp_path / f"{dead_name}.writer").exists()
    assert (tmp_path / f"{live_name}.partial").exists()  # its JVM still writes it
    live.release()


def test_an_unfinished_file_without_a_writer_lock_is_left_alone_until_stale(tmp_path):
    # Written by an adapter version before writer locks: its writer cannot be asked.
    archive = ClassArchive(tmp_path, "k1")
    unfinished = write_partial(archive, "k1.writing", whole=False)
    assert archive_use(options(archive)) == "write"
    assert unfinished.exists() and archive.current() is None
    old = time.time() - STALE_SECONDS - 10
    os.utime(unfinished, (old, old))
    options(archive)
    assert not unfinished.exists()


def test_another_configurations_whole_archive_goes_to_its_own_name(tmp_path):
    archive = ClassArchive(tmp_path, "k1")
    write_partial(archive, "k2.xyz", whole=True)
    options(archive)
    assert (tmp_path / "k2.11.jsa").exists() and archive.current() is None


def whole_archive(folder: Path, key: str, age_seconds: float = 0, size: int = 4) -> Path:
    path = folder / f"{key}.{size}.jsa"
    path.write_bytes(DYNAMIC_ARCHIVE_MAGIC + b"\0" * (size - len(DYNAMIC_ARCHIVE_MAGIC)))
    stamp = time.time() - age_seconds
    os.utime(path, (stamp, stamp))
    return path


def test_the_cache_is_kept_within_its_size_bound(tmp_path):
    assert MAX_CACHE_BYTES == 2 * 1024**3  # the figure docs/profile.md and docs/engines.md give
    archive = ClassArchive(tmp_path, "current", max_bytes=250)
    whole_archive(tmp_path, "current", age_seconds=1000, size=100)
    for age, key in enumerate(["new", "newer", "old", "oldest"]):
        whole_archive(tmp_path, key, age_seconds=100 * age, size=60)
    # A live writer's unfinished file counts, and is kept.
    live = ClassArchive(tmp_path, "writing").start()
    write_partial(archive, written_name(live.options), whole=False)
    options(archive)
    kept = sorted(p.name.split(".")[0] for p in tmp_path.glob("*.jsa"))
    # 100 (current, kept whatever its age) + 2 x 60 + the 11-byte partial <= 250 < 291.
    assert kept == ["current", "new", "newer"]
    assert (tmp_path / f"{written_name(live.options)}.partial").exists()
    live.release()


def test_a_truncated_archive_is_never_mapped(tmp_path):
    archive = ClassArchive(tmp_path, "k1")
    path = whole_archive(tmp_path, "k1")
    assert archive_use(options(archive)) == "map"
    path.write_bytes(DYNAMIC_ARCHIVE_MAGIC[:2])
    assert archive_use(options(archive)) == "write"
    assert not path.exists()


def test_a_discarded_archive_is_written_again(tmp_path):
    archive = ClassArchive(tmp_path, "k1")
    whole_archive(tmp_path, "k1")
    assert archive_use(options(archive)) == "map"
    archive.discard()
    assert archive_use(options(archive)) == "write"


def settings(tmp_path: Path, **kwargs) -> dict[str, str]:
    catalog = CatalogConfig(name="local", catalog_type="local", warehouse=str(tmp_path))
    return session_settings(
        master="local[2]",
        catalog=catalog,
        jars=JarPlan(("/m2/iceberg.jar", "/m2/sqlite.jar")),
        log_file=str(tmp_path / "logs" / "spark.log"),
        **kwargs,
    )


def test_java_options_and_the_driver_class_path_reach_the_driver(tmp_path):
    result = settings(
        tmp_path,
        user_settings={"spark.driver.extraClassPath": "/mine.jar"},
        java_options=("-XX:SharedArchiveFile=/cache dir/k.jsa", "-Xlog:cds=off"),
        driver_class_path=("/m2/iceberg.jar", "/m2/sqlite.jar"),
    )
    options = result["spark.driver.extraJavaOptions"]
    # Quoted: Spark splits the options at blanks outside double quotes.
    assert '"-XX:SharedArchiveFile=/cache dir/k.jsa" "-Xlog:cds=off"' in options
    assert f'"-XX:ErrorFile={tmp_path}/logs/hs_err_pid%p.log"' in options
    assert result["spark.driver.extraClassPath"] == "/m2/iceberg.jar:/m2/sqlite.jar:/mine.jar"
    assert result["spark.jars"] == "/m2/iceberg.jar,/m2/sqlite.jar"


def test_without_a_driver_class_path_only_spark_jars_carry_the_jars(tmp_path):
    result = settings(tmp_path, user_settings={})
    assert "spark.driver.extraClassPath" not in result
    assert archive_use(()) is None
