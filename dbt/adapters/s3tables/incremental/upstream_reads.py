"""Reads of an upstream Iceberg table's changes (`upstream_changes()` in a model): which
snapshot range a run reads, checked against the upstream's history before anything is
read, and the record of what a run read (pure functions).

A run reads the upstream as of its snapshot current when the model's SQL is rendered
(pinned for the run). A first build, or `--full-refresh`, reads the whole upstream there;
an incremental run reads only the commits after the snapshot the table's last build read.
That snapshot is recorded in the build's own data commit (never in a hook's), in its
snapshot summary (`dbt.read.<upstream>` = `<upstream's table uuid>@<snapshot id>`), so
the record and the rows it describes land together or not at all. A table property
repeats it, bound to the model's snapshot it describes (`...;on=<snapshot id>`): for
engines that cannot tag a commit, a build that committed nothing, and a table whose
tagged snapshot has expired. A property bound to a snapshot that is no longer in the
model's history (the run was undone, or the table rolled back) is no record: the next run
reads that range again.

Without a key, a range is its appended rows, and a range with a commit that changed or
deleted rows is refused. With a key (`unique_key=`), a range is its row changes, one row
per row of a changed key with `_change_type`: INSERT (a key that had no row before),
UPDATE (a key whose rows changed: each of its rows at the range's end) or DELETE (a key
with no row left: its rows at the range's start). A range of appends alone is read as its
appended rows, all INSERT; any other is read as the difference of the upstream at the
range's two ends, which every kind of commit (copy-on-write, merge-on-read, deletion
vectors, compaction) gives exactly, and so does an upstream replaced since (a `table`
model or a seed rebuilt), or rolled back, as long as the snapshot last read still exists.

Every range that cannot be read exactly is refused, naming the upstream and the fix,
never read approximately: a record that is missing, an upstream dropped and created again
or expired past the recorded snapshot, (without a key) an upstream replaced or rolled
back, or changed rows, and (with a key) columns that differ at the range's two ends. So
is every model a read cannot be exact in (`refused_reader`): one with no table of its own
to record the read on (a view, an ephemeral model, a test), and a strategy that replaces
more than the rows read (microbatch, insert_overwrite with a key, a chunked rebuild).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.s3tables.catalogs.snapshots import Lineage
from dbt.adapters.s3tables.incremental.strategy_traits import (
    TRAITS_CONFIG_KEY,
    Reading,
    Replaces,
    Strategy,
)

READ_TAG_PREFIX = "dbt.read."
# The column a keyed read adds: each row's change.
CHANGE_TYPE_COLUMN = "_change_type"
# Iceberg operations that add rows and change none: their rows are the range's rows.
APPENDING = frozenset({"append"})
# Operations that rewrite files without changing the table's rows (compaction).
ROWS_UNCHANGED = frozenset({"replace"})
# A range's operations when its start is no ancestor of its end (what came between is not
# one line of commits).
REPLACED_OPERATION = "replaced or rolled back"


def read_tag(upstream: str) -> str:
    """The summary key (and table property) recording a read of `upstream`."""
    return READ_TAG_PREFIX + upstream


# A table property's record names the model's snapshot it describes after this.
BOUND_TO = ";on="


@dataclass(frozen=True)
class ReadMark:
    """What a build read of an upstream: the upstream table (its uuid) and its snapshot;
    as a table property, also the model's snapshot the build left (`on`; None in a
    commit's own summary, and in a property written before records were bound)."""

    table_uuid: str
    snapshot_id: int
    on: int | None = None

    def text(self) -> str:
        return f"{self.table_uuid}@{self.snapshot_id}"

    def property_text(self, on: int | None) -> str:
        """The record as a table property of the model, bound to its snapshot `on`
        (None: the model's table has no snapshot)."""
        return self.text() + (f"{BOUND_TO}{on}" if on is not None else "")

    @classmethod
    def parse(cls, text: str) -> ReadMark | None:
        mark, _, on = text.partition(BOUND_TO)
        uuid, _, snapshot = mark.rpartition("@")
        if not uuid or not snapshot.isdigit() or (on and not on.isdigit()):
            return None
        return cls(uuid, int(snapshot), int(on) if on else None)


