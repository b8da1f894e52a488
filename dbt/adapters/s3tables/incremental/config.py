"""An incremental model's config as one typed object (`IncrementalConfig`), parsed and
validated once, before anything is written (pure functions; the checks that need the
model's output columns take them)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.incremental.chunked_refresh import CONFIG_KEY as CHUNK_CONFIG_KEY
from dbt.adapters.s3tables.incremental.chunked_refresh import ChunkPlan, chunk_plan
from dbt.adapters.s3tables.incremental.key_uniqueness import CONFIG_KEY as UNIQUENESS_KEY
from dbt.adapters.s3tables.incremental.key_uniqueness import uniqueness_setting
from dbt.adapters.s3tables.incremental.partition_evolution import (
    PartitionTerm,
    parse_partition_by,
)
from dbt.adapters.s3tables.incremental.schema_evolution import (
    WHOLE_HISTORY_MODES,
    check_mode_for_strategy,
)
from dbt.adapters.s3tables.incremental.strategies import STRATEGIES
from dbt.adapters.s3tables.incremental.strategy_traits import (
    TRAITS_CONFIG_KEY,
    Strategy,
    custom_strategy,
    macro_name,
)
from dbt.adapters.s3tables.sql.text import expression_problem

# Config keys whose change alters what an incremental run does.
HASHED_CONFIG_KEYS = (
    "incremental_strategy",
    "unique_key",
    "partition_by",
    "incremental_predicates",
    "merge_update_columns",
    "merge_exclude_columns",
    "merge_delete_when",
    "watermark_column",
    "scd_check_cols",
    "scd_valid_from",
    "scd_valid_to",
    "event_time",
    "write_mode",
    TRAITS_CONFIG_KEY,
)


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


USE_MERGE_VALUES = ("auto", "true", "false")


def normalize_unique_key(unique_key: str | Sequence[str] | None) -> list[str]:
    if unique_key is None:
        return []
    keys = [unique_key] if isinstance(unique_key, str) else list(unique_key)
    unique: list[str] = []
    for key in keys:
        key = str(key).strip()
        if key and key.lower() not in {k.lower() for k in unique}:
            unique.append(key)
    return unique


def normalize_predicates(model_name: str, predicates: str | Sequence[str] | None) -> list[str]:
    """The predicates as a list, each checked to be one expression: the statement puts
    each in parentheses, and one that escapes them (`1=1) OR (1=1`) would change what
    the statement matches."""
    if not predicates:
        return []
    listed = [predicates] if isinstance(predicates, str) else [str(p) for p in predicates]
    for predicate in listed:
        problem = expression_problem(predicate)
        if problem:
            raise ModelConfigError(
                model_name,
                "incremental_predicates",
                f"`{predicate}` {problem}; each predicate must be one boolean expression",
                "write each condition as its own list item, with balanced parentheses",
            )
    return listed


def normalize_columns(columns: str | Sequence[str] | None) -> list[str] | None:
    if columns is None:
        return None
    return [columns] if isinstance(columns, str) else [str(c) for c in columns]


def resolve_strategy(
    model_name: str,
    strategy: str | None,
    unique_key: Sequence[str],
    is_custom: Callable[[str], bool] = lambda name: False,
    declared_traits: object = None,
) -> Strategy:
    """The strategy to run: the configured one, else merge with a key and append without.
    A name with a `get_incremental_<name>_sql` macro in the project or a package
    (`is_custom`) is a custom strategy, a built-in name's too (an override, as dbt allows)."""
    name = strategy or ("merge" if unique_key else "append")
    built_in = STRATEGIES.get(name)
    if is_custom(name):
        chosen = custom_strategy(model_name, name, built_in, declared_traits)
    elif built_in is None:
        raise ModelConfigError(
            model_name,
            "incremental_strategy",
            f"unknown strategy `{name}`",
            f"use one of: {', '.join(STRATEGIES)}; or define a macro "
            f"`{macro_name(name)}(arg_dict)` in the project for a custom strategy",
        )
    elif declared_traits is not None:
        raise ModelConfigError(
            model_name,
            TRAITS_CONFIG_KEY,
            f"declares traits of the built-in strategy `{name}`, whose traits are its own",
            f"remove `{TRAITS_CONFIG_KEY}`, or use it with a custom strategy's macro",
        )
    else:
        chosen = built_in
    if chosen.keyed and not unique_key:
        raise ModelConfigError(
            model_name,
            "unique_key",
            f"strategy `{name}` needs a unique_key",
            "set `unique_key` to the column (or list of columns) identifying a row",
        )
    return chosen


