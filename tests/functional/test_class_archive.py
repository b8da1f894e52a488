"""Class-data sharing through real `dbt run` processes: the first start writes the JVM's
class archive into the cache folder, the next maps it, and an archive damaged on disk so
that it passes the size check (the JVM dies mapping it) is replaced while the run still
succeeds, with nothing from Java on the console. `class_data_sharing: false` starts without one."""

from __future__ import annotations

import re
import time
from pathlib import Path

from dbt.adapters.s3tables.engines.class_archive import writer_alive
from tests.functional.harness import dbt_env, local_output, run_dbt_process, write_project


def write_cds_project(root: Path, warehouse: Path, **profile: object) -> None:
    model = "{{ config(materialized='table') }}\nselect id from range(10) as r(id)"
    output = local_output(warehouse, "cds", **profile)
    write_project(root, "cds", output=output, files={"models/numbers.sql": model})


def dbt_run(project: Path, cache: Path) -> str:
    result = run_dbt_process(
        ["run"],
        project_dir=project,
        profiles_dir=project,
        cwd=project,
        env=dbt_env(XDG_CACHE_HOME=str(cache)),
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
    write_cds_project(project, tmp_path / "warehouse")
    archives = cache / "dbt-s3tables" / "jvm"

    assert "writing the JVM class archive" in start_line(dbt_run(project, cache))
    [written] = archives.glob("*.partial")  # by the JVM as it exited
    assert written.stat().st_size > 10_000_000

    assert "classes mapped from the JVM class archive" in start_line(dbt_run(project, cache))
    [archive] = archives.glob("*.jsa")  # moved into place by the second start

    # Cut short and renamed to pass the size check (one cut short in place fails that check
    # and is never mapped: tests/unit/engines/test_class_archive.py): the JVM dies mapping
    # it (SIGBUS), the start is retried without the archive, the run succeeds, and Java's
    # crash report goes to the logs folder, not the project's.
    with open(archive, "r+b") as file:
        file.truncate(1_000_000)
    forged = archive.with_name(f"{archive.name.split('.')[0]}.1000000.jsa")
    archive.rename(forged)
    line = start_line(dbt_run(project, cache))
    assert "writing" not in line and "mapped" not in line
    assert not forged.exists()
    assert list((project / "logs").glob("hs_err_pid*.log")) and not list(project.glob("hs_err*"))

    # Written again (its mapping is the second run's, above).
    assert "writing the JVM class archive" in start_line(dbt_run(project, cache))


def test_class_data_sharing_can_be_turned_off(tmp_path: Path) -> None:
    project, cache = tmp_path / "project", tmp_path / "cache"
    write_cds_project(project, tmp_path / "warehouse", class_data_sharing=False)
    line = start_line(dbt_run(project, cache))
    assert "archive" not in line
    assert not (cache / "dbt-s3tables").exists()
