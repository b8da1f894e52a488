"""What an incremental model looked like at its last successful run, kept as Iceberg
table properties on the table itself (pure functions; the adapter reads and writes them).

Properties change no data and add no snapshot: a run's data still lands in one snapshot.
Partitioning is not kept here: the table's own partition spec is the record, and a run
evolves it to `partition_by` (partition_evolution.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.incremental.config import IncrementalConfig, digest
from dbt.adapters.s3tables.incremental.strategies import STRATEGIES

PREFIX = "dbt.s3tables."
STRATEGY = PREFIX + "incremental_strategy"
UNIQUE_KEY = PREFIX + "unique_key"
SQL_HASH = PREFIX + "model_sql_hash"
CONFIG_HASH = PREFIX + "incremental_config_hash"
LAST_PROCESSED_VALUE = PREFIX + "last_processed_value"
# The chunk plan of a `full_incremental_refresh` rebuild still in progress (see
# chunked_refresh.py); set in the commit that replaces the table, removed by the last chunk.
REBUILD_PLAN = PREFIX + "full_incremental_refresh"
# Properties earlier versions kept that nothing reads any more; a run removes them.
RETIRED = (PREFIX + "partition_by",)


def state_properties(
    settings: IncrementalConfig, model_sql: str, last_processed_value: str | None
) -> dict[str, str]:
    properties = {
        STRATEGY: settings.strategy.name,
        UNIQUE_KEY: json.dumps(settings.unique_key),
        SQL_HASH: digest(model_sql),
        CONFIG_HASH: settings.config_hash,
    }
    if last_processed_value is not None:
        properties[LAST_PROCESSED_VALUE] = last_processed_value
    return properties


# Every property this module keeps on a table (the adapter's other properties, such as
# write-audit-publish records, share the prefix but are not a model's state).
STATE_KEYS = (
    STRATEGY,
    UNIQUE_KEY,
    SQL_HASH,
    CONFIG_HASH,
    LAST_PROCESSED_VALUE,
    REBUILD_PLAN,
    *RETIRED,
)


def state_keys(properties: Mapping[str, str]) -> tuple[str, ...]:
    """The properties of `properties` this module keeps on a table."""
    return tuple(k for k in properties if k in STATE_KEYS)


def _changed(previous: Mapping[str, str], key: str, current: str) -> bool:
    return key in previous and previous[key] != current


def compare_state(settings: IncrementalConfig, previous: Mapping[str, str]) -> list[str]:
    """Warnings for config changes since the last run; raises for a switch to or from
    scd2, whose table holds history rather than current rows."""
    old_strategy = previous.get(STRATEGY)
    name = settings.strategy.name
    old = STRATEGIES.get(old_strategy or "")
    if old_strategy and old_strategy != name:
        # The strategy whose table holds history rather than current rows (scd2).
        history = name if settings.strategy.keeps_history else old_strategy
        if settings.strategy.keeps_history or (old is not None and old.keeps_history):
            raise ModelConfigError(
                settings.model_name,
                "incremental_strategy",
                f"the table was built with `{old_strategy}` and the model now says "
                f"`{name}`; an {history} table holds history rows, so the two cannot be mixed",
                "run with `--full-refresh` to rebuild the table with the new strategy",
            )
    warnings = []
    if old_strategy and old_strategy != name:
        warnings.append(f"incremental_strategy changed from `{old_strategy}` to `{name}`")
    unique_key = json.dumps(settings.unique_key)
    if _changed(previous, UNIQUE_KEY, unique_key):
        warnings.append(f"unique_key changed from {previous[UNIQUE_KEY]} to {unique_key}")
    return warnings
