"""Facts the adapter reads from an Iceberg table's snapshots: the commit-tag keys every
commit of the in-process engine carries in its summary, one entry of the snapshot log, and
the table's health (what maintenance changes). Value types only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

# The snapshot summary keys every commit of the adapter's in-process engine carries.
INVOCATION_KEY = "dbt.invocation_id"
NODE_KEY = "dbt.unique_id"
# What a `skip_when_unchanged` build's data commit was built from (lifecycle/unchanged_inputs.py).
INPUTS_KEY = "dbt.inputs"


@dataclass(frozen=True)
class SnapshotEntry:
    """One entry of a table's snapshot log (a state it went through), oldest first."""

    snapshot_id: int
    invocation_id: str | None
    parent_id: int | None = None
    # The commit's Iceberg operation (append, overwrite, delete, replace).
    operation: str | None = None
    # The table's commit count at this snapshot (1: its first commit ever).
    sequence_number: int = 0
    # False once the snapshot has expired (its log entry can outlive it).
    exists: bool = True
    # When the snapshot was made (milliseconds since the epoch; 0: expired).
    timestamp_ms: int = 0

    @property
    def creates_the_table(self) -> bool:
        return self.parent_id is None and self.sequence_number <= 1


@dataclass(frozen=True)
class TableHealth:
    """What maintenance changes, read from the table's current snapshot."""

    data_files: int
    delete_files: int
    bytes: int
    snapshots: int


@dataclass(frozen=True)
class Ancestor:
    """One snapshot in a table's current history (main's)."""

    snapshot_id: int
    parent_id: int | None
    # The commit's Iceberg operation (append, overwrite, delete, replace).
    operation: str | None
    # Whether the commit added or removed any data or delete file (an empty MERGE commits
    # an `overwrite` that changes nothing).
    files_changed: bool
    # Rows the commit's new data files hold (`added-records`).
    added_rows: int
    # The summary's entries under a prefix the reader asked for (upstream reads recorded
    # by the commit, see `incremental/upstream_reads.py`).
    tagged: dict[str, str]
    # The id of the table schema the snapshot was written with.
    schema_id: int | None = None


@dataclass(frozen=True)
class Lineage:
    """A table's identity and history as one metadata read: what an incremental read of
    its changes checks before it reads anything."""

    table_uuid: str
    # The current snapshot first, then its parent, back to the oldest one the metadata
    # still holds (an expired parent ends the chain). Empty: the table has no snapshot.
    ancestors: tuple[Ancestor, ...]
    # Every snapshot id the metadata holds, ancestors or not (expired ones are gone).
    known: frozenset[int]
    properties: dict[str, str]
    # The column names of the newest ancestor's schema (the current schema's without one).
    columns: tuple[str, ...] = ()
    # Each known snapshot's columns as written (`name type`, in order): what a read `VERSION
    # AS OF` it returns.
    snapshot_columns: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    # Whether the current snapshot holds rows (its summary's total; True when it has none).
    holds_rows: bool = True

    @property
    def current(self) -> int | None:
        return self.ancestors[0].snapshot_id if self.ancestors else None
