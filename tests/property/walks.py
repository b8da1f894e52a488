"""Fixed walks of the promises' state machine (machine.py): sequences of its rules that
the bounded run's few random examples do not take, each promise checked after every step.
A walk runs on the machine it is given: dbt's own Spark (test_promises.py) or a Spark
server (test_engines.py, `PromisesMachine.server`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tests.property.machine import PromisesMachine
from tests.property.project import READERS


def on_server(
    machine: type[PromisesMachine], warehouse: str, workspace: Path, server: Mapping[str, object]
) -> type[PromisesMachine]:
    """`machine` whose dbt runs its statements on the Spark server `server` names
    (`method`, `host`, `port`), the server's catalog being `warehouse`'s: the oracle reads
    the tables the server wrote from this process."""
    attributes = {"warehouse": Path(warehouse), "workspace": workspace, "server": dict(server)}
    return type(f"Server{machine.__name__}", (machine,), attributes)


def machine_on_server(
    warehouse: str, workspace: Path, server: Mapping[str, object]
) -> PromisesMachine:
    """A `PromisesMachine` on the Spark server `server` names (see `on_server`)."""
    return on_server(PromisesMachine, warehouse, workspace, server)()


def walk_keyed_reads(machine: PromisesMachine) -> None:
    """A walk the bounded run's few examples do not take: keyed mirrors read upstream
    ranges of merges (updates, deletes: merge-on-read delete files) file by file, across a
    committing pre-hook, a compaction of the upstream (files removed and added), an undo
    of the mirrors' run and a failing run; then every reader, with events to copy; then
    the `skip_when_unchanged` reader with nothing changed (skipped), and after an undo of
    its own build. Every promise is checked after every step, as in the random runs; the walk fails
    unless two reads or more were file by file and (with dbt's own Spark: `skip_when_unchanged`
    needs it) one build or more was skipped."""
    keyed = {"customers_mirror", "customers_table"}

    def step(rule: str, **arguments: object) -> None:
        getattr(machine, rule)(**arguments)
        machine.every_table_holds_what_the_oracle_says()

    def customers(*changes: tuple[int, str, bool]) -> None:
        step("change_customers", changes=list(changes), full_refresh=False)

    def mirrors(readers: set[str], fault: str = "none") -> None:
        step(
            "run_readers",
            readers=readers,
            fault=fault,
            victim="customers_mirror",
            full_refresh=False,
        )

    try:
        step("build_everything")
        customers((1, "ann", False), (2, "bob", False))
        mirrors(keyed)
        customers((1, "cy", False), (2, "bob", True))
        mirrors(keyed, fault="hook")
        step("rollback_last")
        step("compact", table="customers")
        customers((3, "dee", False), (1, "ann", True))
        mirrors(keyed, fault="fail")
        # Events for every reader of them, the microbatch copy's timestamps among them.
        step("append_events", rows=[(2, 4), (5, 9)], full_refresh=False)
        mirrors(set(READERS))
        # Nothing it reads changed since: skipped (and still what a rebuild gives). Then
        # rebuilt over changed customers, that build undone (its record goes back with
        # it), and rebuilt again: a skip there would keep the undone rows.
        skipping = {"dim_and_customers"}
        mirrors(skipping)
        customers((4, "eve", False))
        mirrors(skipping)
        step("rollback_last")
        mirrors(skipping)
    finally:
        machine.teardown()
    assert machine.keyed_reads["file by file"] >= 2, machine.keyed_reads
    if machine.server is None:  # on a server the skipping reader is a plain table
        assert machine.unchanged_skips >= 1, machine.unchanged_skips
