"""Faults and overlapping jobs, each through real `dbt` processes on a warehouse of its
own: secrets never on display, a lost catalog never silently replaced, two first builds
of one table at once, a write racing a concurrent writer, the JVM out of memory, an
unreachable catalog, a full disk. The data must come out whole every time, and the
person running dbt must read one sentence saying what happened and what to do."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from tests.functional.harness import (
    SCHEMA,
    Project,
    assert_readable,
    iceberg_rows,
    not_null_id_tests,
)

# A statement that takes `ms` milliseconds: the condition calls Thread.sleep once per row
# (reflect is non-deterministic, so Spark keeps it), leaving time for another process.
PAUSE = "coalesce(reflect('java.lang.Thread', 'sleep', cast({ms} as bigint)), 'slept') is not null"


# --- 1. secrets ---------------------------------------------------------------------------

SECRETS = {"spark_conf": "sc-s3cr3t-7d1e", "catalog_properties": "cp-p4ssw0rd-42ab"}
SECRET_CHECK_MODEL = """
import hashlib

def model(dbt, session):
    dbt.config(materialized="table")
    hadoop = session.sparkContext._jsc.hadoopConfiguration().get("fs.s3a.secret.key")
    catalog = session.conf.get("spark.sql.catalog.local.test.password", None)
    digest = lambda value: hashlib.sha256((value or "").encode()).hexdigest()
    return session.createDataFrame([(digest(hadoop), digest(catalog))], ["hadoop", "catalog"])
"""


def process_texts(exclude: int) -> Iterator[tuple[int, bytes]]:
    """Command line and environment of every process but `exclude` (this test)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == exclude:
            continue
        for part in ("cmdline", "environ"):
            try:
                yield int(entry.name), (entry / part).read_bytes()
            except OSError:
                continue


