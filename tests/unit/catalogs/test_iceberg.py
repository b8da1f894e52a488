"""Pure helpers of the PyIceberg catalog access."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import OperationalError

from dbt.adapters.s3tables.catalogs import access as catalog_access
from dbt.adapters.s3tables.catalogs.access import LOCK_RETRY_ATTEMPTS, is_retryable
from dbt.adapters.s3tables.catalogs.access import retry_on_lock as retry_with
from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.relations import (
    TableStats,
    stats_from_summary,
    view_schema_from_metadata,
)
from tests.unit.sleeps import recorded_sleeps


def test_stats_from_summary() -> None:
    summary = {"total-records": "12", "total-data-files": "3", "total-files-size": "4096"}
    assert stats_from_summary(summary, 77) == TableStats(
        row_count=12, file_count=3, size_bytes=4096, snapshot_id=77
    )


def test_rows_deleted_by_deletion_vectors_are_subtracted_on_v3_only() -> None:
    summary = {"total-records": "102", "total-position-deletes": "2"}
    assert stats_from_summary(summary, 1, format_version=3).row_count == 100
    assert stats_from_summary(summary, 1, format_version=3).unapplied_deletes == 0
    v2 = stats_from_summary(summary, 1, format_version=2)
    assert (v2.row_count, v2.unapplied_deletes) == (102, 2)
    equality = {**summary, "total-equality-deletes": "5"}
    v3 = stats_from_summary(equality, 1, format_version=3)
    assert (v3.row_count, v3.unapplied_deletes) == (100, 5)


def test_stats_without_summary_are_unknown() -> None:
    assert stats_from_summary(None, None) == TableStats(None, None, None, None)


def test_stats_missing_keys_are_unknown_not_zero() -> None:
    stats = stats_from_summary({"total-records": "0"}, 5)
    assert stats.row_count == 0
    assert stats.file_count is None and stats.size_bytes is None


def field(field_id: int, name: str, type_: str) -> dict:
    return {"id": field_id, "name": name, "type": type_, "required": False}


def view_metadata(current_version_id: int) -> dict:
    return {
        "view-uuid": "fa6506c3-7681-40c8-86dc-e36561f83385",
        "format-version": 1,
        "location": "file:///tmp/wh/analytics/v",
        "current-version-id": current_version_id,
        "versions": [
            {"version-id": 1, "schema-id": 1, "timestamp-ms": 1, "summary": {}},
            {"version-id": 2, "schema-id": 0, "timestamp-ms": 2, "summary": {}},
        ],
        "schemas": [
            {"type": "struct", "schema-id": 0, "fields": [field(1, "id", "long")]},
            {
                "type": "struct",
                "schema-id": 1,
                "fields": [field(1, "id", "int"), field(2, "name", "string")],
            },
        ],
    }


@pytest.mark.parametrize(
    ("current", "schema_id", "columns"), [(1, 1, ["id", "name"]), (2, 0, ["id"])]
)
def test_view_schema_is_the_current_versions(
    current: int, schema_id: int, columns: list[str]
) -> None:
    schema = view_schema_from_metadata(view_metadata(current))
    assert schema.schema_id == schema_id
    assert [f.name for f in schema.fields] == columns


EMBEDDED = CatalogConfig(name="local", catalog_type="local", warehouse="/w")


def retry_on_lock(operation, what: str, budget_seconds: float | None = None) -> str:
    """`retry_on_lock` on the embedded catalog, whose type says what a retry clears."""
    return retry_with(operation, what, lambda e: is_retryable(EMBEDDED, e), budget_seconds)


def locked() -> OperationalError:
    return OperationalError("UPDATE iceberg_tables", {}, Exception("database is locked"))


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The delays the retry sleeps, recorded instead of slept."""
    return recorded_sleeps(monkeypatch, catalog_access)


def flaky(failures: list[BaseException], result: str = "done"):
    calls = []

    def operation() -> str:
        calls.append(1)
        if failures:
            raise failures.pop(0)
        return result

    return operation, calls