def check_columns_exist(
    model_name: str, key: str, columns: Sequence[str], available: Sequence[str]
) -> None:
    known = {c.lower() for c in available}
    missing = [c for c in columns if c.lower() not in known]
    if missing:
        raise ModelConfigError(
            model_name,
            key,
            f"column(s) {', '.join(missing)} not in the model's output ({', '.join(available)})",
            f"select the column(s) in the model or correct `{key}`",
        )


@dataclass(frozen=True)
class IncrementalConfig:
    """The incremental settings of one model, validated and normalized."""

    model_name: str
    strategy: Strategy
    unique_key: list[str]
    predicates: list[str]
    update_columns: list[str] | None
    exclude_columns: list[str] | None
    watermark_column: str | None
    # `partition_by` as Iceberg partition fields (what the table's spec evolves to).
    partitioning: tuple[PartitionTerm, ...]
    check_columns: list[str] | None
    valid_from: str
    valid_to: str
    event_time: str | None
    on_schema_change: str = "ignore"
    # `full_incremental_refresh`'s chunk plan, when that is the on_schema_change mode.
    chunk_plan: ChunkPlan | None = None
    write_mode: str = "merge_on_read"
    use_merge: str = "auto"
    # `merge_delete_when`: the condition on a model row that deletes its key's row.
    delete_when: str | None = None
    # `unique_key_is_unique`: true/false, or None (decided from the model's constraints).
    unique_key_is_unique: bool | None = None
    # A digest of the keys whose change alters what a run does (kept on the table).
    config_hash: str = ""

    @property
    def write_properties(self) -> dict[str, str]:
        return write_mode_properties(self.model_name, self.write_mode)

    @property
    def history_columns(self) -> list[str]:
        """Columns the table has by design beyond the model's output (scd2 validity)."""
        return [self.valid_from, self.valid_to] if self.strategy.keeps_history else []


