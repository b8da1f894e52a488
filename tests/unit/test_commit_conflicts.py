"""Commit conflicts (S3 Tables compaction): retries configured per catalog, and a clear
error when they run out."""

from __future__ import annotations

from dbt.adapters.s3tables.catalog_config import CatalogConfig
from dbt.adapters.s3tables.spark_errors import JavaError, summarize

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
    assert "commit.retry.num-retries" in message
    assert message.endswith("CommitFailedException: ref changed")


def test_unknown_commit_state_says_to_check_the_table() -> None:
    chain = [JavaError("org.apache.iceberg.exceptions.CommitStateUnknownException", "timeout")]
    message = summarize(chain)
    assert "could not tell whether the commit landed" in message
    assert "unchanged" not in message


def test_other_errors_are_left_alone() -> None:
    chain = [JavaError("org.apache.spark.sql.AnalysisException", "[X] column x not found")]
    assert summarize(chain) == "[X] column x not found"
