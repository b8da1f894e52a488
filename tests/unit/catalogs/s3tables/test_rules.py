"""Amazon S3 Tables' rules for table bucket ARNs, namespace/table/column names and views."""

from __future__ import annotations

import pytest

from dbt.adapters.s3tables.catalogs.s3tables.rules import (
    NAME_MAX_LENGTH,
    TableBucket,
    check_materialization,
    check_names,
    check_namespace,
    name_problem,
    parse_table_bucket_arn,
    suggested_name,
)
from dbt.adapters.s3tables.errors import NamingRuleError

ARN = "arn:aws:s3tables:us-east-1:111122223333:bucket/amzn-s3-demo-table-bucket"


def arn_with_bucket(bucket: str) -> str:
    return f"arn:aws:s3tables:us-east-1:111122223333:bucket/{bucket}"


def fix_of(error: pytest.ExceptionInfo[NamingRuleError]) -> str:
    message = str(error.value)
    assert "Fix:" in message
    return message.split("Fix:")[1]


def suggestion_in(fix: str) -> str:
    """The last backticked name of a fix (`set `key` to `name`` or `use `name``)."""
    parts = fix.split("`")
    assert len(parts) >= 3, fix
    return parts[-2]


# --- parse_table_bucket_arn ---


def test_parse_documented_example_arn() -> None:
    assert parse_table_bucket_arn(ARN) == TableBucket(
        arn=ARN, region="us-east-1", account="111122223333", name="amzn-s3-demo-table-bucket"
    )


@pytest.mark.parametrize(
    ("arn", "region", "account", "name"),
    [
        ("arn:aws:s3tables:eu-west-3:000000000001:bucket/abc", "eu-west-3", "000000000001", "abc"),
        (
            "arn:aws-us-gov:s3tables:us-gov-west-1:123456789012:bucket/gov-1",
            "us-gov-west-1",
            "123456789012",
            "gov-1",
        ),
        (
            "arn:aws-cn:s3tables:cn-north-1:123456789012:bucket/b2b",
            "cn-north-1",
            "123456789012",
            "b2b",
        ),
        (
            f"arn:aws:s3tables:ap-southeast-2:123456789012:bucket/{'a' * 63}",
            "ap-southeast-2",
            "123456789012",
            "a" * 63,
        ),
    ],
)
def test_parse_valid_arns(arn: str, region: str, account: str, name: str) -> None:
    bucket = parse_table_bucket_arn(arn)
    assert (bucket.arn, bucket.region, bucket.account, bucket.name) == (arn, region, account, name)


def test_parse_strips_surrounding_whitespace() -> None:
    assert parse_table_bucket_arn(f"  {ARN}\n").arn == ARN


@pytest.mark.parametrize(
    "arn",
    [
        "arn:aws:s3:us-east-1:111122223333:bucket/amzn-s3-demo-table-bucket",  # wrong service
        "arn:aws:s3tables:us-east-1:11112222333:bucket/amzn-s3-demo-table-bucket",  # 11 digits
        "arn:aws:s3tables:us-east-1:1111222233334:bucket/amzn-s3-demo-table-bucket",  # 13
        "arn:aws:s3tables:us-east-1:111122223333:table/amzn-s3-demo-table-bucket",
        "arn:aws:s3tables::111122223333:bucket/amzn-s3-demo-table-bucket",  # no region
        "arn:aws:s3tables:us-east-1:111122223333:bucket/a/b",
        "arn:aws:s3tables:us-east-1:111122223333:bucket/",
        "amzn-s3-demo-table-bucket",
        "",
    ],
)
def test_parse_rejects_malformed_arns(arn: str) -> None:
    with pytest.raises(ValueError) as error:
        parse_table_bucket_arn(arn)
    assert "arn:aws:s3tables:<region>:<12-digit account>:bucket/<name>" in str(error.value)


