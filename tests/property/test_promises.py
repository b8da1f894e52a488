"""The promises' state machine (machine.py) as a test.

In `make test`: the bounded run, with a fixed seed (Hypothesis derandomized: the same
examples every time), a few examples of a few steps each, dbt in this process on the test
process's warehouse. In `make soak` (bench/promises_soak.py): the same test with
`PROMISES_EXAMPLES` examples of `PROMISES_STEPS` steps and the seed pytest is given
(`--hypothesis-seed`), printed with the command that replays it; with
`PROMISES_DBT=subprocess`, dbt runs in processes of its own that are SIGKILLed at random
moments (`KillingPromisesMachine`); with `PROMISES_DBT=concurrent`, two dbt processes
run at once on the same tables (`OverlappingPromisesMachine`); with `PROMISES_SERVER=thrift`
(or `connect`), dbt runs its statements on a local Spark server of that kind."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.functional.emulators import services
from tests.property.machine import (
    KillingPromisesMachine,
    OverlappingPromisesMachine,
    PromisesMachine,
)
from tests.property.project import READERS
from tests.property.walks import on_server, walk_keyed_reads

# The bounded run: the first example Hypothesis makes repeats one rule, the second runs
# none; the other three are sequences of up to 8 steps. About 2.5 minutes alone on 2 cores.
BOUNDED = settings(
    max_examples=5,
    stateful_step_count=8,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=list(HealthCheck),
    # A failure is reported as found (its blob replays it): shrinking reruns dbt from
    # scratch per attempt, which took one failing `make test` 10 minutes.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)


def chosen_settings() -> settings:
    """The bounded run, or the soak's (`PROMISES_EXAMPLES`, `PROMISES_STEPS`), whose
    seed is pytest's `--hypothesis-seed`."""
    examples = int(os.environ.get("PROMISES_EXAMPLES") or 0)
    if not examples:
        return BOUNDED
    return settings(
        BOUNDED,
        max_examples=examples,
        stateful_step_count=int(os.environ.get("PROMISES_STEPS") or 20),
        derandomize=False,
    )


def test_the_promises_hold_where_features_meet(warehouse_dir: str, tmp_path: Path) -> None:
    machine = {
        "subprocess": KillingPromisesMachine,
        "concurrent": OverlappingPromisesMachine,
    }.get(os.environ.get("PROMISES_DBT") or "", PromisesMachine)
    service = os.environ.get("PROMISES_SERVER")
    if service:  # thrift or connect: a local server of that kind, on a warehouse of its own
        run_dir = tmp_path / "server"
        state = services("start", service, run_dir, "--warehouse", str(tmp_path / "warehouse"))
        try:
            server = {"method": service, "host": state["host"], "port": state["port"]}
            on = on_server(machine, state["warehouse"], tmp_path, server)
            run_state_machine_as_test(on, settings=chosen_settings())
        finally:
            services("stop", service, run_dir)
        return
    machine.warehouse = Path(warehouse_dir)
    machine.workspace = tmp_path
    run_state_machine_as_test(machine, settings=chosen_settings())


def test_a_keyed_read_file_by_file_meets_faults_undo_and_compaction(
    warehouse_dir: str, tmp_path: Path
) -> None:
    """The keyed walk (walks.py) with dbt's own Spark; test_engines.py walks it over a
    Thrift server."""
    PromisesMachine.warehouse = Path(warehouse_dir)
    PromisesMachine.workspace = tmp_path
    walk_keyed_reads(PromisesMachine())


def test_two_processes_run_modes_and_a_models_life(warehouse_dir: str, tmp_path: Path) -> None:
    """A walk through the rule families beyond one dbt process and one kind of run: two
    runs of the same readers at once, and an upstream's run racing its readers' (each in
    a process of its own); `--empty`, `show` and `compile`; the watermark merge's run
    undone; the model whose kind and strategy change (append, table, merge); every
    table's snapshots expired, upstreams that did not change among them; a post-hook
    failing after the data commit; the audited reader's two-parent test failing, with its
    snapshot built beside it. Every promise is checked after every step."""
    OverlappingPromisesMachine.warehouse = Path(warehouse_dir)
    OverlappingPromisesMachine.workspace = tmp_path
    machine = OverlappingPromisesMachine()
    events_readers = {r for r, spec in READERS.items() if spec.upstream == "events"}

    def step(rule: str, **arguments: object) -> None:
        getattr(machine, rule)(**arguments)
        machine.every_table_holds_what_the_oracle_says()

    def readers(chosen: set[str], fault: str = "none", victim: str = "events_copy") -> None:
        step("run_readers", readers=chosen, fault=fault, victim=victim, full_refresh=False)

    try:
        step("build_everything")
        step("append_events", rows=[(1, 1), (2, 2)], full_refresh=False)
        step(
            "overlapping_runs",
            readers={"events_copy", "events_by_watermark", "events_by_last_value", "events_life"},
        )
        step(
            "upstream_races_readers",
            rows=[(3, 3)],
            readers={"events_copy", "events_daily", "events_by_last_value"},
        )
        step("append_events", rows=[(4, 4)], full_refresh=False)
        # The audited reader's two-parent test fails: main, and its snapshot (which does
        # not wait for that test), hold nothing it staged; then it passes and publishes.
        step("build_audited", outcome="fail_two_parent")
        step("build_audited", outcome="pass")
        step(
            "run_readers_empty",
            readers={"events_copy", "events_life", "customers_table", "events_by_last_value"},
        )
        step("look_without_running", command="show", reader="events_copy")
        step("look_without_running", command="compile", reader="events_life")
        readers(events_readers | {"customers_table"})
        step("append_events", rows=[(5, 5)], full_refresh=False)
        readers({"events_by_last_value"})
        step("rollback_last")
        readers({"events_by_last_value"})
        step("change_life", life="table")
        readers({"events_life"})
        step("change_life", life="merge")
        step("append_events", rows=[(1, 6)], full_refresh=False)
        readers({"events_life"})
        step("change_life", life="append")
        step("append_events", rows=[(2, 7)], full_refresh=False)
        readers(events_readers, fault="post_fail", victim="events_copy")
        step("append_events", rows=[(3, 8)], full_refresh=False)
        readers({"events_copy", "events_life"})
        # The catalog's own expiry of every table: readers whose last read expired are
        # refused (their fix named); those that read up to the upstream's snapshot are not.
        step("expire_every_table")
        readers(events_readers)
    finally:
        machine.teardown()
