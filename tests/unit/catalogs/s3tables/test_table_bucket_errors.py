"""What an S3 Tables error at the table bucket check means, in one sentence with its fix:
botocore's ClientError as AWS's JSON answers build it, and as an emulator's 403 whose code
is only in its message."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from dbt.adapters.s3tables.catalogs.s3tables.table_bucket import client_error_problem
from dbt.adapters.s3tables.errors import TableBucketError

ARN = "arn:aws:s3tables:us-east-1:111122223333:bucket/analytics"


def aws_error(code: str, status: int, message: str = "") -> ClientError:
    response = {"Error": {"Code": code, "Message": message}}
    response["ResponseMetadata"] = {"HTTPStatusCode": status}
    return ClientError(response, "GetTableBucket")  # type: ignore[arg-type]


def sentence(error: ClientError) -> str:
    return TableBucketError(ARN, *client_error_problem(error, "us-east-1")).msg


@pytest.mark.parametrize(
    ("code", "status", "problem", "fix"),
    [
        ("AccessDeniedException", 403, "access denied (AccessDeniedException)", "docs/aws.md#iam"),
        ("ExpiredTokenException", 403, "have expired (ExpiredTokenException)", "aws sso login"),
        ("UnrecognizedClientException", 403, "are not valid", "aws sts get-caller-identity"),
        ("ThrottlingException", 429, "throttled the requests", "AWS_RETRY_MODE=adaptive"),
        ("NotFoundException", 404, "does not exist in us-east-1", "create the bucket"),
        ("InternalServerError", 500, "S3 Tables answered InternalServerError", "see the AWS"),
    ],
)
def test_each_aws_error_is_one_sentence_with_its_fix(
    code: str, status: int, problem: str, fix: str
) -> None:
    message = sentence(aws_error(code, status))
    assert message.startswith(f"S3 Tables table bucket `{ARN}`: ")
    assert problem in message and fix in message.split("Fix: ")[1]
    assert "\n" not in message


def test_an_emulators_403_is_read_by_the_code_in_its_message() -> None:
    xml = "<ErrorResponse><Errors><Error><Code>InvalidClientTokenId</Code></Error></Errors>"
    assert "are not valid (InvalidClientTokenId" in sentence(aws_error("403", 403, xml))
    assert "access denied (403)" in sentence(aws_error("403", 403, "<html>Forbidden</html>"))
