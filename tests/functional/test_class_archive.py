"""Class-data sharing through real `dbt run` processes: the first start writes the JVM's
class archive into the cache folder, the next maps it, and an archive damaged on disk (the
JVM dies mapping it) is replaced while the run still succeeds, with nothing from Java on
the console. `class_data_sharing: false` starts without one."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import yaml

from dbt.adapters.s3tables.engines.class_archive import writer_alive

DBT = str(Path(sys.executable).parent / "dbt")


def write_project(root: Path, warehouse: Path, **profile: object) -> None:
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text("name: cds\nversion: '1.0'\nprofile: cds\n")
    target = {"type": "s3tables", "schema": "cds", "warehouse": str(warehouse)}
    target.update({"master": "local[2]", "threads": 1, **profile})
    outputs = {"dev": target}
    (root / "profiles.yml").write_text(
        yaml.safe_dump({"cds": {"target": "dev", "outputs": outputs}})
    )
    (root / "models" / "numbers.sql").write_text(
        "{{ config(materialized='table') }}\nselect id from range(10) as r(id)"
    )


def dbt_run(project: Path, cache: Path) -> str:
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(cache),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "NO_COLOR": "1",
    }
    result = subprocess.run(
        [DBT, "run", "--profiles-dir", str(project), "--project-dir", str(project)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "[warning]" not in output, output
    wait_for_archive_writers(cache / "dbt-s3tables" / "jvm")
    return output


def wait_for_archive_writers(archives: Path) -> None:
    """dbt returns while its JVM writes the class archive on its way out: the next run
    comes once it is done."""
    deadline = time.monotonic() + 120
    while any(writer_alive(lock) for lock in archives.glob("*.writer")):
        assert time.monotonic() < deadline, sorted(archives.iterdir())
        time.sleep(0.2)


def start_line(output: str) -> str:
    return next(line for line in output.splitlines() if re.search(r"Spark \S+ started in", line))


def test_the_archive_is_written_mapped_and_replaced_when_damaged(tmp_path: Path) -> None:
    project, cache = tmp_path / "project", tmp_path / "cache"
    write_project(project, tmp_path / "warehouse")
    archives = cache / "dbt-s3tables" / "jvm"

    assert "writing the JVM class archive" in start_line(dbt_run(project, cache))
    [written] = archives.glob("*.partial")  # by the JVM as it exited
    assert written.stat().st_size > 10_000_000

    assert "classes mapped from the JVM class archive" in start_line(dbt_run(project, cache))
    [archive] = archives.glob("*.jsa")  # moved into place by the second start

    # Cut short in place: never mapped (a JVM mapping it would die), written again.
    with open(archive, "r+b") as file:
        file.truncate(1_000_000)
    assert "writing the JVM class archive" in start_line(dbt_run(project, cache))
    assert not archive.exists()
    assert "mapped" in start_line(dbt_run(project, cache))
    [archive] = archives.glob("*.jsa")

    # Cut short and renamed to pass the size check: the JVM dies mapping it (SIGBUS), the
    # start is retried without the archive, the run succeeds, and Java's crash report goes
    # to the logs folder, not the project's.
    with open(archive, "r+b") as file:
        file.truncate(1_000_000)
    forged = archive.with_name(f"{archive.name.split('.')[0]}.1000000.jsa")
    archive.rename(forged)
    line = start_line(dbt_run(project, cache))
    assert "writing" not in line and "mapped" not in line
    assert not forged.exists()
    assert list((project / "logs").glob("hs_err_pid*.log")) and not list(project.glob("hs_err*"))

    assert "writing the JVM class archive" in start_line(dbt_run(project, cache))
    assert "mapped" in start_line(dbt_run(project, cache))


def test_class_data_sharing_can_be_turned_off(tmp_path: Path) -> None:
    project, cache = tmp_path / "project", tmp_path / "cache"
    write_project(project, tmp_path / "warehouse", class_data_sharing=False)
    line = start_line(dbt_run(project, cache))
    assert "archive" not in line
    assert not (cache / "dbt-s3tables").exists()
