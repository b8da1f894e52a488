"""Pure pieces of the incremental path: use_merge, write modes, commit counts, model
state, and the statements of the newer strategies."""

from __future__ import annotations

import pytest

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.incremental.commit_counts import commit_counts
from dbt.adapters.s3tables.incremental.config import (
    incremental_config,
    resolve_use_merge,
    write_mode_properties,
)
from dbt.adapters.s3tables.incremental.model_state import STRATEGY, compare_state
from dbt.adapters.s3tables.incremental.statement_parts import IncrementalWrite
from dbt.adapters.s3tables.incremental.strategies import (
    delete_insert_fallback_sql,
    delete_insert_sql,
    microbatch_sql,
    scd2_sql,
)
from dbt.adapters.s3tables.incremental.strategy_traits import Counting


def test_use_merge_auto_follows_the_extensions() -> None:
    assert resolve_use_merge("m", None, True)[0] is True
    assert resolve_use_merge("m", "auto", False)[0] is False
    assert resolve_use_merge("m", False, True)[0] is False


def test_use_merge_true_without_extensions_names_them() -> None:
    with pytest.raises(ModelConfigError) as error:
        resolve_use_merge("orders", True, False)
    message = str(error.value)
    assert "`orders`" in message and "use_merge" in message and "is true" in message
    assert "IcebergSparkSessionExtensions" in message


def test_use_merge_unknown_value_lists_valid_ones() -> None:
    with pytest.raises(ModelConfigError, match="auto, true, false"):
        resolve_use_merge("orders", "maybe", True)


def test_write_modes() -> None:
    assert set(write_mode_properties("m", None).values()) == {"merge-on-read"}
    assert write_mode_properties("m", "copy_on_write")["write.delete.mode"] == "copy-on-write"
    with pytest.raises(ModelConfigError, match="merge_on_read, copy_on_write"):
        write_mode_properties("m", "fast")


def test_counts_from_merge_on_read_summaries() -> None:
    merge = commit_counts(Counting.MERGED, {"added-records": "3", "added-position-deletes": "2"})
    assert (merge.inserted, merge.updated, merge.deleted) == (1, 2, 0)
    replace = commit_counts(
        Counting.ROWS_REPLACED, {"added-records": "3", "added-position-deletes": "2"}
    )
    assert (replace.inserted, replace.updated, replace.deleted) == (3, 0, 2)
    assert commit_counts(Counting.APPENDED, None).inserted == 0


def test_copy_on_write_update_count_is_unknown_not_guessed() -> None:
    counts = commit_counts(Counting.MERGED, {"added-records": "1003", "deleted-records": "1000"})
    assert counts.updated is None and counts.inserted == 3


def test_insert_overwrite_without_partition_by_is_refused() -> None:
    with pytest.raises(ModelConfigError, match="partition_by"):
        incremental_config("daily", {"incremental_strategy": "insert_overwrite"})


def test_switch_to_scd2_is_refused_other_changes_warn() -> None:
    settings = incremental_config("m", {"incremental_strategy": "scd2", "unique_key": "id"})
    with pytest.raises(ModelConfigError, match="--full-refresh"):
        compare_state(settings, {STRATEGY: "merge"})
    merge = incremental_config("m", {"unique_key": "id"})
    assert compare_state(merge, {STRATEGY: "append"}) == [
        "incremental_strategy changed from `append` to `merge`"
    ]


def write(**options) -> IncrementalWrite:
    base = {
        "target": "`s`.`t`",
        "source_sql": "select * from src",
        "target_columns": ["id", "name", "valid_from", "valid_to"],
        "source_columns": ["id", "name"],
        "unique_key": ["id"],
    }
    return IncrementalWrite(**{**base, **options})


def test_delete_insert_is_one_merge_statement() -> None:
    sql = delete_insert_sql(write())
    assert sql.count("MERGE INTO") == 1 and ";" not in sql
    assert "WHEN MATCHED THEN DELETE" in sql
    assert "DBT_INTERNAL_DEST.`id` <=> DBT_INTERNAL_SOURCE.`id`" in sql
    assert "SELECT DISTINCT `id`" in sql


def test_fallback_is_one_insert_overwrite() -> None:
    sql = delete_insert_fallback_sql(write())
    assert sql.startswith("INSERT OVERWRITE `s`.`t`") and "MERGE" not in sql


def test_microbatch_window_is_in_the_on_clause() -> None:
    sql = microbatch_sql(
        write(event_time="ts", window_start="2024-01-01 00:00:00", window_end="2024-01-02")
    )
    on = sql.split("\nON ", 1)[1].split("\n", 1)[0]
    assert "DBT_INTERNAL_DEST.`ts` >= TIMESTAMP '2024-01-01 00:00:00'" in on
    assert "DBT_INTERNAL_DEST.`ts` < TIMESTAMP '2024-01-02'" in on


def test_scd2_tracks_check_cols_and_never_writes_history_columns_from_source() -> None:
    sql = scd2_sql(write(check_columns=["name"]))
    assert "NOT (DBT_INTERNAL_DEST.`name` <=> DBT_INTERNAL_SOURCE.`name`)" in sql
    assert "`valid_to` = current_timestamp()" in sql
    assert "DBT_INTERNAL_SOURCE.`valid_from`" not in sql


def test_a_predicate_escaping_its_parentheses_is_refused() -> None:
    config = {"unique_key": "id", "incremental_predicates": ["a > 0", "1=1) OR (1=1"]}
    with pytest.raises(ModelConfigError) as raised:
        incremental_config("orders", config)
    message = str(raised.value)
    assert "`orders`" in message and "incremental_predicates" in message
    assert "`1=1) OR (1=1` closes a parenthesis it did not open" in message


def test_balanced_predicates_are_kept_in_order() -> None:
    config = {"unique_key": "id", "predicates": "DBT_INTERNAL_DEST.day in ('a', 'b')"}
    assert incremental_config("m", config).predicates == ["DBT_INTERNAL_DEST.day in ('a', 'b')"]


def test_merge_delete_when_is_one_condition_for_a_merge() -> None:
    config = {"unique_key": "id", "merge_delete_when": " _change_type = 'DELETE' "}
    assert incremental_config("m", config).delete_when == "_change_type = 'DELETE'"
    with pytest.raises(ModelConfigError, match=r"`m`.*merge_delete_when.*`append`"):
        incremental_config("m", {"merge_delete_when": "x", "incremental_strategy": "append"})
    with pytest.raises(ModelConfigError, match="merge_delete_when.*one boolean expression"):
        incremental_config("m", {"unique_key": "id", "merge_delete_when": "a) OR (b"})
    with pytest.raises(ModelConfigError, match="merge_delete_when.*is not a condition"):
        incremental_config("m", {"unique_key": "id", "merge_delete_when": ["x"]})