@pytest.mark.parametrize(
    "bucket",
    [
        "Amzn-demo",  # uppercase
        "ab",  # too short
        "a" * 64,  # too long
        "-bucket",  # starts with a hyphen
        "bucket-",  # ends with a hyphen
        "my_bucket",  # underscore
        "my.bucket",  # period
    ],
)
def test_parse_rejects_bad_bucket_names(bucket: str) -> None:
    with pytest.raises(ValueError) as error:
        parse_table_bucket_arn(arn_with_bucket(bucket))
    message = str(error.value)
    assert f"`{bucket}`" in message
    assert "3 to 63" in message


@pytest.mark.parametrize("bucket", ["abc", "a" * 63, "a-1", "123"])
def test_parse_accepts_bucket_name_bounds(bucket: str) -> None:
    assert parse_table_bucket_arn(arn_with_bucket(bucket)).name == bucket


# --- name_problem ---


@pytest.mark.parametrize("kind", ["namespace", "table", "column"])
def test_empty_name(kind: str) -> None:
    problem = name_problem("", kind)
    assert problem is not None
    assert kind in problem
    assert "empty" in problem


@pytest.mark.parametrize("kind", ["namespace", "table", "column"])
def test_255_characters_is_the_longest_name(kind: str) -> None:
    assert NAME_MAX_LENGTH == 255
    assert name_problem("a" * 255, kind) is None
    problem = name_problem("a" * 256, kind)
    assert problem is not None
    assert "256" in problem


@pytest.mark.parametrize(
    "name", ["Orders", "my orders", "my-orders", "_orders", "my.orders", "ordérs", "orders\n"]
)
@pytest.mark.parametrize("kind", ["namespace", "table", "column"])
def test_names_outside_the_rules(name: str, kind: str) -> None:
    problem = name_problem(name, kind)
    assert problem is not None
    assert f"`{name}`" in problem


@pytest.mark.parametrize("name", ["orders", "o", "1st_orders", "fct_orders_2024", "a_b_c"])
@pytest.mark.parametrize("kind", ["namespace", "table", "column"])
def test_names_inside_the_rules(name: str, kind: str) -> None:
    assert name_problem(name, kind) is None


@pytest.mark.parametrize("name", ["aws", "aws_data", "awsome"])
def test_namespace_must_not_start_with_aws(name: str) -> None:
    problem = name_problem(name, "namespace")
    assert problem is not None
    assert "aws" in problem


@pytest.mark.parametrize("name", ["aws", "aws_data", "awsome"])
@pytest.mark.parametrize("kind", ["table", "column"])
def test_tables_and_columns_may_start_with_aws(name: str, kind: str) -> None:
    assert name_problem(name, kind) is None


@pytest.mark.parametrize("kind", ["namespace", "table"])
def test_name_must_not_end_with_an_underscore(kind: str) -> None:
    # AWS: namespace and table names "must begin and end with a letter or number"
    # (S3 Tables naming rules; "Underscores aren't allowed at the start or end of
    # namespace names" on the namespace page).
    assert name_problem("orders_", kind) is not None


# --- suggested_name ---


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [
        ("Orders", "orders"),
        ("my orders", "my_orders"),
        ("my-orders", "my_orders"),
        ("_orders", "orders"),
        ("__Stg.Orders", "stg_orders"),
        ("  Orders  ", "orders"),
        ("", "t"),
        ("___", "t"),
    ],
)
def test_suggested_name(name: str, suggestion: str) -> None:
    assert suggested_name(name) == suggestion


def test_suggested_name_is_cut_to_255() -> None:
    assert suggested_name("A" * 300) == "a" * 255


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("Orders", id="upper"),
        pytest.param("my orders", id="space"),
        pytest.param("-x-", id="hyphens"),
        pytest.param("_", id="underscore"),
        pytest.param("", id="empty"),
        pytest.param("A" * 300, id="300-chars"),
        pytest.param("aws_data", id="aws-prefix"),
        pytest.param("AWS-Data", id="aws-prefix-upper"),
        # 255 characters starting with `aws`: the `dbt_` prefix makes the suggestion 259.
        pytest.param("aws" + "a" * 252, id="aws-prefix-255-chars"),
    ],
)
def test_suggested_namespace_is_accepted_by_the_rules(name: str) -> None:
    with pytest.raises(NamingRuleError) as error:
        check_namespace(name)
    suggestion = suggestion_in(fix_of(error))
    assert name_problem(suggestion, "namespace") is None, suggestion