def bound_record_stale(mark: ReadMark, target: Lineage) -> bool:
    """Whether a table property's record describes a snapshot of the model that its
    history no longer holds: a build undone, or the table rolled back past it. A bound
    snapshot that expired (not known at all) was in the history when it expired: kept."""
    if mark.on is None:
        return False
    return mark.on in target.known and mark.on not in {a.snapshot_id for a in target.ancestors}


def last_read(target: Lineage, upstream: str, upstream_lineage: Lineage) -> ReadMark | None:
    """What the target's last committed build read of `upstream`: the newest snapshot of
    its history that records it, or its table property, whichever describes the later
    state of the model. The property is bound to the model's snapshot it describes (a
    build's own, or the one a build that committed nothing left): it alone records a
    build over an engine that cannot tag a commit, a build that committed nothing (its
    rows all filtered out), and a read whose tagged snapshot has expired; it wins over a
    tag of the same snapshot or an older one (a later build that committed nothing read
    on from it), and a tag of a newer snapshot wins over it (the property's write failed
    after that commit). Which is later is read in the model's history, never the
    upstream's: an upstream rolled back since reorders its own. A property bound to a
    snapshot no longer in the model's history (an undo, a rollback) records nothing."""
    key = read_tag(upstream)
    position = {a.snapshot_id: i for i, a in enumerate(target.ancestors)}  # newest first
    tagged_at, tagged = next(
        (
            (i, ReadMark.parse(a.tagged[key]))
            for i, a in enumerate(target.ancestors)
            if key in a.tagged
        ),
        (len(position), None),
    )
    recorded = target.properties.get(key)
    written = ReadMark.parse(recorded) if recorded else None
    if written is not None and bound_record_stale(written, target):
        written = None
    if tagged is None or written is None:
        return tagged or written
    if written.on is not None:
        # A bound snapshot that expired is older than every snapshot still held.
        return written if position.get(written.on, len(position)) <= tagged_at else tagged
    # A property written before records were bound: ordered in the upstream's history.
    order = {a.snapshot_id: i for i, a in enumerate(upstream_lineage.ancestors)}
    far = len(order)
    return (
        written
        if order.get(written.snapshot_id, far) < order.get(tagged.snapshot_id, far)
        else tagged
    )


class RangeKind(Enum):
    WHOLE = "whole"  # the whole upstream at `end`
    CHANGES = "changes"  # the commits after `start`, up to `end`
    NOTHING = "nothing"  # no commit since the last read


