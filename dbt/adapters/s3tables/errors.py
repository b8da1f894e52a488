"""The adapter's own error types: each names what is wrong, where, and the fix."""

from __future__ import annotations

from dbt_common.exceptions import CompilationError


class ModelConfigError(CompilationError):
    """A model's config (or its output columns) cannot work; raised before anything is
    written."""

    def __init__(self, model_name: str, key: str, problem: str, fix: str) -> None:
        super().__init__(f"Model `{model_name}`, config `{key}`: {problem}. Fix: {fix}")


class UnsupportedTypeError(ValueError):
    """A Spark type Iceberg cannot hold (turned into a ModelConfigError naming the model)."""
