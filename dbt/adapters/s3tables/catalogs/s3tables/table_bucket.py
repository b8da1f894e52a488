"""The S3 Tables management API (boto3 `s3tables`), where the adapter uses it: checking,
before anything else, that the profile's table bucket exists and can be reached.

A missing bucket or permission would otherwise surface as an obscure REST error at the
first statement; this names the bucket, the problem and the fix.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from dbt.adapters.s3tables.errors import TableBucketError


def check_table_bucket(arn: str, region: str, aws_profile: str | None = None) -> dict[str, Any]:
    """The bucket as S3 Tables describes it (`s3tables:GetTableBucket`), or an error."""
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    try:
        client = boto3.Session(profile_name=aws_profile, region_name=region).client("s3tables")
        response = client.get_table_bucket(tableBucketARN=arn)
    except NoCredentialsError:
        raise TableBucketError(
            arn,
            "no AWS credentials were found",
            "set `aws_profile` in the profile, or provide credentials through the default "
            "chain (environment, ~/.aws, instance role)",
        ) from None
    except ClientError as error:
        raise TableBucketError(arn, *client_error_problem(error, region)) from None
    except BotoCoreError as error:
        raise TableBucketError(arn, f"cannot be reached: {error}", "check the network") from None
    return {k: v for k, v in response.items() if k != "ResponseMetadata"}


# AWS error codes by what they mean. An emulator's 403 may carry its code only in the
# message (moto answers a JSON API in XML), so the message is searched too.
NOT_FOUND = ("NotFoundException", "NoSuchTableBucket", "ResourceNotFoundException")
ACCESS_DENIED = ("AccessDeniedException", "AccessDenied", "ForbiddenException")
INVALID_CREDENTIALS = (
    "InvalidClientTokenId",
    "UnrecognizedClientException",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "InvalidSignatureException",
)
EXPIRED = ("ExpiredTokenException", "ExpiredToken", "RequestExpired", "TokenRefreshRequired")
THROTTLED = ("ThrottlingException", "TooManyRequestsException", "SlowDown", "RequestLimitExceeded")
IAM_DOCS = "docs/aws.md#iam"


def client_error_problem(error: Any, region: str) -> tuple[str, str]:
    """What an S3 Tables error (botocore's ClientError) means, and its fix."""
    code = str(error.response.get("Error", {}).get("Code", ""))
    text = f"{code} {error.response.get('Error', {}).get('Message', '')}"
    status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")

    def named(codes: tuple[str, ...]) -> str | None:
        return next((c for c in codes if c == code), None) or next(
            (c for c in codes if c in text), None
        )

    if named(NOT_FOUND):
        return (
            f"does not exist in {region}",
            "check the ARN (account, region, bucket name) or create the bucket",
        )
    if found := named(EXPIRED):
        return (
            f"the AWS credentials have expired ({found})",
            "renew them (`aws sso login`, a new assumed-role session, or the instance's role) "
            "and rerun",
        )
    if found := named(INVALID_CREDENTIALS):
        return (
            f"the AWS credentials are not valid ({found}: an unknown key or a wrong secret)",
            "check which credentials the chain picked (`aws sts get-caller-identity`, "
            "`aws_profile` in the profile) and rerun",
        )
    if found := named(THROTTLED):
        return (
            f"S3 Tables throttled the requests beyond boto3's retries ({found})",
            "rerun; for more retries set `AWS_RETRY_MODE=adaptive` and `AWS_MAX_ATTEMPTS=10`, "
            "or lower `threads`",
        )
    if named(ACCESS_DENIED) or status == 403:
        return (
            f"access denied ({code or status})",
            "allow s3tables:GetTableBucket and the actions the dbt host needs for these "
            f"credentials ({IAM_DOCS})",
        )
    return f"S3 Tables answered {code or error}", "see the AWS error"


@cache
def ensure_table_bucket(arn: str, region: str, aws_profile: str | None = None) -> None:
    """`check_table_bucket` once per process and bucket (a failure is not remembered)."""
    check_table_bucket(arn, region, aws_profile)
