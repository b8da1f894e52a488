"""Config keys nothing reads: every key this adapter reads (the one list of them), the keys
dbt reads by name, and the check that names the others with the nearest known key (pure).

dbt keeps the config keys it does not know for a node's type apart from its own (the node
config's `extra`). Of those, a key that is neither this adapter's (`ADAPTER_CONFIG_KEYS`),
nor one dbt reads by name beyond its config classes' fields (`DBT_READ_KEYS`), nor declared
by the project (var `s3tables_known_config_keys`, for keys its packages or macros read) is
a typo or another platform's key: the node is built as if it were not set.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from dbt_common.behavior_flags import BehaviorFlag

from dbt.adapters.s3tables.errors import UnknownConfigKeysError
from dbt.adapters.s3tables.keys.spelling import nearest_key

# dbt_project.yml `flags:` entry (an adapter behavior flag) that makes a key nothing reads
# an error instead of a warning.
FAIL_FLAG = "s3tables_fail_on_unknown_config_keys"
FAIL_FLAG_SPEC: BehaviorFlag = {
    "name": FAIL_FLAG,
    "default": False,
    "description": (
        "A config key that neither dbt nor dbt-s3tables reads is a warning; with this flag "
        "it fails the node before anything is written."
    ),
}
# dbt var listing the config keys a project's packages or macros read.
DECLARED_KEYS_VAR = "s3tables_known_config_keys"

# Every config key this adapter reads, in Python or in its macros (dbt's own keys among
# them): tests/unit/keys/test_config_keys.py finds each key the code reads in this list.
ADAPTER_CONFIG_KEYS = frozenset(
    {
        # every materialization
        "materialized",
        "contract",
        "persist_docs",
        "sql_header",
        "catalog_name",
        "tblproperties",
        "format_version",
        "partition_by",
        "audit_before_publish",
        "maintenance",
        "skip_when_unchanged",
        # incremental
        "incremental_strategy",
        "incremental_strategy_traits",
        "unique_key",
        "unique_key_is_unique",
        "incremental_predicates",
        "predicates",
        "merge_update_columns",
        "merge_exclude_columns",
        "merge_delete_when",
        "watermark_column",
        "on_schema_change",
        "full_incremental_refresh",
        "write_mode",
        "use_merge",
        "scd_check_cols",
        "scd_valid_from",
        "scd_valid_to",
        "event_time",
        # seeds
        "column_types",
        "delimiter",
        "quote_columns",
        # dbt-spark's, refused with the reason (see model_config.check_model_config)
        "file_format",
        "grants",
        "location_root",
        "clustered_by",
        "buckets",
        "options",
        "indexes",
    }
)

# Keys dbt-core 1.11 and dbt-adapters read by name that are not fields of dbt's config
# classes (those never reach `extra`): tests/unit/keys/test_config_keys.py checks the keys the
# installed dbt reads against this list.
DBT_READ_KEYS = frozenset(
    {
        # dbt-adapters' incremental and model macros
        "sql_header",
        "incremental_predicates",
        "predicates",
        "merge_update_columns",
        "merge_exclude_columns",
        "indexes",
        # snapshots (`invalidate_hard_deletes` and `snapshot_table_column_names` are the
        # names before dbt 1.9)
        "hard_deletes",
        "invalidate_hard_deletes",
        "snapshot_table_column_names",
        # catalog integrations (`catalog` is the name before dbt 1.10)
        "catalog_name",
        "catalog",
        # a model's freshness (dbt 1.10)
        "loaded_at_field",
        "loaded_at_query",
        # what dbt records of a Python model's `dbt.config.get` calls
        "config_keys_used",
        "config_keys_defaults",
        "meta_keys_used",
        "meta_keys_defaults",
        # in dbt's own schema of every resource's config (dbt_project.yml and YAML files)
        "description",
    }
)

# Keys dbt sets on a node while it runs (a microbatch model's batch bounds).
DBT_INTERNAL_PREFIX = "__dbt_internal"


@dataclass(frozen=True)
class UnknownConfigKey:
    """A config key nothing reads, and the known key most like it (if any is close)."""

    key: str
    nearest: str | None

    @property
    def problem(self) -> str:
        hint = f" (did you mean `{self.nearest}`?)" if self.nearest else ""
        return f"neither dbt nor s3tables reads this key, so it changes nothing{hint}"


UNKNOWN_KEY_FIX = (
    "correct it, or list a key that a package or macro of the project reads in var "
    f"`{DECLARED_KEYS_VAR}`"
)
# How a warning ends: it can be an error instead.
WARNING_NOTE = f" (flag `{FAIL_FLAG}` makes this an error)"


def unknown_key_sentence(resource_type: str, name: str, unknown: UnknownConfigKey) -> str:
    """One sentence naming the node, the key, the nearest known key and the fix."""
    node = f"{resource_type.capitalize()} `{name}`"
    return f"{node}, config `{unknown.key}`: {unknown.problem}. Fix: {UNKNOWN_KEY_FIX}"


def config_fields(node_config: Any) -> list[str]:
    """The keys of a dbt node config's class (`pre-hook` as written in a project)."""
    return [f.metadata.get("alias", f.name) for f in fields(node_config) if f.name != "_extra"]