@dataclass(frozen=True)
class UpstreamRange:
    """What one run reads of one upstream."""

    upstream: str
    table_uuid: str
    kind: RangeKind
    # Exclusive: the snapshot the last build read (CHANGES and NOTHING).
    start: int | None
    # Inclusive: the upstream's snapshot pinned for the run (None: it has none yet).
    end: int | None
    # The operations of the commits in the range, oldest first (CHANGES).
    operations: tuple[str, ...] = ()
    # The rows the range's appends added (CHANGES of appends only: what the run reads).
    rows: int = 0
    # The upstream's key columns (a keyed read of row changes; empty: of appended rows).
    keys: tuple[str, ...] = ()
    # CHANGES read as the difference of the upstream at `start` and at `end` (a keyed
    # range with a commit other than an append).
    by_difference: bool = False

    @property
    def mark(self) -> ReadMark | None:
        """What a build that read this range records (None: the upstream has no snapshot)."""
        return ReadMark(self.table_uuid, self.end) if self.end is not None else None

    def describe(self) -> str:
        """`orders: snapshots after 12 up to 34 (2 commits: append, append)`."""
        if self.kind is RangeKind.WHOLE:
            at = f"snapshot {self.end}" if self.end is not None else "no snapshot yet"
            return f"{self.upstream}: the whole table at {at}"
        if self.kind is RangeKind.NOTHING:
            return f"{self.upstream}: nothing new since snapshot {self.start}"
        if self.operations == (REPLACED_OPERATION,):
            span = f"snapshot {self.start} to {self.end} (the upstream was {REPLACED_OPERATION}"
        else:
            commits = f"{len(self.operations)} commit{'s' * (len(self.operations) != 1)}"
            span = f"snapshots after {self.start} up to {self.end} ({commits}: " + ", ".join(
                self.operations
            )
        if self.by_difference:
            return (
                f"{self.upstream}: row changes per {', '.join(self.keys)} (INSERT, UPDATE, "
                f"DELETE), {span}), the difference of the two snapshots"
            )
        return f"{self.upstream}: {self.rows} appended rows, {span})"

    def as_response(self) -> dict[str, object]:
        """The read as run_results.json's adapter response lists it."""
        return {
            "upstream": self.upstream,
            "read": "row_changes" if self.by_difference else self.kind.value,
            "after_snapshot": self.start,
            "up_to_snapshot": self.end,
            "commits": list(self.operations),
            "rows": self.rows
            if self.kind is not RangeKind.WHOLE and not self.by_difference
            else None,
            "unique_key": list(self.keys) or None,
        }


def refusal(model: str, upstream: str, problem: str, other_fix: str = "") -> DbtRuntimeError:
    return DbtRuntimeError(
        f"Model `{model}`, upstream_changes({upstream}): {problem}; nothing was read or "
        f"written. Fix: {other_fix}rebuild the model from the whole upstream (`dbt run -s "
        f"{model} --full-refresh`)"
    )


def check_key_argument(model: str, upstream: object, unique_key: object) -> tuple[str, ...]:
    """upstream_changes()'s `unique_key` argument as key columns (none: a read of appended
    rows): a column name, or a list of them."""
    keys = [unique_key] if isinstance(unique_key, str) else unique_key or []
    if not isinstance(keys, list) or not all(isinstance(k, str) and k for k in keys):
        raise DbtRuntimeError(
            f"Model `{model}`: upstream_changes({upstream}, unique_key=...) takes a column "
            f"name or a list of them, not `{unique_key}`. Fix: name the upstream's key "
            "column(s), such as unique_key='id'"
        )
    return tuple(keys)


def check_keys(model: str, upstream: str, lineage: Lineage, keys: Sequence[str]) -> tuple[str, ...]:
    """A keyed read's key columns are the upstream's, and its own column is not; returned
    as the upstream spells them (Spark resolves `ID` as `id`; Spark's schemas and
    DataFrames look names up as spelt)."""
    spelt = {c.lower(): c for c in lineage.columns}
    known = set(spelt)
    missing = [k for k in keys if k.lower() not in known]
    if missing:
        raise DbtRuntimeError(
            f"Model `{model}`, upstream_changes({upstream}, unique_key=...): "
            f"{', '.join(missing)} not among the upstream's columns "
            f"({', '.join(lineage.columns)}). Fix: name the upstream's key column(s)"
        )
    if CHANGE_TYPE_COLUMN in known:
        raise DbtRuntimeError(
            f"Model `{model}`, upstream_changes({upstream}, unique_key=...): the upstream "
            f"has a column named `{CHANGE_TYPE_COLUMN}`, the one a keyed read adds. Fix: "
            "rename the upstream's column"
        )
    return tuple(spelt[k.lower()] for k in keys)


def check_same_columns(
    model: str, upstream: str, lineage: Lineage, start: int, end: int | None
) -> None:
    """A difference of two snapshots compares whole rows: both must have the same columns."""
    before = lineage.snapshot_columns.get(start)
    after = lineage.snapshot_columns.get(end) if end is not None else None
    if before is None or before != after:
        raise refusal(
            model,
            upstream,
            f"the upstream's columns changed after snapshot {start}, so its rows at the two "
            "ends of the range cannot be compared",
        )