def incremental_config(
    model_name: str,
    config: Mapping[str, Any],
    language: str = "sql",
    is_custom_strategy: Callable[[str], bool] = lambda name: False,
) -> IncrementalConfig:
    """Read and check every incremental key (what needs no knowledge of columns).
    `is_custom_strategy`: whether a strategy name has a macro of the project's or a
    package's (dbt's custom-strategy hook)."""
    keys = normalize_unique_key(config.get("unique_key"))
    strategy = resolve_strategy(
        model_name,
        config.get("incremental_strategy"),
        keys,
        is_custom_strategy,
        config.get(TRAITS_CONFIG_KEY),
    )
    if strategy.custom_macro is not None:
        refuse_builtin_keys(model_name, strategy, config)
    partition_by = normalize_columns(config.get("partition_by")) or []
    if strategy.needs_partition_by and not partition_by:
        raise ModelConfigError(
            model_name,
            "partition_by",
            f"strategy `{strategy.name}` replaces the partitions present in the new rows and "
            "needs `partition_by` (without it every run would wipe the whole table)",
            "set `partition_by`, or use `append`, `merge` or `delete+insert`",
        )
    update_columns = normalize_columns(config.get("merge_update_columns"))
    exclude_columns = normalize_columns(config.get("merge_exclude_columns"))
    if update_columns is not None and exclude_columns is not None:
        raise ModelConfigError(
            model_name,
            "merge_update_columns",
            "is set together with `merge_exclude_columns`",
            "keep only one of the two",
        )
    event_time = config.get("event_time")
    if strategy.needs_event_time and not event_time:
        raise ModelConfigError(
            model_name,
            "event_time",
            f"strategy `{strategy.name}` needs the column holding each row's event time",
            "set `event_time`, `begin` and `batch_size`",
        )
    mode = check_mode_for_strategy(model_name, config.get("on_schema_change"), strategy)
    if language == "python" and mode in WHOLE_HISTORY_MODES:
        raise ModelConfigError(
            model_name,
            "on_schema_change",
            f"`{mode}` rebuilds from the model's whole-history SQL, which a Python model "
            "does not have",
            "use `recreate_empty`, `append_new_columns` or `sync_all_columns`",
        )
    return IncrementalConfig(
        model_name=model_name,
        strategy=strategy,
        unique_key=keys,
        # `predicates` is the older name dbt still honours.
        predicates=normalize_predicates(
            model_name, config.get("incremental_predicates") or config.get("predicates")
        ),
        update_columns=update_columns,
        exclude_columns=exclude_columns,
        watermark_column=config.get("watermark_column"),
        partitioning=parse_partition_by(model_name, partition_by),
        check_columns=normalize_columns(config.get("scd_check_cols")),
        valid_from=config.get("scd_valid_from") or "valid_from",
        valid_to=config.get("scd_valid_to") or "valid_to",
        event_time=event_time,
        on_schema_change=mode,
        chunk_plan=chunk_plan(model_name, config) if mode == "full_incremental_refresh" else None,
        write_mode=write_mode_setting(model_name, config.get("write_mode")),
        use_merge=use_merge_setting(model_name, config.get("use_merge")),
        delete_when=delete_when_setting(model_name, strategy, config.get("merge_delete_when")),
        unique_key_is_unique=uniqueness_setting(model_name, config.get(UNIQUENESS_KEY)),
        config_hash=digest({k: config.get(k) for k in HASHED_CONFIG_KEYS}),
    )


# Keys only the built-in statements read: a custom strategy's macro gets dbt's `arg_dict`,
# which holds none of them.
BUILT_IN_STATEMENT_KEYS = ("use_merge", "merge_update_columns", "merge_exclude_columns")


def refuse_builtin_keys(model_name: str, strategy: Strategy, config: Mapping[str, Any]) -> None:
    """A key a custom strategy's macro never sees, refused rather than ignored."""
    for key in BUILT_IN_STATEMENT_KEYS:
        if config.get(key) is not None:
            raise ModelConfigError(
                model_name,
                key,
                f"shapes the adapter's built-in statements, and strategy `{strategy.name}` "
                f"runs its macro `{strategy.custom_macro}`, whose `arg_dict` does not hold it",
                f"remove `{key}`, or read it in the macro with `config.get('{key}')`",
            )


def delete_when_setting(model_name: str, strategy: Strategy, delete_when: object) -> str | None:
    """`merge_delete_when`: one boolean expression over the model's columns, for `merge`."""
    if delete_when is None:
        return None
    key = "merge_delete_when"
    if not isinstance(delete_when, str) or not delete_when.strip():
        raise ModelConfigError(
            model_name,
            key,
            f"`{delete_when}` is not a condition",
            "write a boolean expression over the model's columns, such as "
            "`_change_type = 'DELETE'`",
        )
    if not strategy.takes_delete_when:
        raise ModelConfigError(
            model_name,
            key,
            f"deletes rows in a merge, and the strategy is `{strategy.name}`",
            "set `incremental_strategy: merge`, or remove `merge_delete_when`",
        )
    problem = expression_problem(delete_when)
    if problem:
        raise ModelConfigError(
            model_name, key, f"`{delete_when}` {problem}", "write one boolean expression"
        )
    return delete_when.strip()