# --- check_names ---


def test_valid_names_pass() -> None:
    check_names("orders", "analytics", "orders", ["id", "amount", "aws_region"])
    assert name_problem("analytics", "namespace") is None


@pytest.mark.parametrize(
    ("table", "suggestion"),
    [
        ("Orders", "orders"),
        ("my orders", "my_orders"),
        ("my-orders", "my_orders"),
        ("_orders", "orders"),
        ("", "t"),
    ],
)
def test_bad_table_name_names_model_name_and_suggestion(table: str, suggestion: str) -> None:
    with pytest.raises(NamingRuleError) as error:
        check_names("fct_orders", "analytics", table)
    message = str(error.value)
    assert "Model `fct_orders`" in message
    assert "table" in message
    if table:
        assert f"`{table}`" in message
    fix = fix_of(error)
    assert "`alias`" in fix
    assert f"`{suggestion}`" in fix
    assert name_problem(suggestion, "table") is None


def test_too_long_table_name_is_refused_with_a_valid_suggestion() -> None:
    table = "t" * 256
    with pytest.raises(NamingRuleError) as error:
        check_names("wide", "analytics", table)
    message = str(error.value)
    assert "Model `wide`" in message
    assert "256" in message
    assert table[:40] in message
    assert f"`{'t' * 255}`" in fix_of(error)


@pytest.mark.parametrize(
    ("namespace", "suggestion"),
    [
        ("Analytics", "analytics"),
        ("my-schema", "my_schema"),
        ("aws_data", "dbt_aws_data"),
        ("AWS", "dbt_aws"),
    ],
)
def test_bad_namespace_names_model_name_and_suggestion(namespace: str, suggestion: str) -> None:
    with pytest.raises(NamingRuleError) as error:
        check_names("orders", namespace, "orders")
    message = str(error.value)
    assert "Model `orders`" in message
    assert f"`{namespace}`" in message
    fix = fix_of(error)
    assert "`schema`" in fix
    assert f"`{suggestion}`" in fix
    assert name_problem(suggestion, "namespace") is None


def test_table_starting_with_aws_is_fine() -> None:
    check_names("aws_costs", "analytics", "aws_costs", ["aws_account"])
    assert name_problem("aws_costs", "table") is None


def test_namespace_is_checked_before_table() -> None:
    with pytest.raises(NamingRuleError) as error:
        check_names("m", "Bad-Ns", "Bad-Table")
    assert "Bad-Ns" in str(error.value)
    assert "`schema`" in fix_of(error)


def test_bad_columns_are_all_listed_with_their_renames() -> None:
    with pytest.raises(NamingRuleError) as error:
        check_names("orders", "analytics", "orders", ["id", "Order Date", "total-amount", "ok"])
    message = str(error.value)
    assert "Model `orders`" in message
    assert "`Order Date`" in message
    assert "`total-amount`" in message
    assert "`id`" not in message
    assert "`ok`" not in message
    fix = fix_of(error)
    assert "`Order Date` as `order_date`" in fix
    assert "`total-amount` as `total_amount`" in fix


# --- check_namespace ---


def test_check_namespace() -> None:
    check_namespace("analytics")
    with pytest.raises(NamingRuleError) as error:
        check_namespace("aws_logs")
    message = str(error.value)
    assert "Namespace `aws_logs`" in message
    assert "`dbt_aws_logs`" in fix_of(error)


# --- check_materialization ---


def test_view_is_refused() -> None:
    with pytest.raises(NamingRuleError) as error:
        check_materialization("daily_orders", "view")
    message = str(error.value)
    assert "Model `daily_orders`" in message
    assert "view" in message
    fix = fix_of(error)
    assert "`table`" in fix
    assert "`ephemeral`" in fix


@pytest.mark.parametrize(
    "materialized", ["table", "incremental", "ephemeral", "seed", "snapshot", "materialized_view"]
)
def test_other_materializations_pass(materialized: str) -> None:
    assert check_materialization("daily_orders", materialized) is None
