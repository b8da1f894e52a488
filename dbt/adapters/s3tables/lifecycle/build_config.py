"""What the lifecycle features read of a model's whole config: `ModelConfig` composes their
configs with the others one layer up, and is passed here as this protocol."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from dbt.adapters.s3tables.lifecycle.maintenance_config import MaintenanceConfig


class LifecycleConfig(Protocol):
    """A model's `audit_before_publish`, `maintenance` and table properties."""

    @property
    def audit_before_publish(self) -> bool: ...

    @property
    def maintenance(self) -> MaintenanceConfig | None: ...

    def table_properties(self, catalog_defaults: Mapping[str, str]) -> dict[str, str]: ...
