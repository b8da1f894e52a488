"""The nearest known key to a misspelt one."""

from __future__ import annotations

from dbt.adapters.s3tables.keys.spelling import did_you_mean, nearest_key

KNOWN = ["unique_key", "partition_by", "warehouse", "pre_hook"]


def test_a_typo_finds_its_key() -> None:
    assert nearest_key("unique_ky", KNOWN) == "unique_key"
    assert nearest_key("wharehouse", KNOWN) == "warehouse"
    assert nearest_key("partiton_by", KNOWN) == "partition_by"


def test_case_and_dashes_do_not_count() -> None:
    assert nearest_key("Unique-Key", KNOWN) == "unique_key"
    assert nearest_key("pre-hook", KNOWN) == "pre_hook"


def test_nothing_close_gives_no_guess() -> None:
    assert nearest_key("zzzz", KNOWN) is None
    assert did_you_mean("zzzz", KNOWN) == ""
    assert did_you_mean("unique_ky", KNOWN) == " (did you mean `unique_key`?)"