def check_against_columns(settings: IncrementalConfig, source_columns: Sequence[str]) -> None:
    """Every column the config names must be in the model's output."""
    name = settings.model_name
    check_columns_exist(name, "unique_key", settings.unique_key, source_columns)
    if settings.watermark_column:
        check_columns_exist(name, "watermark_column", [settings.watermark_column], source_columns)
    if settings.update_columns:
        check_columns_exist(name, "merge_update_columns", settings.update_columns, source_columns)
    if settings.exclude_columns:
        check_columns_exist(name, "merge_exclude_columns", settings.exclude_columns, source_columns)
    if settings.check_columns:
        check_columns_exist(name, "scd_check_cols", settings.check_columns, source_columns)
    if settings.event_time:
        check_columns_exist(name, "event_time", [settings.event_time], source_columns)
    partition_columns = [term.source for term in settings.partitioning]
    check_columns_exist(name, "partition_by", partition_columns, source_columns)
    if settings.chunk_plan:
        check_columns_exist(
            name, f"{CHUNK_CONFIG_KEY}.event_time", [settings.chunk_plan.event_time], source_columns
        )


WRITE_MODES = {"merge_on_read": "merge-on-read", "copy_on_write": "copy-on-write"}


def write_mode_setting(model_name: str, write_mode: str | None) -> str:
    """`write_mode` (default merge_on_read), or an error listing the valid ones."""
    mode = write_mode or "merge_on_read"
    if mode not in WRITE_MODES:
        raise ModelConfigError.unknown_value(model_name, "write_mode", mode, WRITE_MODES)
    return mode


def write_mode_properties(model_name: str, write_mode: str | None) -> dict[str, str]:
    """Iceberg row-level write properties for `write_mode` (default merge_on_read)."""
    value = WRITE_MODES[write_mode_setting(model_name, write_mode)]
    return {f"write.{op}.mode": value for op in ("merge", "update", "delete")}


def merge_update_columns(
    settings: IncrementalConfig, target_columns: Sequence[str]
) -> list[str] | None:
    """The target columns a merge updates: `merge_update_columns`, or every column but the
    keys and `merge_exclude_columns` (None: every non-key column)."""
    if settings.update_columns is not None:
        wanted = {c.lower() for c in settings.update_columns}
        return [c for c in target_columns if c.lower() in wanted]
    if settings.exclude_columns is not None:
        skipped = {c.lower() for c in [*settings.exclude_columns, *settings.unique_key]}
        return [c for c in target_columns if c.lower() not in skipped]
    return None


def use_merge_setting(model_name: str, value: Any) -> str:
    """`use_merge` as one of auto, true, false (default auto)."""
    setting = str(value).lower() if value is not None else "auto"
    if setting not in USE_MERGE_VALUES:
        raise ModelConfigError.unknown_value(model_name, "use_merge", value, USE_MERGE_VALUES)
    return setting


def resolve_use_merge(model_name: str, value: Any, has_extensions: bool) -> tuple[bool, str]:
    """Whether to write with MERGE INTO, and why (for the log)."""
    setting = use_merge_setting(model_name, value)
    if setting == "false":
        return False, "use_merge is false"
    if has_extensions:
        return True, f"use_merge is {setting} and Iceberg's SQL extensions are loaded"
    if setting == "true":
        raise ModelConfigError(
            model_name,
            "use_merge",
            "is true, but this Spark session lacks Iceberg's SQL extensions (MERGE INTO needs "
            "spark.sql.extensions to include "
            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions)",
            "add the extensions to the session, or set use_merge to auto or false",
        )
    return False, "use_merge is auto and Iceberg's SQL extensions are not loaded"


class ModelBuildConfig(Protocol):
    """What an incremental run reads of the model's whole config (`ModelConfig`, which
    composes this package's config with the others, one layer up)."""

    @property
    def incremental(self) -> IncrementalConfig | None: ...

    @property
    def contract_enforced(self) -> bool: ...

    def table_properties(self, catalog_defaults: Mapping[str, str]) -> dict[str, str]: ...

    def write_properties_to_apply(self, catalog_defaults: Mapping[str, str]) -> dict[str, str]: ...
