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
        code = error.response.get("Error", {}).get("Code", "")
        if code in ("NotFoundException", "NoSuchTableBucket", "ResourceNotFoundException"):
            raise TableBucketError(
                arn,
                f"does not exist in {region}",
                "check the ARN (account, region, bucket name) or create the bucket",
            ) from None
        if code in ("AccessDeniedException", "AccessDenied", "ForbiddenException"):
            raise TableBucketError(
                arn,
                "access denied",
                "allow s3tables:GetTableBucket (and the permissions listed in docs/catalogs.md) "
                "for these credentials",
            ) from None
        raise TableBucketError(
            arn, f"S3 Tables answered {code or error}", "see the AWS error"
        ) from None
    except BotoCoreError as error:
        raise TableBucketError(arn, f"cannot be reached: {error}", "check the network") from None
    return {k: v for k, v in response.items() if k != "ResponseMetadata"}


@cache
def ensure_table_bucket(arn: str, region: str, aws_profile: str | None = None) -> None:
    """`check_table_bucket` once per process and bucket (a failure is not remembered)."""
    check_table_bucket(arn, region, aws_profile)
