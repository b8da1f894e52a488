"""Config keys nothing reads: the adapter's one list of the keys it reads, the keys dbt
reads by name, and the check naming the others with the nearest known key."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import dbt.include.global_project
import dbt.include.spark
import pytest
from dbt.artifacts.resources import (
    FunctionConfig,
    NodeConfig,
    SeedConfig,
    SnapshotConfig,
    SourceConfig,
    TestConfig,
    UnitTestConfig,
)
from dbt.artifacts.resources.v1.model import ModelConfig
from dbt.contracts.graph.nodes import UnitTestNodeConfig

from dbt.adapters.s3tables.errors import UnknownConfigKeysError
from dbt.adapters.s3tables.incremental.config import HASHED_CONFIG_KEYS
from dbt.adapters.s3tables.keys.config_keys import (
    ADAPTER_CONFIG_KEYS,
    DBT_INTERNAL_PREFIX,
    DBT_READ_KEYS,
    DECLARED_KEYS_VAR,
    WARNING_NOTE,
    ConfigKeyCheck,
    UnknownConfigKey,
    config_fields,
    declared_keys,
    unknown_config_keys,
    unknown_key_sentence,
)
from dbt.adapters.s3tables.model_config import INAPPLICABLE_CONFIGS

REPO = Path(__file__).parents[3]
ADAPTER_CODE = REPO / "dbt"
# How code reads a config key by name, in Python and in Jinja.
READS = [
    re.compile(r"""config\.get\(\s*["']([\w-]+)["']"""),
    re.compile(r"""config\.require\(\s*["']([\w-]+)["']"""),
    re.compile(r"""config['"]\]\.get\(\s*["']([\w-]+)["']"""),
    re.compile(r"""config\[["']([\w-]+)["']\]"""),
    re.compile(r"""_config_get\([^,]+,\s*["']([\w-]+)["']"""),
    re.compile(r"""CONFIG_KEY = ["']([\w-]+)["']"""),
    re.compile(r"""flag\(\s*model_name,\s*config,\s*["']([\w-]+)["']"""),
]
# Read by dbt-adapters' Python job submission, which this adapter's Python models do not
# go through: the key changes nothing here, and a warning says so.
NOT_READ_ON_THIS_ADAPTER = {"submission_method"}
DBT_CONFIG_CLASSES = (
    NodeConfig,
    ModelConfig,
    SeedConfig,
    SnapshotConfig,
    TestConfig,
    UnitTestConfig,
    UnitTestNodeConfig,
    SourceConfig,
    FunctionConfig,
)


def keys_read(folder: Path) -> set[str]:
    found: set[str] = set()
    for path in folder.rglob("*"):
        if path.suffix in (".py", ".sql") and path.name != "config_keys.py":
            text = path.read_text()
            for pattern in READS:
                found.update(pattern.findall(text))
    return found


def dbt_fields() -> set[str]:
    return {name for cls in DBT_CONFIG_CLASSES for name in config_fields(cls)}


def test_every_key_the_adapter_reads_is_listed() -> None:
    read = keys_read(ADAPTER_CODE)
    # The search finds what it should (the list below is not vacuous).
    assert {"unique_key", "column_types", "quote_columns", "catalog_name", "maintenance"} <= read
    read |= set(HASHED_CONFIG_KEYS) | set(INAPPLICABLE_CONFIGS)
    assert sorted(read - ADAPTER_CONFIG_KEYS) == []


def test_every_key_dbt_reads_by_name_is_known() -> None:
    """dbt-core's, dbt-adapters' and dbt-spark's macros and Python: a key read by name that
    is not a field of dbt's config classes must be listed (checked on each dbt upgrade)."""
    site = Path(dbt.include.global_project.__file__).parents[2]
    read = set()
    for folder in (
        Path(dbt.include.global_project.__file__).parent,
        Path(dbt.include.spark.__file__).parent,
        site / "adapters" / "base",
        site / "adapters" / "sql",
        site / "context",
        site / "parser",
        site / "task",
        site / "contracts",
    ):
        read |= keys_read(folder)
    assert {"sql_header", "hard_deletes", "catalog", "merge_update_columns"} <= read
    internal = {key for key in read if key.startswith(DBT_INTERNAL_PREFIX)}
    unknown = read - dbt_fields() - DBT_READ_KEYS - ADAPTER_CONFIG_KEYS - internal
    assert sorted(unknown) == sorted(NOT_READ_ON_THIS_ADAPTER)


def test_no_key_is_listed_as_the_adapters_that_it_does_not_read() -> None:
    read = keys_read(ADAPTER_CODE) | set(HASHED_CONFIG_KEYS) | set(INAPPLICABLE_CONFIGS)
    assert sorted(ADAPTER_CONFIG_KEYS - read) == []


def test_a_typo_is_found_with_the_nearest_key() -> None:
    extra = {"unique_ky": "id", "tblproperties": {}, "partiton_by": ["d"]}
    assert unknown_config_keys(extra, config_fields(ModelConfig)) == [
        UnknownConfigKey("partiton_by", "partition_by"),
        UnknownConfigKey("unique_ky", "unique_key"),
    ]


def test_dbt_fields_suggest_too_and_a_far_key_gets_no_guess() -> None:
    found = unknown_config_keys({"materialised": "table", "zzzzzz": 1}, config_fields(ModelConfig))
    assert found == [
        UnknownConfigKey("materialised", "materialized"),
        UnknownConfigKey("zzzzzz", None),
    ]


def test_keys_dbt_the_adapter_the_project_or_the_model_read_pass() -> None:
    extra = {
        "sql_header": "SET x=1",
        "hard_deletes": "invalidate",
        "invalidate_hard_deletes": True,
        "description": "d",
        "write_mode": "copy_on_write",
        "scd_valid_to": "valid_to",
        "file_format": "iceberg",
        "dbt-osmosis": "_{model}.yml",
        # A Python model's `dbt.config.get("threshold")`, as dbt records it.
        "config_keys_used": ["threshold"],
        "config_keys_defaults": [None],
        "threshold": 3,
        "__dbt_internal_microbatch_event_time_start": "2024-01-01",
    }
    assert unknown_config_keys(extra, config_fields(ModelConfig), {"dbt-osmosis"}) == []


def test_the_var_is_a_list_or_one_name() -> None:
    assert declared_keys(None) == set()
    assert declared_keys("required_tests") == {"required_tests"}
    assert declared_keys(["a", "b"]) == {"a", "b"}


def test_the_sentence_names_the_node_the_key_the_nearest_and_the_fix() -> None:
    sentence = unknown_key_sentence(
        "seed", "prices", UnknownConfigKey("colum_types", "column_types")
    )
    assert sentence == (
        "Seed `prices`, config `colum_types`: neither dbt nor s3tables reads this key, so it "
        "changes nothing (did you mean `column_types`?). Fix: correct it, or list a key that "
        f"a package or macro of the project reads in var `{DECLARED_KEYS_VAR}`"
    )


def test_config_fields_are_written_as_in_a_project() -> None:
    names = config_fields(ModelConfig)
    assert "pre-hook" in names and "unique_key" in names and "_extra" not in names


def test_the_macro_passes_the_var_and_every_materialization_checks() -> None:
    macros = ADAPTER_CODE / "include" / "s3tables" / "macros"
    assert f"var('{DECLARED_KEYS_VAR}'" in (macros / "config_keys.sql").read_text()
    for path in (macros / "materializations").glob("*.sql"):
        text = path.read_text()
        assert "{% materialization" in text or "{%- materialization" in text
        assert "s3tables_model_config()" in text or "s3tables_check_config_keys()" in text, path


@dataclass
class NodeConfig:
    """A node's config as dbt gives it: the keys dbt does not know are in `extra`."""

    materialized: str
    extra: dict[str, object]


def test_the_check_warns_once_per_node_and_key_or_fails_with_the_flag() -> None:
    node = {"unique_id": "model.p.orders", "resource_type": "model", "name": "orders"}
    config = NodeConfig("view", {"materialised": "table"})
    warnings: list[str] = []
    check = ConfigKeyCheck()
    for _ in range(2):
        check.check(node, config, None, fail=False, warn=warnings.append)
    assert len(warnings) == 1 and "config `materialised`" in warnings[0]
    assert warnings[0].endswith(WARNING_NOTE)
    with pytest.raises(UnknownConfigKeysError, match="config `materialised`"):
        check.check(node, config, None, fail=True, warn=warnings.append)