def declared_keys(value: Any) -> set[str]:
    """The var's keys: a list of names, or one name."""
    if not value:
        return set()
    return {value} if isinstance(value, str) else {str(key) for key in value}


def unknown_config_keys(
    extra: Mapping[str, Any], dbt_fields: Collection[str], declared: Iterable[str] = ()
) -> list[UnknownConfigKey]:
    """The keys of `extra` (the node config's keys dbt does not know for its type) that
    nothing reads, each with the nearest key of those `dbt_fields`, dbt's, the adapter's
    and `declared` ones."""
    # A Python model's `dbt.config.get("k")` calls, which dbt records, read `k`.
    read_by_model = declared_keys(extra.get("config_keys_used"))
    known = ADAPTER_CONFIG_KEYS | DBT_READ_KEYS | set(declared) | read_by_model
    unknown = [k for k in extra if k not in known and not k.startswith(DBT_INTERNAL_PREFIX)]
    candidates = known | set(dbt_fields)
    return [UnknownConfigKey(key, nearest_key(key, candidates)) for key in sorted(unknown)]


class ConfigKeyCheck:
    """The check of one dbt invocation, which warns about each node's key once (a
    microbatch model runs its materialization per batch)."""

    def __init__(self) -> None:
        self._warned: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def sentences(
        self, node: Mapping[str, Any], node_config: Any, declared: Any
    ) -> list[tuple[str, str]]:
        """`(key, sentence)` for each config key of `node` that nothing reads; `node_config`
        is the node's config object (dbt keeps the keys it does not know in its `extra`),
        `declared` the project's var `s3tables_known_config_keys`."""
        unknown = unknown_config_keys(
            node_config.extra, config_fields(node_config), declared_keys(declared)
        )
        return [
            (u.key, unknown_key_sentence(node["resource_type"], node["name"], u)) for u in unknown
        ]

    def check(
        self,
        node: Mapping[str, Any],
        node_config: Any,
        declared: Any,
        *,
        fail: bool,
        warn: Callable[[str], None],
    ) -> None:
        """A warning for each key of `node` nothing reads (once per node and key), or with
        `fail` (the project's flag `FAIL_FLAG`) one error for them all."""
        found = self.sentences(node, node_config, declared)
        if found and fail:
            raise UnknownConfigKeysError("\n".join(sentence for _, sentence in found))
        for key, sentence in found:
            if self.first_time(node["unique_id"], key):
                warn(sentence + WARNING_NOTE)

    def first_time(self, node_id: str, key: str) -> bool:
        """Whether the warning about `key` of node `node_id` is not given yet (and now is)."""
        with self._lock:
            first = (node_id, key) not in self._warned
            self._warned.add((node_id, key))
        return first
