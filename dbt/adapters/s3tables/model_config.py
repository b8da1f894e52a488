"""A model's config as one typed object, parsed and validated once, before anything is
written (pure functions; the checks that need the model's output columns take them).

`parse_model_config` is the single entry point: every key this adapter reads is checked
there, first build included, so a bad value fails the first run rather than a later one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dbt_common.invocation import get_invocation_id

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.incremental.config import IncrementalConfig, incremental_config
from dbt.adapters.s3tables.keys.format_version import (
    FORMAT_VERSION_FIX,
    FORMAT_VERSION_PROPERTY,
    format_version_problem,
    format_version_value,
)
from dbt.adapters.s3tables.lifecycle.maintenance_config import (
    CONFIG_KEY as MAINTENANCE_CONFIG_KEY,
)
from dbt.adapters.s3tables.lifecycle.maintenance_config import (
    MaintenanceConfig,
    parse_maintenance_config,
)
from dbt.adapters.s3tables.lifecycle.unchanged_inputs import CONFIG_KEY as SKIP_KEY

# dbt-spark configs that mean something for other table formats or Hive tables only (and
# dbt's Postgres `indexes`); a model that sets one would otherwise be built as if it had not.
INAPPLICABLE_CONFIGS = {
    "location_root": "S3 Tables and the Iceberg catalogs choose table locations themselves",
    "clustered_by": "Iceberg has no Hive bucketing; partition by `bucket(<n>, <column>)`",
    "buckets": "Iceberg has no Hive bucketing; partition by `bucket(<n>, <column>)`",
    "options": "Iceberg tables take `tblproperties`, not data source options",
    "indexes": "Iceberg tables have no indexes; `partition_by` (with transforms) prunes files",
}


def check_model_config(model_name: str, config: Mapping[str, Any]) -> None:
    """Configs any model may set, checked before its materialization writes anything."""
    file_format = config.get("file_format")
    if file_format is not None and str(file_format).lower() != "iceberg":
        raise ModelConfigError(
            model_name,
            "file_format",
            f"`{file_format}` is not available: every table this adapter builds is an "
            "Iceberg table",
            "remove `file_format`, or set it to `iceberg`",
        )
    if config.get("grants"):
        raise ModelConfigError(
            model_name,
            "grants",
            "Iceberg catalogs (S3 Tables, Glue, REST, the embedded one) have no SQL grants; "
            "access to their tables is governed by IAM policies and Lake Formation",
            "remove `grants` from this model's config (or set it only for other targets)",
        )
    for key, reason in INAPPLICABLE_CONFIGS.items():
        if config.get(key) is not None:
            raise ModelConfigError(model_name, key, f"not applicable: {reason}", f"remove `{key}`")


@dataclass(frozen=True)
class ModelConfig:
    """Every config key this adapter reads for one model, checked."""

    model_name: str
    materialized: str
    language: str
    contract_enforced: bool
    # The model's own `tblproperties`, as strings.
    tblproperties: dict[str, str]
    # Set for incremental models only.
    incremental: IncrementalConfig | None
    # Write-audit-publish (see audit.py): stage on a branch until the model's tests pass.
    audit_before_publish: bool = False
    # `maintenance`: when the table is maintained after a build (None: never).
    maintenance: MaintenanceConfig | None = None
    # `format_version`: the Iceberg format version the table is created at (None: the
    # catalog's default).
    format_version: int | None = None
    # `skip_when_unchanged` (lifecycle/unchanged_inputs.py): no rebuild when nothing the
    # table's data was built from changed.
    skip_when_unchanged: bool = False

    def table_properties(self, catalog_defaults: Mapping[str, str]) -> dict[str, str]:
        """Table properties a new table gets: the catalog's table defaults, write-mode
        properties for incremental models, then the model's own `tblproperties` (which
        win)."""
        properties = dict(catalog_defaults)
        if self.incremental:
            properties.update(self.incremental.write_properties)
        properties.update(self.tblproperties)
        if self.format_version is not None:
            properties[FORMAT_VERSION_PROPERTY] = str(self.format_version)
        return properties

    def lowered_format_version(
        self, catalog_defaults: Mapping[str, str], table: str, table_version: Callable[[], int]
    ) -> ModelConfigError | None:
        """The error for a rebuild (`CREATE OR REPLACE`) of `table`, at `table_version()`
        (read only when a version is asked for), at a lower format version: Iceberg never
        lowers one, and Spark's refusal would name neither the model nor the key."""
        wanted = self.table_properties(catalog_defaults).get(FORMAT_VERSION_PROPERTY)
        if wanted is None:
            return None
        current = table_version()
        if int(wanted) >= current:
            return None
        own = self.format_version is not None or FORMAT_VERSION_PROPERTY in self.tblproperties
        return ModelConfigError(
            self.model_name,
            "format_version" if own else "format_version (the catalog's default)",
            f"{wanted}, but its table `{table}` is at Iceberg format v{current}, and Iceberg "
            "never lowers a table's format version",
            (
                "remove `format_version` from the model (a rebuild keeps the table's version)"
                if own
                else f"set `format_version: {current}` on this model"
            )
            + f", or drop the table to recreate it at v{wanted}",
        )

    def write_properties_to_apply(self, catalog_defaults: Mapping[str, str]) -> dict[str, str]:
        """The row-level write properties an incremental run keeps the table at: the
        catalog's table defaults the model does not set itself, and `write_mode`'s. The
        format version is not one: it is set when a table is created (or upgraded)."""
        wanted = {
            k: v
            for k, v in catalog_defaults.items()
            if k not in self.tblproperties and k != FORMAT_VERSION_PROPERTY
        }
        if self.incremental:
            wanted.update(self.incremental.write_properties)
        return wanted


