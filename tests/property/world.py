"""The promises' oracle: what every table of the machine's project must hold after any
sequence of steps, and which reads must be refused, from the machine's own model of the
upstreams (pure: no dbt, no Spark).

Each table is a history of states keyed by its real Iceberg snapshot ids (read off the
table after each step: the ids, parents and what expired are Iceberg's facts, not the
adapter's promise). A state holds the rows the table must hold there and, for a reader,
the upstream snapshot it has read up to. An undo sets a table back to the state of an
earlier snapshot; a read's range is decided from the upstream's history of states.
"""

from __future__ import annotations

import copy
import dataclasses
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from tests.property.project import READERS, Inputs, Rows, upstream_rows

# What a commit did to an upstream's rows: appended only, changed any, replaced the table
# (CREATE OR REPLACE, a seed's reload), rewrote files only (compaction, an empty append).
APPEND, CHANGE, REPLACE, SAME = "append", "change", "replace", "same"


@dataclass(frozen=True)
class State:
    """A table at one snapshot: its rows, what kind of commit made it, (a reader) the
    upstream snapshot each of its reads went up to, and (an upstream) what the machine
    gave it: the events, or the rows by id."""

    rows: Rows
    kind: str
    reads: Mapping[str, int | None] = field(default_factory=dict)
    source: object = None


@dataclass
class Table:
    """A table's states by snapshot id, its current snapshot, each snapshot's parent and
    the snapshots still in its metadata (the rest expired)."""

    states: dict[int, State] = field(default_factory=dict)
    parents: dict[int, int | None] = field(default_factory=dict)
    current: int | None = None
    live: set[int] = field(default_factory=set)

    @property
    def state(self) -> State | None:
        return self.states.get(self.current) if self.current is not None else None

    def ancestors(self) -> list[int]:
        """The current snapshot, its parent, ... (as far as states are known)."""
        chain, snapshot = [], self.current
        while snapshot is not None and snapshot not in chain:
            chain.append(snapshot)
            snapshot = self.parents.get(snapshot)
        return chain


@dataclass(frozen=True)
class Observed:
    """A table as its metadata stands after a step: its current snapshot, the parent of
    each snapshot it holds, and those snapshots."""

    current: int | None
    parents: Mapping[int, int | None]


@dataclass
class World:
    """The oracle: the upstreams' contents as the machine changed them (`inputs`), and
    every table's history of states."""

    tables: dict[str, Table] = field(default_factory=dict)
    # events_copy's build staged on its audit branch and not published: the state main
    # gets when it publishes (a later `dbt retry` or `dbt test` that passes its test).
    staged: State | None = None
    # The `life` var: what kind (and strategy) the readers whose kind changes are now.
    life: str = "append"

    def copy(self) -> World:
        return copy.deepcopy(self)

    @property
    def inputs(self) -> Inputs:
        """What the upstreams hold now (their current states' sources)."""

        def source(name: str, empty: object) -> object:
            state = self.table(name).state
            return state.source if state is not None and state.source is not None else empty

        return Inputs(
            source("events", ()),  # type: ignore[arg-type]
            source("customers", {}),  # type: ignore[arg-type]
            source("dim", {}),  # type: ignore[arg-type]
            source("people", {}),  # type: ignore[arg-type]
        )

    def table(self, name: str) -> Table:
        return self.tables.setdefault(name, Table())

    def rows(self, name: str) -> Rows | None:
        """What table `name` must hold now (None: it must not exist)."""
        state = self.table(name).state
        return state.rows if state is not None else None

    # --- reads ------------------------------------------------------------------------

    def readable(self, reader: str, full_refresh: bool) -> bool:
        """Whether a run of `reader` can read its upstream exactly: a build that reads it
        whole (first build, --full-refresh, a table model), or a range whose start the
        upstream still holds (with no other commit than appends in between, when read
        without a key)."""
        spec = READERS[reader]
        state = self.table(reader).state
        reading = spec.reading_in(self.life)
        if full_refresh or reading in ("ref", "whole") or state is None:
            return True
        start = state.reads.get(spec.upstream)
        upstream = self.table(spec.upstream)
        if start is None or start == upstream.current:
            return start is not None or upstream.current is None
        if start not in upstream.live:
            return False  # expired
        if reading == "keyed":
            return True  # the difference of two snapshots, wherever they are
        chain = upstream.ancestors()
        if start not in chain:
            return False  # replaced, or rolled back past it
        between = chain[: chain.index(start)]
        return all(upstream.states[s].kind in (APPEND, SAME) for s in between)

    def read_state(self, reader: str) -> State:
        """The state a successful run of `reader` leaves: what a full rebuild of it gives
        from the upstreams now, having read each up to its current snapshot."""
        spec = READERS[reader]
        previous = self.rows(reader)
        rows = spec.expected(self.inputs, previous if previous is not None else Counter())
        return State(rows, APPEND, {spec.upstream: self.table(spec.upstream).current})

    def empty_run_state(self, reader: str) -> State | None:
        """What a `dbt run --empty` of `reader` leaves: an incremental model as it was
        (no row written, no read recorded, no state moved); a `table`, and a microbatch
        model's windows, replaced by no rows (dbt's --empty), having recorded no read."""
        if READERS[reader].kind_in(self.life) == "incremental":
            return None
        return State(Counter(), REPLACE, {})

    def upstream_state(self, name: str, kind: str, source: object) -> State:
        """An upstream's state holding `source` (the events, or the rows by id)."""
        changed = dataclasses.replace(self.inputs, **{name: source})
        return State(upstream_rows(name, changed), kind, source=source)

    # --- what a step did --------------------------------------------------------------

    def settle(self, name: str, observed: Observed, new: State | None) -> list[str]:
        """Table `name` after a step, as its metadata stands (`observed`): a snapshot it
        did not have is in state `new` (None: the step was to change nothing, so a new
        snapshot must hold the same rows and reads, as a hook's empty commit does).
        Returns what contradicts the oracle (a commit where none may be)."""
        table = self.table(name)
        problems = []
        fresh = [s for s in observed.parents if s not in table.states]
        before = table.state
        table.parents.update(observed.parents)
        table.live = set(observed.parents)
        for snapshot in fresh:
            if new is not None and snapshot == observed.current:
                table.states[snapshot] = new
            elif before is not None:
                table.states[snapshot] = State(before.rows, SAME, before.reads)
            elif new is not None:
                table.states[snapshot] = new
            else:
                problems.append(f"{name}: snapshot {snapshot} appeared where no write may be")
        if observed.current is None and table.current is not None and new is not None:
            problems.append(f"{name}: the table is gone")
        if new is not None and not fresh and before is not None and before.rows != new.rows:
            # A run that succeeded without a commit (no rows, or skip_when_unchanged)
            # must leave what a rebuild gives.
            problems.append(f"{name}: nothing committed, but a rebuild gives other rows")
        table.current = observed.current
        return problems

    def restore(self, name: str, snapshot: int | None) -> None:
        """An undo set table `name` back to `snapshot` (None: dropped)."""
        if snapshot is None:
            self.tables[name] = Table()
        else:
            self.table(name).current = snapshot
