"""The S3 Tables management API where the adapter uses it (the table bucket check made
before anything else), against moto's `s3tables` server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
import requests
from moto.server import ThreadedMotoServer

from dbt.adapters.s3tables.catalogs.s3tables.table_bucket import check_table_bucket
from dbt.adapters.s3tables.errors import TableBucketError
from tests.functional.emulators import REGION, fake_aws_environment, free_port


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    # boto3 sends every `s3tables` call of this process to the emulator.
    with fake_aws_environment(AWS_ENDPOINT_URL_S3TABLES=endpoint):
        yield endpoint
    server.stop()


def test_existing_bucket_is_described(moto_endpoint: str) -> None:
    client = boto3.client("s3tables", region_name=REGION)
    arn = client.create_table_bucket(name="present-bucket")["arn"]
    bucket = check_table_bucket(arn, REGION)
    assert bucket["arn"] == arn
    assert bucket["name"] == "present-bucket"


def test_missing_bucket_names_the_bucket_and_the_fix(moto_endpoint: str) -> None:
    client = boto3.client("s3tables", region_name=REGION)
    arn = client.create_table_bucket(name="short-lived")["arn"]
    client.delete_table_bucket(tableBucketARN=arn)
    with pytest.raises(TableBucketError) as error:
        check_table_bucket(arn, REGION)
    message = str(error.value)
    assert arn in message
    assert "does not exist in us-east-1" in message
    assert "Fix:" in message


def test_no_credentials_is_a_clear_error(moto_endpoint: str, monkeypatch) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    arn = "arn:aws:s3tables:us-east-1:123456789012:bucket/anything"
    with pytest.raises(TableBucketError, match="no AWS credentials"):
        check_table_bucket(arn, REGION)


def test_credentials_the_emulator_refuses_are_named_with_the_fix(monkeypatch) -> None:
    # A server of its own: moto checks every later request's credentials once told to.
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    try:
        with fake_aws_environment(AWS_ENDPOINT_URL_S3TABLES=endpoint):
            arn = boto3.client("s3tables", region_name=REGION).create_table_bucket(
                name="guarded-bucket"
            )["arn"]
            requests.post(f"{endpoint}/moto-api/reset-auth", data=b"0", timeout=10)
            with pytest.raises(TableBucketError) as error:
                check_table_bucket(arn, REGION)
    finally:
        server.stop()
    assert error.value.msg == (
        f"S3 Tables table bucket `{arn}`: the AWS credentials are not valid "
        "(InvalidClientTokenId: an unknown key or a wrong secret). Fix: check which "
        "credentials the chain picked (`aws sts get-caller-identity`, `aws_profile` in the "
        "profile) and rerun"
    )