def test_lock_is_retried_until_success(sleeps: list[float]) -> None:
    operation, calls = flaky([locked(), locked()])
    assert retry_on_lock(operation, "test") == "done"
    assert len(calls) == 3
    assert len(sleeps) == 2 and all(delay > 0 for delay in sleeps)


def test_other_operational_errors_are_not_retried(sleeps: list[float]) -> None:
    other = OperationalError("SELECT", {}, Exception("no such table: iceberg_tables"))
    operation, calls = flaky([other])
    with pytest.raises(OperationalError) as error:
        retry_on_lock(operation, "test")
    assert error.value is other
    assert len(calls) == 1 and sleeps == []


def test_non_sqlalchemy_errors_are_not_retried(sleeps: list[float]) -> None:
    operation, calls = flaky([RuntimeError("database is locked")])
    with pytest.raises(RuntimeError):
        retry_on_lock(operation, "test")
    assert len(calls) == 1 and sleeps == []


def test_gives_up_after_the_last_attempt(sleeps: list[float]) -> None:
    errors = [locked() for _ in range(LOCK_RETRY_ATTEMPTS + 1)]
    last = errors[LOCK_RETRY_ATTEMPTS - 1]
    operation, calls = flaky(errors)
    with pytest.raises(OperationalError) as error:
        retry_on_lock(operation, "test")
    assert error.value is last
    assert len(calls) == LOCK_RETRY_ATTEMPTS
    assert len(sleeps) == LOCK_RETRY_ATTEMPTS - 1


def test_a_creation_race_is_retried(sleeps: list[float]) -> None:
    from sqlalchemy.exc import IntegrityError

    race = IntegrityError(
        "INSERT INTO iceberg_namespace_properties",
        {},
        Exception("UNIQUE constraint failed: iceberg_namespace_properties.namespace"),
    )
    operation, calls = flaky([race])
    assert retry_on_lock(operation, "create namespace") == "done"
    assert len(calls) == 2


