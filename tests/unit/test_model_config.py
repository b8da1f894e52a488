"""Checks of a model's incremental config."""

from __future__ import annotations

import pytest

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.incremental.config import (
    check_columns_exist,
    normalize_unique_key,
    resolve_strategy,
)
from dbt.adapters.s3tables.incremental.strategies import STRATEGIES
from dbt.adapters.s3tables.model_config import check_model_config


@pytest.mark.parametrize(
    ("unique_key", "expected"),
    [
        (None, []),
        ("id", ["id"]),
        (" id ", ["id"]),
        (["a", "b"], ["a", "b"]),
        (("b", "a"), ["b", "a"]),
        (["Id", "id", "ID", "b"], ["Id", "b"]),
        (["", "  ", "a"], ["a"]),
        ("", []),
        ([], []),
    ],
)
def test_normalize_unique_key(unique_key: object, expected: list[str]) -> None:
    assert normalize_unique_key(unique_key) == expected


def test_string_key_is_not_split_into_characters() -> None:
    assert normalize_unique_key("order_id") == ["order_id"]


def test_default_strategy_is_append_without_key() -> None:
    assert resolve_strategy("orders", None, []).name == "append"


def test_default_strategy_is_merge_with_key() -> None:
    assert resolve_strategy("orders", None, ["id"]).name == "merge"


def test_configured_strategy_wins() -> None:
    assert resolve_strategy("orders", "append", ["id"]).name == "append"


def test_unknown_strategy_lists_valid_ones() -> None:
    with pytest.raises(ModelConfigError) as error:
        resolve_strategy("orders", "upsert", ["id"])
    message = str(error.value)
    assert "`orders`" in message
    assert "incremental_strategy" in message
    assert "upsert" in message
    fix = message.split("Fix:")[1]
    assert STRATEGIES and all(name in fix for name in STRATEGIES)
    assert {"append", "merge"} <= set(STRATEGIES)
    assert "get_incremental_upsert_sql" in fix


def test_merge_without_key_errors() -> None:
    with pytest.raises(ModelConfigError) as error:
        resolve_strategy("orders", "merge", [])
    message = str(error.value)
    assert "`orders`" in message
    assert "unique_key" in message
    assert "Fix:" in message


def test_columns_exist_case_insensitively() -> None:
    available = ["id", "Status", "amount"]
    assert check_columns_exist("orders", "unique_key", ["ID", "status"], available) is None


def test_missing_columns_are_named() -> None:
    with pytest.raises(ModelConfigError) as error:
        check_columns_exist("orders", "unique_key", ["id", "customer", "day"], ["id", "amount"])
    message = str(error.value)
    assert "`orders`" in message
    assert "`unique_key`" in message
    problem = message.split("Fix:")[0]
    assert "customer" in problem and "day" in problem
    assert "not in the model's output (id, amount)" in problem


@pytest.mark.parametrize(
    ("config", "key", "fix"),
    [
        ({"file_format": "delta"}, "file_format", "set it to `iceberg`"),
        ({"file_format": "parquet"}, "file_format", "remove `file_format`"),
        ({"grants": {"select": ["analyst"]}}, "grants", "remove `grants`"),
        ({"location_root": "s3://x"}, "location_root", "remove `location_root`"),
        ({"clustered_by": ["id"], "buckets": 4}, "clustered_by", "remove `clustered_by`"),
        ({"options": {"a": "b"}}, "options", "remove `options`"),
    ],
)
def test_configs_this_adapter_would_ignore_are_refused(config: dict, key: str, fix: str) -> None:
    with pytest.raises(ModelConfigError) as raised:
        check_model_config("orders", config)
    message = str(raised.value)
    assert "Model `orders`" in message and f"config `{key}`" in message and fix in message


@pytest.mark.parametrize(
    "config", [{}, {"file_format": "iceberg"}, {"file_format": "ICEBERG", "grants": {}}]
)
def test_applicable_configs_pass(config: dict) -> None:
    check_model_config("orders", config)


