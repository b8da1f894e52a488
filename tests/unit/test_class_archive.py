"""Class-data sharing for the driver JVM: which Java can write an archive, one archive per
configuration, finished archives moved into place, unfinished ones left alone until stale,
a bounded number of attempts, old configurations pruned; and the driver's Java options and
class path in the session settings."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.engines.class_archive import (
    DYNAMIC_ARCHIVE_MAGIC,
    KEEP_OTHER_ARCHIVES,
    MAX_ATTEMPTS,
    STALE_SECONDS,
    ClassArchive,
    class_archive_for,
    configuration_key,
    java_feature_version,
)
from dbt.adapters.s3tables.engines.spark_session import archive_use, session_settings
from dbt.adapters.s3tables.jars import JarPlan


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


def test_without_an_archive_the_jvm_writes_one_to_a_name_of_its_own(tmp_path):
    archive = ClassArchive(tmp_path, "k1")
    first, second = archive.java_options(), archive.java_options()
    assert archive_use(first) == archive_use(second) == "write"
    assert first[0] != second[0]  # two processes never write one file
    assert first[0].startswith(f"-XX:ArchiveClassesAtExit={tmp_path}/k1.")
    assert "-Xlog:cds=off" in first  # Java's archive warnings stay off the console


def test_attempts_are_bounded(tmp_path):
    archive = ClassArchive(tmp_path, "k1")
    for _ in range(MAX_ATTEMPTS):
        assert archive_use(archive.java_options()) == "write"
    assert archive.java_options() == ()


def test_a_whole_archive_is_moved_into_place_and_mapped(tmp_path):
    archive = ClassArchive(tmp_path, "k1")
    archive.java_options()  # an attempt
    write_partial(archive, "k1.abc", whole=True)
    options = archive.java_options()
    current = archive.current()
    assert current is not None and current.name == f"k1.{len(DYNAMIC_ARCHIVE_MAGIC) + 7}.jsa"
    assert options[0] == f"-XX:SharedArchiveFile={current}"
    assert not archive.attempts_file.exists()
    assert list(tmp_path.glob("*.partial")) == []


def test_a_second_whole_archive_of_the_same_configuration_is_dropped(tmp_path):
    archive = ClassArchive(tmp_path, "k1")
    write_partial(archive, "k1.a", whole=True)
    write_partial(archive, "k1.b", whole=True)
    archive.java_options()
    assert [p.name for p in tmp_path.iterdir()] == ["k1.11.jsa"]


def test_an_unfinished_archive_is_left_alone_until_stale(tmp_path):
    archive = ClassArchive(tmp_path, "k1")
    unfinished = write_partial(archive, "k1.writing", whole=False)
    assert archive_use(archive.java_options()) == "write"
    assert unfinished.exists() and archive.current() is None
    old = time.time() - STALE_SECONDS - 10
    os.utime(unfinished, (old, old))
    archive.java_options()
    assert not unfinished.exists()


def test_another_configurations_whole_archive_goes_to_its_own_name(tmp_path):
    archive = ClassArchive(tmp_path, "k1")
    write_partial(archive, "k2.xyz", whole=True)
    archive.java_options()
    assert (tmp_path / "k2.11.jsa").exists() and archive.current() is None


def whole_archive(folder: Path, key: str, age_seconds: float = 0) -> Path:
    path = folder / f"{key}.{len(DYNAMIC_ARCHIVE_MAGIC)}.jsa"
    path.write_bytes(DYNAMIC_ARCHIVE_MAGIC)
    stamp = time.time() - age_seconds
    os.utime(path, (stamp, stamp))
    return path


def test_only_a_few_other_configurations_are_kept(tmp_path):
    archive = ClassArchive(tmp_path, "current")
    whole_archive(tmp_path, "current", age_seconds=1000)
    for age, key in enumerate(["new", "newer", "old", "oldest"]):
        whole_archive(tmp_path, key, age_seconds=100 * age)
    archive.java_options()
    kept = sorted(p.name.split(".")[0] for p in tmp_path.glob("*.jsa"))
    assert kept == ["current", "new", "newer"] and KEEP_OTHER_ARCHIVES == 2


def test_a_truncated_archive_is_never_mapped(tmp_path):
    archive = ClassArchive(tmp_path, "k1")
    path = whole_archive(tmp_path, "k1")
    assert archive_use(archive.java_options()) == "map"
    path.write_bytes(DYNAMIC_ARCHIVE_MAGIC[:2])
    assert archive_use(archive.java_options()) == "write"
    assert not path.exists()


def test_a_discarded_archive_is_written_again(tmp_path):
    archive = ClassArchive(tmp_path, "k1")
    whole_archive(tmp_path, "k1")
    assert archive_use(archive.java_options()) == "map"
    archive.discard()
    assert archive_use(archive.java_options()) == "write"


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