def plan_range(
    model: str,
    upstream: str,
    lineage: Lineage,
    mark: ReadMark | None,
    incremental: bool,
    keys: Sequence[str] = (),
    target_holds_rows: bool = True,
) -> UpstreamRange:
    """The range a run of `model` reads of `upstream` (whose history is `lineage`), given
    what its table's last build read (`mark`), whether the run is incremental, the
    upstream's key columns (a keyed read of row changes), and whether the model's table
    holds rows."""
    end = lineage.current
    keyed = check_keys(model, upstream, lineage, keys) if keys else ()
    # A table that holds no row and no record (built by `--empty`, or never given a row)
    # holds nothing any read wrote: the whole upstream is what it has not read.
    if not incremental or (mark is None and not target_holds_rows):
        return UpstreamRange(upstream, lineage.table_uuid, RangeKind.WHOLE, None, end, keys=keyed)
    if mark is None:
        raise refusal(
            model,
            upstream,
            "the model's table holds no record of what it last read of this upstream (it "
            "was built without upstream_changes(), copied by `dbt clone`, built from a "
            "sample, or by a build whose record is gone)",
        )
    if mark.table_uuid != lineage.table_uuid:
        raise refusal(
            model,
            upstream,
            "the upstream is another table than the one the model last read (it was "
            "dropped and created again)",
        )
    if mark.snapshot_id == end:
        return UpstreamRange(
            upstream, lineage.table_uuid, RangeKind.NOTHING, mark.snapshot_id, end, keys=keyed
        )
    ids = [a.snapshot_id for a in lineage.ancestors]
    if mark.snapshot_id not in ids:
        if mark.snapshot_id not in lineage.known:
            raise refusal(
                model,
                upstream,
                f"snapshot {mark.snapshot_id}, which the model last read, has expired, so "
                "the commits after it cannot be told apart",
            )
        if not keyed:
            raise refusal(
                model,
                upstream,
                f"snapshot {mark.snapshot_id}, which the model last read, is no longer in "
                "the upstream's history (the upstream was replaced, or rolled back)",
                "read its row changes with `upstream_changes(..., unique_key='<key>')`, "
                "which compares the two snapshots, or ",
            )
        # Replaced (a table model or a seed rebuilt) or rolled back: the two snapshots
        # still exist, and their difference is exact.
        check_same_columns(model, upstream, lineage, mark.snapshot_id, end)
        return UpstreamRange(
            upstream,
            lineage.table_uuid,
            RangeKind.CHANGES,
            mark.snapshot_id,
            end,
            (REPLACED_OPERATION,),
            0,
            keyed,
            by_difference=True,
        )
    start_index = ids.index(mark.snapshot_id)
    in_range = lineage.ancestors[:start_index]
    operations = tuple(a.operation or "unknown" for a in reversed(in_range))
    # Iceberg's incremental read takes `append` commits only and skips the others
    # silently: any other commit that added or removed a file would be lost.
    changing = sorted(
        {
            a.operation or "unknown"
            for a in in_range
            if a.operation not in APPENDING | ROWS_UNCHANGED and a.files_changed
        }
    )
    if changing and not keyed:
        raise refusal(
            model,
            upstream,
            f"commits after snapshot {mark.snapshot_id} changed or deleted rows "
            f"({', '.join(changing)}), which a read of appended rows cannot give",
            "read its row changes with `upstream_changes(..., unique_key='<key>')` and "
            "`merge_delete_when`, or ",
        )
    if changing:
        check_same_columns(model, upstream, lineage, mark.snapshot_id, end)
    rows = sum(a.added_rows for a in in_range if a.operation in APPENDING)
    return UpstreamRange(
        upstream,
        lineage.table_uuid,
        RangeKind.CHANGES,
        mark.snapshot_id,
        end,
        operations,
        0 if changing else rows,
        keyed,
        by_difference=bool(changing),
    )


