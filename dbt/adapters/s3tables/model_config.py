"""Checks of a model's incremental config, before anything runs (pure functions)."""

from __future__ import annotations

from collections.abc import Sequence

from dbt_common.exceptions import CompilationError

from dbt.adapters.s3tables.strategies import STRATEGY_BUILDERS

# Strategies dbt users may name; those without a builder yet are refused explicitly.
KNOWN_STRATEGIES = tuple(STRATEGY_BUILDERS)
KEYED_STRATEGIES = ("merge",)


class ModelConfigError(CompilationError):
    def __init__(self, model_name: str, key: str, problem: str, fix: str) -> None:
        super().__init__(f"Model `{model_name}`, config `{key}`: {problem}. Fix: {fix}")


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


def normalize_predicates(predicates: str | Sequence[str] | None) -> list[str]:
    if not predicates:
        return []
    return [predicates] if isinstance(predicates, str) else [str(p) for p in predicates]


def resolve_strategy(model_name: str, strategy: str | None, unique_key: Sequence[str]) -> str:
    """The strategy to run: the configured one, else merge with a key and append without."""
    chosen = strategy or ("merge" if unique_key else "append")
    if chosen not in KNOWN_STRATEGIES:
        raise ModelConfigError(
            model_name,
            "incremental_strategy",
            f"unknown strategy `{chosen}`",
            f"use one of: {', '.join(KNOWN_STRATEGIES)}",
        )
    if chosen in KEYED_STRATEGIES and not unique_key:
        raise ModelConfigError(
            model_name,
            "unique_key",
            f"strategy `{chosen}` needs a unique_key",
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