def parent_pid(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def test_secrets_never_appear_on_command_lines_logs_or_artifacts(tmp_path: Path) -> None:
    project = Project(
        tmp_path / "project",
        tmp_path / "warehouse",
        spark_conf={"spark.hadoop.fs.s3a.secret.key": SECRETS["spark_conf"]},
        catalog_properties={"test.password": SECRETS["catalog_properties"]},
    )
    (project.root / "models" / "secret_check.py").write_text(SECRET_CHECK_MODEL)
    # Keeps the JVM busy for a while, for the scan to see it.
    project.model("slow", f"select id from range(2) as r(id) where {PAUSE.format(ms=2000)}")

    run = project.start("run", log_path="logs")
    seen_jvm = False
    leaks: list[int] = []
    while run.poll() is None:
        for pid, text in process_texts(exclude=os.getpid()):
            # This run's own JVM (dbt's child): another test process's JVM proves nothing.
            if b"org.apache.spark.deploy.SparkSubmit" in text and parent_pid(pid) == run.pid:
                seen_jvm = True
            if any(secret.encode() in text for secret in SECRETS.values()):
                leaks.append(pid)
        time.sleep(0.2)
    output = run.stdout.read() if run.stdout else ""
    assert run.returncode == 0, output
    assert seen_jvm, "the scan never saw the Spark JVM: it proves nothing"
    assert leaks == []

    # The secrets reached the running JVM all the same.
    table = project.rows("secret_check")
    digest = {k: hashlib.sha256(v.encode()).hexdigest() for k, v in SECRETS.items()}
    assert table == [{"hadoop": digest["spark_conf"], "catalog": digest["catalog_properties"]}]

    debug = project.run("debug")
    written = [p for folder in ("logs", "target-logs") for p in (project.root / folder).rglob("*")]
    texts = [debug.stdout + debug.stderr]
    texts += [p.read_text(errors="replace") for p in written if p.is_file()]
    for secret in SECRETS.values():
        assert not any(secret in text for text in texts), secret


# --- 2. a lost catalog ----------------------------------------------------------------------

GROWING = """
{{ config(materialized='incremental', unique_key='id') }}
select id from range(1, {{ var('upto', 101) }}) as r(id)
{% if is_incremental() %} where id > (select max(id) from {{ this }}) {% endif %}
"""


def test_a_lost_catalog_is_refused_and_can_be_rebuilt(tmp_path: Path) -> None:
    project = Project(tmp_path / "project", tmp_path / "warehouse")
    project.model("growing", GROWING)
    assert project.run("run").returncode == 0
    catalog_file = project.warehouse / "catalog.db"

    # Deleted, and overwritten; an emptied one is refused by the same check
    # (tests/unit/catalogs/embedded/test_files.py).
    for damage in (None, b"not a database " * 64):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{catalog_file}{suffix}").unlink(missing_ok=True)
        if damage is not None:
            catalog_file.write_bytes(damage)
        result = project.run("run", "--vars", "{upto: 201}")
        output = result.stdout + result.stderr
        assert result.returncode != 0, output
        assert str(catalog_file) in output and "dbt-s3tables-recover" in output, output
        assert_readable(output)
        # Nothing written: no fresh catalog in place of the lost one.
        if damage is None:
            assert not catalog_file.exists()
        else:
            assert catalog_file.read_bytes() == damage

    recovery = subprocess.run(
        [
            sys.executable,
            "-m",
            "dbt.adapters.s3tables.catalogs.recover_command",
            str(project.warehouse),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert recovery.returncode == 0, recovery.stderr
    assert f"registered table {SCHEMA}.growing" in recovery.stdout
    assert list(project.warehouse.glob("catalog.db.unreadable-*")), "the damaged file is kept"

    # The history is back: the next run is incremental and adds rows 101..200.
    result = project.run("run", "--vars", "{upto: 201}")
    assert result.returncode == 0, result.stdout
    assert project.ids("growing") == list(range(1, 201))
    history = project.catalog().load_table(SCHEMA, "growing").history()
    assert len(history) == 2


# --- 4. two first builds at once --------------------------------------------------------------

FIRST_BUILD = (
    "{{ config(materialized='incremental') }}\n"
    "select {{ var('job') }} * 100 + id as id from range(1, 6) as r(id)\n"
    f"where {PAUSE.format(ms=4000)}"
)


def test_two_first_builds_at_once_never_lose_a_jobs_rows(tmp_path: Path) -> None:
    project = Project(tmp_path / "project", tmp_path / "warehouse")
    project.model("events", FIRST_BUILD)
    # Both start on a fresh warehouse: they also race to create the catalog itself.
    jobs = {
        job: project.start("run", "--vars", f"{{job: {job}}}", log_path=f"logs-{job}")
        for job in (1, 2)
    }
    outputs = {job: process.communicate(timeout=600)[0] for job, process in jobs.items()}
    succeeded = [job for job, process in jobs.items() if process.returncode == 0]
    for output in outputs.values():
        assert_readable(output)
    rows = {job: [job * 100 + i for i in range(1, 6)] for job in (1, 2)}
    if len(succeeded) == 2:  # one ran after the other: the second appended
        assert project.ids("events") == sorted(rows[1] + rows[2])
    else:
        assert len(succeeded) == 1, outputs
        (loser,) = {1, 2} - set(succeeded)
        assert "created by another run" in outputs[loser], outputs[loser]
        assert project.ids("events") == rows[succeeded[0]]
    # The run that created the table wrote its create statement to target/run; one that
    # appended after it wrote none there (its statement is the run's own, see
    # incremental.sql): neither replaced the table.
    built = [
        path
        for job in succeeded
        for path in (project.root / f"target-logs-{job}" / "run").rglob("events.sql")
    ]
    assert built, outputs
    for path in built:
        assert "create or replace" not in path.read_text().lower()


# --- 6. a write racing a concurrent writer -----------------------------------------------------

MERGED = """
{{ config(materialized='incremental', unique_key='id') }}
select id, cast(id * {{ var('round', 1) }} as bigint) as v from range(1, 51) as r(id)
"""


# Each target row the MERGE reads builds a 4M-element array in its ON clause (a MERGE
# condition must be deterministic, so no sleep): the merge runs for seconds after it read
# the table, while another writer commits (the commits land in its
# window on a loaded machine too) or maintenance expires the snapshot it read.
MERGED_SLOWLY = MERGED.replace(
    "unique_key='id'", "unique_key='id', incremental_predicates=['size(sequence(1, 4000000)) > 0']"
)


# The model's keys are the even numbers 2..100: another writer's rows with odd keys land
# inside the key span the MERGE reads (2..100), so Iceberg's validation of the MERGE sees
# them as conflicting files. Rows outside the span never conflict (the span is what the
# MERGE reads), and whether Iceberg's own commit retries run out is a matter of timing.
MERGED_SLOWLY_EVEN_KEYS = MERGED_SLOWLY.replace("select id, ", "select id * 2 as id, ")


def test_a_merge_that_loses_to_a_concurrent_commit_is_rerun(tmp_path: Path) -> None:
    project = Project(tmp_path / "project", tmp_path / "warehouse", write_conflict_wait_seconds=1)
    project.model("merged", MERGED_SLOWLY_EVEN_KEYS)
    assert project.run("run").returncode == 0
    catalog = project.catalog()
    schema = catalog.load_table(SCHEMA, "merged").schema().as_arrow()

    # A concurrent writer commits rows inside the merge's key span to the table while the
    # merge runs, until the merge reports its first conflict (49 odd keys at most).
    run = project.start("run", "--vars", "{round: 2}", log_path="logs-merge")
    log = project.root / "logs-merge" / "dbt.log"
    appended = 0
    while run.poll() is None and appended < 49:
        if log.exists() and "write conflict; retry" in log.read_text(errors="replace"):
            break
        if log.exists() and "START sql incremental model" in log.read_text(errors="replace"):
            rows = pa.table({"id": [3 + 2 * appended], "v": [0]}, schema=schema)
            catalog.load_table(SCHEMA, "merged").append(rows)
            appended += 1
        time.sleep(0.1)
    output = run.communicate(timeout=600)[0]
    assert run.returncode == 0, output
    assert "write conflict; retry 1 of 3" in log.read_text(), "the merge never conflicted"
    table = iceberg_rows(catalog, SCHEMA, "merged")
    merged = {r["id"]: r["v"] for r in table}
    assert len(merged) == len(table) == 50 + appended  # no key twice, nothing lost
    assert all(merged[2 * i] == 2 * i for i in range(1, 51))
    assert all(merged[3 + 2 * k] == 0 for k in range(appended))


def test_a_merge_that_loses_to_snapshot_expiry_is_rerun(tmp_path: Path) -> None:
    project = Project(tmp_path / "project", tmp_path / "warehouse", write_conflict_wait_seconds=1)
    project.model("merged", MERGED_SLOWLY)
    assert project.run("run").returncode == 0
    catalog = project.catalog()
    table = catalog.load_table(SCHEMA, "merged")
    read_by_the_merge = table.current_snapshot().snapshot_id

    run = project.start("run", "--vars", "{round: 2}", log_path="logs-merge")
    log = project.root / "logs-merge" / "dbt.log"
    while run.poll() is None:
        if log.exists() and "MERGE INTO" in log.read_text(errors="replace"):
            break
        time.sleep(0.05)
    time.sleep(1.5)  # the merge has read the table and is joining
    # Maintenance's moves: another commit, then expiry of the snapshot the merge read.
    table.append(pa.table({"id": [1000], "v": [0]}, schema=table.schema().as_arrow()))
    catalog.load_table(SCHEMA, "merged").maintenance.expire_snapshots().by_id(
        read_by_the_merge
    ).commit()
    output = run.communicate(timeout=600)[0]
    assert run.returncode == 0, output
    assert_readable(output)
    assert "write conflict; retry 1 of 3 in" in log.read_text()
    assert "snapshot expiry (maintenance) removed the snapshot the statement started from" in (
        log.read_text()
    ), "the merge never lost to expiry"
    rows = iceberg_rows(catalog, SCHEMA, "merged")
    merged = {r["id"]: r["v"] for r in rows}
    assert len(merged) == len(rows) == 51
    assert all(merged[i] == 2 * i for i in range(1, 51)) and merged[1000] == 0


def test_two_overlapping_runs_on_one_table_both_land(tmp_path: Path) -> None:
    project = Project(tmp_path / "project", tmp_path / "warehouse")
    project.model("merged", MERGED)
    assert project.run("run").returncode == 0
    jobs = [project.start("run", "--vars", "{round: 3}", log_path=f"logs-{i}") for i in (1, 2)]
    outputs = [job.communicate(timeout=600)[0] for job in jobs]
    for job, output in zip(jobs, outputs, strict=True):
        assert_readable(output)
        # Only a conflict that outlasted every retry may fail a run, and it says so.
        assert job.returncode == 0 or "Iceberg commit conflict" in output, output
    table = project.rows("merged")
    assert sorted((r["id"], r["v"]) for r in table) == [(i, 3 * i) for i in range(1, 51)]


# --- two audited builds of one table at once ------------------------------------------------

AUDITED = (
    "{{ config(materialized='table', audit_before_publish=true) }}\n"
    "select {{ var('job') }} * 100 + id as id, {{ var('round') }} as round\n"
    f"from range(1, 4) as r(id) where {PAUSE.format(ms=700)}"
)
AUDITED_TESTS = not_null_id_tests("audited")


def leave_stale_audit_branches(project: Project, count: int) -> None:
    """Branches of earlier audits no build is running (as failed audits leave them): each
    audited build removes them before it stages, one statement each, so two builds at once
    race to remove the same ones for as long as that takes."""
    table = project.catalog().load_table(SCHEMA, "audited")
    snapshot = table.current_snapshot().snapshot_id
    with table.manage_snapshots() as branches:
        for number in range(count):
            branches.create_branch(snapshot, f"dbt_audit_stale{number:02}")


def test_two_audited_builds_at_once_each_publish_or_say_why(tmp_path: Path) -> None:
    project = Project(tmp_path / "project", tmp_path / "warehouse")
    project.model("audited", AUDITED)
    (project.root / "models" / "schema.yml").write_text(AUDITED_TESTS)
    assert project.run("build", "--vars", "{job: 0, round: 0}").returncode == 0
    # Which build wins varies from run to run: either passes, and the loser says why.
    leave_stale_audit_branches(project, 15)
    jobs = {
        job: project.start("build", "--vars", f"{{job: {job}, round: 1}}", log_path=f"logs-{job}")
        for job in (1, 2)
    }
    outputs = {job: process.communicate(timeout=600)[0] for job, process in jobs.items()}
    published = []
    for job, process in jobs.items():
        assert_readable(outputs[job])
        assert "Branch does not exist" not in outputs[job], outputs[job]
        if process.returncode == 0:
            published.append(job)
        else:  # lost the race to publish: main had moved on; said in one sentence
            assert "its tests passed but the publish failed" in outputs[job], outputs[job]
    assert published, outputs
    rows = project.rows("audited")
    ids = sorted(r["id"] for r in rows)
    assert {r["round"] for r in rows} == {1}
    assert any(ids == [job * 100 + i for i in (1, 2, 3)] for job in published), ids
    table = project.catalog().load_table(SCHEMA, "audited")
    assert not [b for b in table.metadata.refs if b.startswith("dbt_audit_stale")]


# --- 7. out of memory ------------------------------------------------------------------------

HUNGRY = (
    "{{ config(materialized='table') }}\n"
    "select length(concat_ws(',', collect_list(repeat('x', 1000000)))) as n from range(3000)"
)


def test_out_of_memory_is_named_with_the_setting_to_raise(tmp_path: Path) -> None:
    project = Project(
        tmp_path / "project", tmp_path / "warehouse", spark_conf={"spark.driver.memory": "512m"}
    )
    project.model("hungry", HUNGRY)
    result = project.run("run")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "The Spark JVM stopped: it ran out of memory" in output, output
    assert "spark.driver.memory" in output
    assert "Connection refused" not in output
    assert "Traceback" not in output


# --- 10. an unreachable catalog ---------------------------------------------------------------


def test_an_unreachable_rest_catalog_is_one_sentence(tmp_path: Path) -> None:
    project = Project(
        tmp_path / "project",
        "analytics",  # the REST catalog's warehouse name
        catalog_type="rest",
        catalog_uri="http://127.0.0.1:9",  # the discard port: nothing answers
    )
    project.model("one", "select 1 as id")
    result = project.run("run")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "Cannot reach the Iceberg catalog at http://127.0.0.1:9" in output, output
    assert "catalog_uri" in output
    assert "Traceback" not in output and len(output.splitlines()) < 40


# --- 11. a full disk, and a read-only one -------------------------------------------------------

FILLING = """
{{ config(materialized='incremental') }}
select id, sha2(cast(id * {{ var('k', 1) }} as string), 512) as a, uuid() as b
from range(0, {{ var('n', 1000) }}) as r(id)
"""


@pytest.fixture
def mounts(tmp_path: Path) -> Iterator[list[Path]]:
    """Small tmpfs file systems for the test to mount (mounting needs root: skipped, with
    the reason, otherwise); unmounted at the end."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root")
    mounted: list[Path] = []
    yield mounted
    for mount_point in mounted:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def mount_tmpfs(mounts: list[Path], mount_point: Path, options: str) -> Path:
    mount_point.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount_point)], check=True)
    mounts.append(mount_point)
    return mount_point


def test_a_full_disk_changes_nothing_and_leaves_nothing(tmp_path: Path, mounts: list[Path]) -> None:
    small_disk = mount_tmpfs(mounts, tmp_path / "disk", "size=48m")
    project = Project(tmp_path / "project", small_disk / "warehouse")
    project.model("filling", FILLING)
    assert project.run("run").returncode == 0
    before = project.catalog().load_table(SCHEMA, "filling").current_snapshot()
    filler = small_disk / "filler"
    subprocess.run(["fallocate", "-l", "40m", str(filler)], check=True)
    files_before = {p for p in project.warehouse.rglob("*") if p.is_file()}

    result = project.run("run", "--vars", "{n: 200000, k: 2}")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "The disk is full" in output and "Nothing of this statement was committed" in output
    assert "files the failed write left" in output and "were removed" in output, output
    assert_readable(output)
    assert project.catalog().load_table(SCHEMA, "filling").current_snapshot() == before
    data_files = {p for p in project.warehouse.rglob("*.parquet")}
    assert data_files <= files_before, "a partial data file was left behind"

    filler.unlink()
    assert project.run("run", "--vars", "{n: 200000, k: 2}").returncode == 0
    assert len(project.ids("filling")) == 201000


def test_a_read_only_warehouse_is_refused_naming_the_key(
    tmp_path: Path, mounts: list[Path]
) -> None:
    read_only = mount_tmpfs(mounts, tmp_path / "read_only", "ro,size=1m")
    project = Project(tmp_path / "project", read_only / "warehouse")
    project.model("one", "select 1 as id")
    result = project.run("run")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "`warehouse`" in output and "cannot be written" in output, output
    assert_readable(output)