def test_format_version_sets_the_created_tables_property_and_is_checked() -> None:
    from dbt.adapters.s3tables.model_config import parse_model_config

    defaults = {"format-version": "2", "write.format.default": "parquet"}
    v3 = parse_model_config("m", {"materialized": "table", "format_version": "3"})
    assert v3.format_version == 3
    assert v3.table_properties(defaults)["format-version"] == "3"
    # Not a property an incremental run keeps the table at: only a create or upgrade sets it.
    assert "format-version" not in v3.write_properties_to_apply(defaults)
    plain = parse_model_config("m", {"materialized": "table"})
    assert plain.format_version is None
    assert plain.table_properties(defaults)["format-version"] == "2"
    agreeing = {"format_version": 3, "tblproperties": {"format-version": 3}}
    assert parse_model_config("m", agreeing).format_version == 3
    assert parse_model_config("m", {"tblproperties": {"format-version": "3"}}).format_version == 3
    for config, message in [
        ({"format_version": 4}, "config `format_version`: `4` is not an Iceberg format version"),
        ({"format_version": True}, "config `format_version`: `True`"),
        ({"tblproperties": {"format-version": "1"}}, "config `tblproperties.format-version`"),
        (
            {"format_version": 2, "tblproperties": {"format-version": "3"}},
            "config `format_version`: `2` disagrees with tblproperties `format-version: 3`. "
            "Fix: set only",
        ),
    ]:
        with pytest.raises(ModelConfigError, match="Model `m`, " + message.replace("(", "\\(")):
            parse_model_config("m", config)


def test_a_rebuild_never_lowers_the_tables_format_version() -> None:
    from dbt.adapters.s3tables.model_config import parse_model_config

    reads: list[str] = []

    def at_v3() -> int:
        reads.append("read")
        return 3

    table = parse_model_config("m", {"materialized": "table", "format_version": 2})
    error = table.lowered_format_version({}, "s.m", at_v3)
    assert error is not None and error.msg == (
        "Model `m`, config `format_version`: 2, but its table `s.m` is at Iceberg format v3, "
        "and Iceberg never lowers a table's format version. Fix: remove `format_version` from "
        "the model (a rebuild keeps the table's version), or drop the table to recreate it at v2"
    )
    # A catalog's default asking for v2: the model is told to ask for the table's version.
    plain = parse_model_config("m", {"materialized": "table"})
    error = plain.lowered_format_version({"format-version": "2"}, "s.m", at_v3)
    assert "config `format_version (the catalog's default)`: 2" in str(error)
    assert "Fix: set `format_version: 3` on this model" in str(error)
    assert (
        parse_model_config("m", {"format_version": 3}).lowered_format_version({}, "s.m", at_v3)
        is None
    )
    reads.clear()
    # No version asked for: a rebuild keeps the table's, nothing is read.
    assert plain.lowered_format_version({}, "s.m", at_v3) is None
    assert reads == []


@pytest.mark.parametrize(
    ("config", "language", "accepted"),
    [
        ({"materialized": "table"}, "sql", True),
        ({"materialized": "incremental", "unique_key": "id"}, "sql", True),
        (
            {
                "materialized": "incremental",
                "unique_key": "id",
                "incremental_strategy": "delete+insert",
            },
            "sql",
            True,
        ),
        (
            {
                "materialized": "incremental",
                "incremental_strategy": "insert_overwrite",
                "partition_by": ["day"],
            },
            "sql",
            True,
        ),
        ({"materialized": "incremental", "incremental_strategy": "append"}, "sql", False),
        (
            {"materialized": "incremental", "unique_key": "id", "incremental_strategy": "scd2"},
            "sql",
            False,
        ),
        ({"materialized": "view"}, "sql", False),
        ({"materialized": "table"}, "python", False),
    ],
)
def test_skip_when_unchanged_only_where_a_rerun_over_the_same_rows_changes_nothing(
    config: dict, language: str, accepted: bool
) -> None:
    from dbt.adapters.s3tables.model_config import parse_model_config

    config = {**config, "skip_when_unchanged": True}
    if accepted:
        assert parse_model_config("m", config, language).skip_when_unchanged
        assert not parse_model_config(
            "m", {**config, "skip_when_unchanged": "false"}, language
        ).skip_when_unchanged
        return
    with pytest.raises(ModelConfigError, match="`skip_when_unchanged`.*Fix: remove"):
        parse_model_config("m", config, language)