def parse_model_config(
    model_name: str,
    config: Mapping[str, Any],
    language: str = "sql",
    is_custom_strategy: Callable[[str], bool] = lambda name: False,
) -> ModelConfig:
    """The model's config, every key checked (see `check_model_config`,
    `incremental_config` and `parse_maintenance_config`); raises ModelConfigError naming
    the key and the fix. `is_custom_strategy`: whether a strategy name has a macro of the
    project's or a package's (dbt's custom-strategy hook)."""
    check_model_config(model_name, config)
    tblproperties = {str(k): str(v) for k, v in (config.get("tblproperties") or {}).items()}
    materialized = str(config.get("materialized") or "")
    contract = config.get("contract") or {}
    enforced = contract.get("enforced") if isinstance(contract, Mapping) else contract.enforced
    incremental = (
        incremental_config(model_name, config, language, is_custom_strategy)
        if materialized == "incremental"
        else None
    )
    return ModelConfig(
        model_name=model_name,
        materialized=materialized,
        language=language,
        contract_enforced=bool(enforced),
        tblproperties=tblproperties,
        incremental=incremental,
        audit_before_publish=flag(model_name, config, "audit_before_publish"),
        maintenance=parse_maintenance_config(model_name, config.get(MAINTENANCE_CONFIG_KEY)),
        format_version=parse_format_version(model_name, config, tblproperties),
        skip_when_unchanged=parse_skip_when_unchanged(
            model_name, config, language, materialized, incremental
        ),
    )


def parse_skip_when_unchanged(
    model_name: str,
    config: Mapping[str, Any],
    language: str,
    materialized: str,
    incremental: IncrementalConfig | None,
) -> bool:
    """`skip_when_unchanged`, refused where a rebuild over the same inputs could change
    the table (or where the inputs cannot be seen)."""
    if not flag(model_name, config, SKIP_KEY):
        return False
    problem = None
    if materialized not in ("table", "incremental"):
        problem = f"a `{materialized}` model has no data commit to record its inputs in"
    elif language != "sql":
        problem = "a Python model's code is not in Spark's plan, so its inputs cannot be compared"
    elif incremental is not None and not incremental.strategy.rerun_changes_nothing:
        problem = (
            f"strategy `{incremental.strategy.name}` changes the table when run again over "
            "the same rows (it adds rows, keeps history or has a time window)"
        )
    if problem is None:
        return True
    raise ModelConfigError(
        model_name,
        SKIP_KEY,
        problem,
        f"remove `{SKIP_KEY}`; it applies to `table` models and to incremental models "
        "whose strategy replaces rows (merge, delete+insert, insert_overwrite)",
    )


def parse_format_version(
    model_name: str, config: Mapping[str, Any], tblproperties: Mapping[str, str]
) -> int | None:
    """The model's `format_version` (or its `tblproperties` `format-version`, which must
    agree with it)."""
    value = config.get("format_version")
    problem = format_version_problem(value)
    if problem:
        raise ModelConfigError(model_name, "format_version", problem, FORMAT_VERSION_FIX)
    in_properties = tblproperties.get(FORMAT_VERSION_PROPERTY)
    if in_properties is not None:
        if format_version_problem(in_properties):
            raise ModelConfigError(
                model_name,
                f"tblproperties.{FORMAT_VERSION_PROPERTY}",
                f"`{in_properties}` is not an Iceberg format version this adapter creates "
                "tables at",
                FORMAT_VERSION_FIX,
            )
        if value is not None and format_version_value(value) != int(in_properties):
            raise ModelConfigError(
                model_name,
                "format_version",
                f"`{value}` disagrees with tblproperties `{FORMAT_VERSION_PROPERTY}: "
                f"{in_properties}`",
                "set only `format_version`",
            )
    version = value if value is not None else in_properties
    return None if version is None else format_version_value(version)


def flag(model_name: str, config: Mapping[str, Any], key: str) -> bool:
    """A true/false config (a string `true`/`false` too: vars render as strings)."""
    value = config.get(key)
    if value is None or isinstance(value, bool):
        return bool(value)
    if str(value).strip().lower() in ("true", "false"):
        return str(value).strip().lower() == "true"
    raise ModelConfigError(
        model_name, key, f"`{value}` is not true or false", f"set `{key}: true` or `false`"
    )


class ParsedModelConfigs:
    """Each node's config parsed once per dbt invocation: the materialization parses it
    before writing, and the macros that need a piece of it later (table properties, the
    resolved strategy) read that parse instead of parsing again."""

    def __init__(self, is_custom_strategy: Callable[[str], bool]) -> None:
        self._is_custom_strategy = is_custom_strategy
        self._parsed: dict[tuple[str, str], ModelConfig] = {}
        self._lock = threading.Lock()

    def of(self, node: Mapping[str, Any]) -> ModelConfig:
        """`node`'s config, parsed and checked (see `parse_model_config`)."""
        key = (get_invocation_id(), str(node.get("unique_id") or node["name"]))
        with self._lock:
            parsed = self._parsed.get(key)
        if parsed is None:
            parsed = parse_model_config(
                node["name"],
                node["config"],
                node.get("language") or "sql",
                self._is_custom_strategy,
            )
            with self._lock:
                self._parsed[key] = parsed
        return parsed
