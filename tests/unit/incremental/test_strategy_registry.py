"""The registry of incremental strategies: every record declares every trait, the docs'
table is the registry's, no code tests a strategy's name, and a custom strategy (dbt's
`get_incremental_<name>_sql` hook) gets its default or declared traits, or is refused
in one sentence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.incremental.config import incremental_config, resolve_strategy
from dbt.adapters.s3tables.incremental.strategies import STRATEGIES
from dbt.adapters.s3tables.incremental.strategy_traits import (
    Counting,
    Reading,
    Replaces,
    custom_strategy,
    macro_name,
    traits_table,
    undeclared_traits,
)
from dbt.adapters.s3tables.incremental.upstream_reads import refused_reader

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "dbt" / "adapters" / "s3tables"


def custom(name: str) -> bool:
    return name in ("insert_only", "append")


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_every_registered_strategy_declares_every_trait(name: str) -> None:
    strategy = STRATEGIES[name]
    assert strategy.name == name
    assert undeclared_traits(strategy) == []
    assert strategy.statement is not None and strategy.custom_macro is None
    assert strategy.kept_column_values.startswith(name)
    # A statement that is a MERGE has a fallback without it, or none at all (refused).
    assert strategy.fallback is None or strategy.uses_merge


def test_a_missing_trait_is_found() -> None:
    broken = STRATEGIES["append"].__class__.__new__(STRATEGIES["append"].__class__)
    for field_name, value in vars(STRATEGIES["append"]).items():
        object.__setattr__(broken, field_name, value)
    object.__setattr__(broken, "replaces", None)
    assert undeclared_traits(broken) == ["replaces"]


def test_the_docs_table_is_the_registrys() -> None:
    text = (ROOT / "docs" / "incremental.md").read_text()
    found = re.search(
        r"<!-- strategy traits: generated from STRATEGIES -->\n(.*?)\n<!-- end of strategy",
        text,
        re.S,
    )
    assert found is not None
    expected = traits_table({**STRATEGIES, "custom": custom_strategy("m", "<custom>", None, None)})
    assert found.group(1) == expected, f"paste into docs/incremental.md:\n{expected}"


# A strategy's name compared, or looked up in a tuple, in code: what the record replaces.
NAME_TEST = re.compile(
    r"""(==|!=|\bin\b)\s*\(?\s*["'](append|merge|delete\+insert|insert_overwrite|scd2|microbatch)["']"""
)


def compares_a_name(line: str) -> bool:
    """Whether `line` compares a strategy's name (a loop over other names is no test)."""
    return bool(NAME_TEST.search(line)) and not re.search(r"\bfor \w+ in \(", line)


def test_no_code_tests_a_strategys_name() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in PACKAGE.rglob("*.py")
        if path.name not in ("strategies.py", "strategy_traits.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if compares_a_name(line)
    ]
    assert offenders == []


def test_the_name_test_finds_a_tested_name() -> None:
    assert compares_a_name('if settings.strategy == "insert_overwrite":')
    assert compares_a_name('if strategy in ("delete+insert", "microbatch"):')
    assert not compares_a_name('return {f"write.{op}.mode": v for op in ("merge", "update")}')


def test_a_custom_strategy_gets_the_default_traits() -> None:
    strategy = resolve_strategy("orders", "insert_only", ["id"], custom)
    assert strategy.name == "insert_only"
    assert strategy.custom_macro == "get_incremental_insert_only_sql"
    assert strategy.statement is None and strategy.fallback is None
    assert (strategy.keyed, strategy.deduplicates, strategy.counts_keys) == (False, False, False)
    assert strategy.replaces is Replaces.UNDECLARED and strategy.readings == frozenset()
    assert not strategy.skipped_when_empty
    assert strategy.counted_as is Counting.ROWS_REPLACED
    assert undeclared_traits(strategy) == []


def test_a_custom_strategy_declares_its_traits() -> None:
    strategy = resolve_strategy(
        "orders",
        "insert_only",
        ["id"],
        custom,
        {
            "replaces": "nothing",
            "keyed": True,
            "skipped_when_empty": "true",
            "counted_as": "appended",
        },
    )
    assert strategy.replaces is Replaces.NOTHING
    assert strategy.readings == frozenset(Reading)
    assert strategy.keyed and strategy.skipped_when_empty
    assert strategy.counted_as is Counting.APPENDED
    with pytest.raises(ModelConfigError, match="needs a unique_key"):
        resolve_strategy("orders", "insert_only", [], custom, {"keyed": True})


def test_an_override_keeps_the_built_in_traits_but_not_its_statement() -> None:
    strategy = resolve_strategy("orders", "append", [], custom)
    built_in = STRATEGIES["append"]
    assert strategy.custom_macro == "get_incremental_append_sql"
    assert strategy.statement is None
    assert (strategy.replaces, strategy.skipped_when_empty, strategy.counted_as) == (
        built_in.replaces,
        built_in.skipped_when_empty,
        built_in.counted_as,
    )


def test_delete_insert_has_dbts_macro_name() -> None:
    assert macro_name("delete+insert") == "get_incremental_delete_insert_sql"


@pytest.mark.parametrize(
    ("declared", "key", "problem"),
    [
        ({"replace": "nothing"}, "incremental_strategy_traits.replace", "did you mean `replaces`"),
        ({"replaces": "everything"}, "incremental_strategy_traits.replaces", "everything"),
        ({"replaces": "time_window"}, "incremental_strategy_traits.replaces", "microbatch"),
        ({"keyed": "maybe"}, "incremental_strategy_traits.keyed", "maybe"),
        ("nothing", "incremental_strategy_traits", "not a mapping"),
    ],
)
def test_bad_declared_traits_are_refused_in_one_sentence(
    declared: object, key: str, problem: str
) -> None:
    with pytest.raises(ModelConfigError) as error:
        resolve_strategy("orders", "insert_only", ["id"], custom, declared)
    message = str(error.value)
    assert "`orders`" in message and f"`{key}`" in message and "Fix:" in message
    assert problem in message


def test_traits_on_a_built_in_strategy_are_refused() -> None:
    with pytest.raises(ModelConfigError, match="incremental_strategy_traits"):
        incremental_config(
            "orders",
            {
                "unique_key": "id",
                "incremental_strategy": "merge",
                "incremental_strategy_traits": {"replaces": "nothing"},
            },
        )


def test_without_a_macro_an_unknown_name_names_the_hook() -> None:
    with pytest.raises(ModelConfigError) as error:
        resolve_strategy("orders", "insert_only", ["id"])
    assert "get_incremental_insert_only_sql" in str(error.value)


@pytest.mark.parametrize(
    ("declared", "keyless", "keyed"),
    [
        (None, False, False),
        ({"replaces": "nothing"}, True, True),
        ({"replaces": "rows_by_key"}, True, True),
        ({"replaces": "partitions"}, True, False),
    ],
)
def test_a_custom_strategy_reads_upstream_changes_by_what_it_replaces(
    declared: object, keyless: bool, keyed: bool
) -> None:
    strategy = resolve_strategy("copy", "insert_only", ["id"], custom, declared)
    for is_keyed, accepted in ((False, keyless), (True, keyed)):
        refused = refused_reader("copy", "incremental", strategy, "ignore", is_keyed)
        assert (refused is None) is accepted
        if refused is not None:
            assert refused.msg.startswith("Model `copy`") and "Fix: " in refused.msg
            assert "nothing was read or written" in refused.msg


def test_a_custom_partitions_strategy_needs_partition_by() -> None:
    with pytest.raises(ModelConfigError, match="partition_by"):
        incremental_config(
            "orders",
            {
                "incremental_strategy": "insert_only",
                "incremental_strategy_traits": {"replaces": "partitions"},
            },
            is_custom_strategy=custom,
        )


@pytest.mark.parametrize("key", ["use_merge", "merge_update_columns", "merge_exclude_columns"])
def test_a_key_a_custom_macro_never_sees_is_refused(key: str) -> None:
    with pytest.raises(ModelConfigError) as error:
        incremental_config(
            "orders",
            {"incremental_strategy": "insert_only", "unique_key": "id", key: "false"},
            is_custom_strategy=custom,
        )
    message = str(error.value)
    assert f"`{key}`" in message and "get_incremental_insert_only_sql" in message
    assert "Fix: remove" in message
