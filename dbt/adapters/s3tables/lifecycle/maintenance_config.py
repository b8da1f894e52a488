"""A model's `maintenance` config: after a successful build, which thresholds of the table's
health start maintenance, and which maintenance runs (pure functions; the adapter reads
the health and runs the procedures, see maintenance.py).

    maintenance:
      when: {delete_files_above: 10, data_files_above: 100, snapshots_above: 50}
      operations: [compact, expire_snapshots]
      retain_last: 5

Maintenance runs when ANY threshold is crossed (the table's count is above it). Every key
but `when` is an option of `s3tables_maintain`, checked by `parse_maintenance_options`;
`operations` defaults to all but `remove_orphan_files`, which lists every file under the
table's location and so belongs in a scheduled `s3tables_maintain`, not after every build.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from dbt.adapters.s3tables.catalogs.snapshots import TableHealth
from dbt.adapters.s3tables.errors import MaintenanceError, ModelConfigError
from dbt.adapters.s3tables.lifecycle.maintenance import (
    OPERATIONS,
    MaintenanceOptions,
    parse_maintenance_options,
)

CONFIG_KEY = "maintenance"
# Each threshold of `when`, and the TableHealth count it limits.
THRESHOLDS = {
    "delete_files_above": "delete_files",
    "data_files_above": "data_files",
    "snapshots_above": "snapshots",
}
AFTER_BUILD_OPERATIONS = tuple(o for o in OPERATIONS if o != "remove_orphan_files")


@dataclass(frozen=True)
class MaintenanceConfig:
    """When a model's table is maintained after its build, and how."""

    # Threshold key -> the count it allows (maintenance runs above it).
    when: dict[str, int]
    options: MaintenanceOptions

    def crossed(self, health: TableHealth) -> list[str]:
        """The thresholds `health` is above, each as e.g. `delete files 12 > 10`."""
        crossed = []
        for key, limit in self.when.items():
            field = THRESHOLDS[key]
            count = getattr(health, field)
            if count > limit:
                crossed.append(f"{field.replace('_', ' ')} {count} > {limit}")
        return crossed


def parse_maintenance_config(model_name: str, value: Any) -> MaintenanceConfig | None:
    """The model's `maintenance` config (None: unset or null, no maintenance), or a
    ModelConfigError naming the model, the key and the fix."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ModelConfigError(
            model_name,
            CONFIG_KEY,
            f"is `{value}`, not a mapping",
            "give `when:` with at least one threshold, e.g. `{when: {delete_files_above: 10}}`",
        )
    known = ["when", *(f.name for f in fields(MaintenanceOptions))]
    for key in value:
        if key not in known:
            raise ModelConfigError(
                model_name, f"{CONFIG_KEY}.{key}", "is not an option", f"use: {', '.join(known)}"
            )
    when = _thresholds(model_name, value.get("when"))
    arguments = {k: v for k, v in value.items() if k != "when"}
    try:
        options = parse_maintenance_options({"operations": AFTER_BUILD_OPERATIONS, **arguments})
    except MaintenanceError as error:
        raise ModelConfigError(
            model_name, f"{CONFIG_KEY}.{error.key}", error.problem, error.fix
        ) from None
    return MaintenanceConfig(when=when, options=options)


def _thresholds(model_name: str, when: Any) -> dict[str, int]:
    key = f"{CONFIG_KEY}.when"
    example = "e.g. `when: {delete_files_above: 10}`"
    if not isinstance(when, Mapping) or not when:
        raise ModelConfigError(
            model_name,
            key,
            "names no threshold: maintenance runs when one is crossed",
            f"give at least one of {', '.join(THRESHOLDS)}, {example}",
        )
    thresholds = {}
    for name, limit in when.items():
        if name not in THRESHOLDS:
            raise ModelConfigError(
                model_name, f"{key}.{name}", "is not a threshold", f"use: {', '.join(THRESHOLDS)}"
            )
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ModelConfigError(
                model_name,
                f"{key}.{name}",
                f"is `{limit}`, not a count",
                "give a whole number, 0 or more (maintenance runs when the table has more)",
            )
        thresholds[name] = limit
    return thresholds