def test_retries_stop_when_the_lock_budget_is_spent(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter(range(0, 1000, 10))  # every look at the clock: 10 s later
    monkeypatch.setattr(catalog_access.time, "monotonic", lambda: next(clock))
    recorded_sleeps(monkeypatch, catalog_access)
    operation, calls = flaky([locked() for _ in range(LOCK_RETRY_ATTEMPTS)])
    with pytest.raises(OperationalError):
        retry_on_lock(operation, "test", budget_seconds=25)
    assert len(calls) == 3


def test_a_full_disk_during_a_catalog_commit_is_explained() -> None:
    import errno

    from dbt.adapters.s3tables.catalogs.access import explain_catalog_error

    config = CatalogConfig(name="local", catalog_type="local", warehouse="/w")
    error = OSError(errno.ENOSPC, "Error writing bytes to file")
    message = explain_catalog_error(config, error, "schema of soak.evolving") or ""
    assert message.startswith("The disk is full: schema of soak.evolving failed")
    assert "nothing was changed" in message


def test_a_namespace_another_process_creates_meanwhile_is_created(tmp_path) -> None:
    from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog

    config = CatalogConfig(name="local", catalog_type="local", warehouse=str(tmp_path))
    ours, theirs = IcebergCatalog(config), IcebergCatalog(config)
    catalog = ours.catalog
    real_check = catalog.namespace_exists
    checks = []

    def check_before_the_other_insert(namespace):  # our check runs before their insert
        checks.append(namespace)
        if len(checks) == 1:
            theirs.create_namespace("faults")
            return False
        return real_check(namespace)

    catalog.namespace_exists = check_before_the_other_insert  # type: ignore[method-assign]
    ours.create_namespace("faults")  # our insert hits the unique key: created all the same
    assert real_check("faults") and len(checks) == 2


def test_v3_metadata_goes_through_spark_sql_where_pyiceberg_writes_the_files() -> None:
    from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog

    embedded = IcebergCatalog(CatalogConfig(name="local", catalog_type="local", warehouse="/w"))
    assert not embedded.writes_metadata_through_sql(2)
    assert embedded.writes_metadata_through_sql(3)
    # A REST catalog's server writes the metadata: PyIceberg commits on every version.
    rest = IcebergCatalog(
        CatalogConfig(name="cat", catalog_type="rest", warehouse="wh", uri="http://127.0.0.1:8181")
    )
    assert not rest.writes_metadata_through_sql(3)


def test_only_the_embedded_catalogs_type_retries_sqlite_errors() -> None:
    from pyiceberg.exceptions import CommitFailedException

    rest = CatalogConfig(name="cat", catalog_type="rest", warehouse="wh", uri="http://h:8181")
    assert is_retryable(EMBEDDED, locked())
    assert not is_retryable(rest, locked())
    # A commit that lost to another writer is retried on every catalog.
    assert is_retryable(rest, CommitFailedException("lost")) and is_retryable(
        EMBEDDED, CommitFailedException("lost")
    )


def test_embedded_views_are_listed_read_and_dropped_through_its_rows(tmp_path) -> None:
    import json

    from dbt.adapters.s3tables.catalogs.embedded.views import register_view
    from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
    from dbt.adapters.s3tables.catalogs.relations import CatalogRelation

    config = CatalogConfig(name="local", catalog_type="local", warehouse=str(tmp_path))
    iceberg = IcebergCatalog(config)
    iceberg.create_namespace("analytics")
    document = tmp_path / "00000-a.metadata.json"
    document.write_text(json.dumps(view_metadata(1)))
    register_view(iceberg.catalog, "local", "analytics", "v", document.as_uri())

    assert iceberg.list_relations("analytics") == [CatalogRelation("analytics", "v", "view")]
    assert [c.name for c in iceberg.find_columns("analytics", "v")] == ["id", "name"]
    iceberg.drop_namespace("analytics")
    assert not iceberg.namespace_exists("analytics")


def _table_with_a_run_branch(tmp_path):  # noqa: ANN202
    """An embedded catalog's table with a snapshot on main and a run's branch one commit
    ahead of it; (the adapter's catalog object, main's snapshot, the rows appended)."""
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog

    iceberg = IcebergCatalog(
        CatalogConfig(name="local", catalog_type="local", warehouse=str(tmp_path))
    )
    iceberg.create_namespace("s")
    table = iceberg.catalog.create_table(
        "s.t", Schema(NestedField(1, "id", LongType(), required=False))
    )
    rows = pa.table({"id": pa.array([1], pa.int64())})
    table.append(rows)
    base = iceberg.load_table("s", "t").current_snapshot().snapshot_id
    iceberg.create_branch("s", "t", "run", base)
    iceberg.load_table("s", "t").append(rows, branch="run")
    return iceberg, base, rows


def test_a_publish_starts_from_the_state_read_after_the_write(tmp_path) -> None:
    iceberg, base, _ = _table_with_a_run_branch(tmp_path)
    after = iceberg.table_state("s", "t", "run")
    loads = []
    real_load = iceberg.catalog.load_table
    iceberg.catalog.load_table = lambda name: loads.append(name) or real_load(name)  # type: ignore[method-assign]
    iceberg.publish_branch("s", "t", "run", base, {"k": "v"}, loaded=after.loaded)
    table = real_load("s.t")
    assert table.current_snapshot().snapshot_id == after.snapshot_id
    assert table.properties["k"] == "v" and "run" not in table.metadata.refs
    # The embedded catalog's commit reads the table's current metadata itself; the
    # adapter's own load before it is gone.
    assert len(loads) == 1


def test_a_publish_from_a_state_main_has_moved_past_is_the_runs_conflict(tmp_path) -> None:
    from dbt.adapters.s3tables.catalogs.table_changes import MainMoved

    iceberg, base, rows = _table_with_a_run_branch(tmp_path)
    after = iceberg.table_state("s", "t", "run")
    iceberg.load_table("s", "t").append(rows)  # another run commits to main meanwhile
    with pytest.raises(MainMoved) as moved:
        iceberg.publish_branch("s", "t", "run", base, {"k": "v"}, loaded=after.loaded)
    assert [c.operation for c in moved.value.since or ()] == ["append"]
    table = iceberg.load_table("s", "t")
    assert table.current_snapshot().parent_snapshot_id == base
    assert "k" not in table.properties and "run" in table.metadata.refs
