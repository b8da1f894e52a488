"""The snapshot of its own table each incremental model's run planned from (`RunBases`),
noted by the first thing of the run that reads the table's state: `is_incremental()`
true while the model's SQL renders (its filter may read `{{ this }}`), an
`upstream_changes()` read (what the table last read), `last_processed_value()`, and the
run's own plan. A run whose SQL read none of these writes the same rows whatever the
table holds: only what Iceberg validates inside its statement depends on the table.

Two runs of one model that overlap (two processes, two schedulers) must not both write
from the same state: the run's commit is published only while the table is still at the
noted snapshot (run_branch.py). Each (invocation, model, microbatch window) has its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dbt_common.invocation import get_invocation_id


def run_key(node: Mapping[str, Any]) -> str:
    """The run a model node renders for in this invocation: a microbatch model's batches
    are runs of their own (each replaces its own window)."""
    batch = node.get("batch") or {}
    start = batch.get("event_time_start") if isinstance(batch, Mapping) else None
    start = start if start is not None else getattr(batch, "event_time_start", None)
    return f"{get_invocation_id()}/{node.get('unique_id')}/{start or ''}"


@dataclass(frozen=True)
class Base:
    """What a run read of its table first: the table's main snapshot (None: none yet),
    and what read it (for the conflict's sentence)."""

    snapshot_id: int | None
    read_by: str


class RunBases:
    """The base of each run of this process's invocations (see the module docstring)."""

    def __init__(self) -> None:
        self._bases: dict[str, Base] = {}
        self._lock = threading.Lock()

    def note(self, key: str, read_by: str, snapshot: Callable[[], int | None]) -> None:
        """The run `key` read its table's state through `read_by`: its base is the table's
        snapshot now (`snapshot()`, read only for the run's first read)."""
        with self._lock:
            if key in self._bases:
                return
        base = Base(snapshot(), read_by)
        with self._lock:
            self._bases.setdefault(key, base)

    def noted(self, key: str, snapshot_id: int | None, read_by: str) -> Base:
        """The run's base, noted now as `snapshot_id` unless something read the table
        before (its own plan is read after the model's SQL rendered)."""
        with self._lock:
            return self._bases.setdefault(key, Base(snapshot_id, read_by))

    def read_state(self, key: str) -> bool:
        """Whether the run's SQL read its table's state while it rendered."""
        with self._lock:
            return key in self._bases
