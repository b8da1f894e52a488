"""Commit conflicts (another job, S3 Tables compaction): Iceberg's commit retries per
catalog, the whole statement re-run on a conflict, and a clear error when retries run out."""

from __future__ import annotations

import pytest

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.engines import write_conflicts
from dbt.adapters.s3tables.engines.spark_errors import JavaError, summarize
from dbt.adapters.s3tables.engines.write_conflicts import (
    MAX_WAIT_SECONDS,
    ConflictRetries,
    conflict_cause,
    is_write_conflict,
    run_with_conflict_retries,
)
from tests.unit.sleeps import recorded_sleeps

ARN = "arn:aws:s3tables:us-east-1:111122223333:bucket/amzn-s3-demo-table-bucket"


def test_shared_catalogs_raise_commit_retries() -> None:
    config = CatalogConfig(name="s3", catalog_type="s3tables", warehouse=ARN, region="us-east-1")
    assert config.table_defaults() == {
        "commit.retry.num-retries": "10",
        "commit.retry.min-wait-ms": "250",
        "commit.retry.max-wait-ms": "30000",
    }


def test_local_catalog_keeps_iceberg_defaults() -> None:
    config = CatalogConfig(name="local", catalog_type="local", warehouse="/tmp/wh")
    assert config.table_defaults() == {}


def test_commit_conflict_explains_that_nothing_was_committed() -> None:
    chain = [JavaError("org.apache.iceberg.exceptions.CommitFailedException", "ref changed")]
    message = summarize(chain)
    assert message.startswith("Iceberg commit conflict")
    assert "the table is unchanged" in message
    assert "write_conflict_retries" in message
    assert message.endswith("CommitFailedException: ref changed")


def test_unknown_commit_state_says_to_check_the_table() -> None:
    chain = [JavaError("org.apache.iceberg.exceptions.CommitStateUnknownException", "timeout")]
    message = summarize(chain)
    assert "could not tell whether the commit landed" in message
    assert "unchanged" not in message


def test_other_errors_are_left_alone() -> None:
    chain = [JavaError("org.apache.spark.sql.AnalysisException", "[X] column x not found")]
    assert summarize(chain) == "[X] column x not found"


VALIDATION = (
    "org.apache.iceberg.exceptions.ValidationException: Found conflicting files that can "
    "contain records matching true: [file:/w/a/t/data/00000-1-x.parquet]"
)


def test_merge_validation_failure_is_a_conflict_and_explained() -> None:
    chain = [
        JavaError("org.apache.spark.SparkException", "Writing job aborted"),
        JavaError("org.apache.iceberg.exceptions.ValidationException", VALIDATION),
    ]
    assert summarize(chain).startswith("Iceberg commit conflict")


@pytest.mark.parametrize(
    "text",
    [
        "org.apache.iceberg.exceptions.CommitFailedException: ref changed",
        VALIDATION,
        "ValidationException: Missing required files to delete: file:/w/a.parquet",
        "ValidationException: Cannot commit, found new delete for replaced data file",
        # Snapshot expiry removed the snapshot the statement started from.
        "java.lang.IllegalArgumentException: Snapshot 5213 is not an ancestor of -8841",
        "ValidationException: Cannot determine history between starting snapshot 1 and the "
        "last known ancestor 2",
    ],
)
def test_conflicts_are_recognised(text: str) -> None:
    assert is_write_conflict(text)


def test_the_retry_line_names_expiry_apart_from_another_writer() -> None:
    assert conflict_cause("Snapshot 5213 is not an ancestor of -8841").startswith("snapshot expiry")
    assert conflict_cause(VALIDATION) == "another writer committed to the table first"


@pytest.mark.parametrize(
    "text",
    [
        "org.apache.iceberg.exceptions.CommitStateUnknownException: timeout",
        "ValidationException: Cannot find field 'x' in struct",
        "[TABLE_OR_VIEW_NOT_FOUND] The table or view `a`.`b` cannot be found",
    ],
)
def test_other_failures_are_not_conflicts(text: str) -> None:
    assert not is_write_conflict(text)


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    return recorded_sleeps(monkeypatch, write_conflicts)


def failing(errors: list[Exception]):
    calls = []

    def run() -> str:
        calls.append(1)
        if errors:
            raise errors.pop(0)
        return "committed"

    return run, calls


def test_a_conflicting_statement_is_rerun_until_it_commits(sleeps: list[float]) -> None:
    run, calls = failing([RuntimeError(VALIDATION), RuntimeError(VALIDATION)])
    policy = ConflictRetries(retries=3, first_wait_seconds=1.0)
    assert run_with_conflict_retries(run, str, policy, "MERGE INTO t") == "committed"
    assert len(calls) == 3
    # Doubling with jitter: retry n waits between base and twice base.
    assert 1.0 <= sleeps[0] <= 2.0 and 2.0 <= sleeps[1] <= 4.0


def test_retries_run_out_with_the_last_error(sleeps: list[float]) -> None:
    errors = [RuntimeError(f"{VALIDATION} #{i}") for i in range(5)]
    run, calls = failing(list(errors))
    with pytest.raises(RuntimeError) as raised:
        run_with_conflict_retries(run, str, ConflictRetries(retries=2), "MERGE INTO t")
    assert raised.value is errors[2]
    assert len(calls) == 3 and len(sleeps) == 2


def test_no_retries_when_set_to_zero(sleeps: list[float]) -> None:
    run, calls = failing([RuntimeError(VALIDATION)])
    with pytest.raises(RuntimeError):
        run_with_conflict_retries(run, str, ConflictRetries(retries=0), "MERGE INTO t")
    assert len(calls) == 1 and sleeps == []


def test_other_errors_are_not_rerun(sleeps: list[float]) -> None:
    run, calls = failing([RuntimeError("[DIVIDE_BY_ZERO] Division by zero")])
    with pytest.raises(RuntimeError):
        run_with_conflict_retries(run, str, ConflictRetries(retries=3), "INSERT INTO t")
    assert len(calls) == 1 and sleeps == []


def test_waits_are_capped() -> None:
    assert ConflictRetries(first_wait_seconds=20).wait(4) == MAX_WAIT_SECONDS


VIEW_EXISTS = "org.apache.iceberg.exceptions.AlreadyExistsException: View already exists: a.v"


def test_a_view_created_meanwhile_is_a_conflict_only_for_create_or_replace() -> None:
    replace = '/* {"app": "dbt"} */\ncreate or replace view `a`.`v` as select 1'
    assert is_write_conflict(VIEW_EXISTS, replace)
    assert not is_write_conflict(VIEW_EXISTS, "create view `a`.`v` as select 1")
    assert not is_write_conflict(VIEW_EXISTS)