# The materializations whose build can read upstream changes: an incremental model reads
# what its table has not read yet; a table model reads the whole upstream on every build.
READING_MATERIALIZATIONS = ("incremental", "table")


def refused_reader(
    model: str,
    materialized: str,
    strategy: Strategy | None = None,
    on_schema_change: str | None = None,
    keyed: bool = False,
) -> DbtRuntimeError | None:
    """The refusal of `upstream_changes()` in a model where no read can be exact (None: it
    can): one with no table of its own to record what it read, and a strategy that
    replaces more rows than the read gives. Checked when the model's SQL renders, before
    anything is read or written."""
    head = f"Model `{model}`"
    if materialized not in READING_MATERIALIZATIONS:
        kind = {"ephemeral": "an ephemeral model", "view": "a view", "test": "a test"}.get(
            materialized, f"a `{materialized}` node"
        )
        return DbtRuntimeError(
            f"{head} (materialized `{materialized}`): upstream_changes() reads what an "
            f"incremental model's table has not read yet, and {kind} has no table "
            "of its own to record the read on (every build would read the whole upstream "
            "again, or a view would stay at one snapshot); nothing was read or written. Fix: "
            f"read the upstream with ref() in `{model}`, and upstream_changes() in the "
            "incremental model that selects from it"
        )
    reading = Reading.KEYED if keyed else Reading.KEYLESS
    if strategy is not None and reading not in strategy.readings:
        return DbtRuntimeError(f"{head}: {refused_reading(strategy, keyed)}")
    if on_schema_change == "recreate_empty":
        return DbtRuntimeError(
            f"{head}: on_schema_change `recreate_empty` recreates the table with only this "
            "run's rows when the model's columns change, and upstream_changes() gives only "
            "the rows the model has not read yet, so every row read before would be lost; "
            "nothing was read or written. Fix: set on_schema_change `full_refresh` (the "
            "table is rebuilt from the whole upstream, in one commit) or `append_new_columns`"
        )
    if on_schema_change == "full_incremental_refresh":
        return DbtRuntimeError(
            f"{head}: on_schema_change `full_incremental_refresh` rebuilds in time chunks, "
            "possibly over several runs, each reading the upstream at another snapshot, so "
            "upstream_changes() cannot read it exactly once; nothing was read or written. "
            "Fix: set on_schema_change `full_refresh` (one rebuild in one commit)"
        )
    return None


def refused_reading(strategy: Strategy, keyed: bool) -> str:
    """Why `strategy`, by what it replaces, keeps no `upstream_changes()` read (keyed or
    not) exact, and the fix: the rest of the one-sentence refusal."""
    name, nothing = strategy.name, "nothing was read or written"
    if strategy.replaces is Replaces.TIME_WINDOW:
        return (
            f"{name} replaces each batch's whole event_time window, and upstream_changes() "
            "gives only the rows the model has not read yet, so the window's other rows "
            f"would be lost; {nothing}. Fix: read the upstream with ref() (each batch reads "
            "its window of it), or use incremental_strategy `append` or `merge`"
        )
    if strategy.replaces is Replaces.PARTITIONS and keyed:
        return (
            f"{name} replaces whole partitions, and a partition whose upstream rows were only "
            "deleted gets no row to replace it with, so upstream_changes(..., unique_key=...) "
            f"cannot keep it exact; {nothing}. Fix: use incremental_strategy `merge` with "
            "`merge_delete_when`"
        )
    return (
        f"the custom strategy `{name}` does not declare what its statement replaces, so no "
        f"upstream_changes() read can be known exact in it; {nothing}. Fix: declare it, "
        f"e.g. `{TRAITS_CONFIG_KEY}: {{replaces: rows_by_key}}` (or `nothing`, `partitions`)"
    )
