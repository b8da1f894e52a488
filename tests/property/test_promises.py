"""The bounded run of the promises' state machine (machine.py) in `make test`: fixed seeds
(Hypothesis derandomized), a few examples of a few steps each, dbt in this process on the
test process's warehouse. `make soak` runs it long, with random seeds, and its kill
variant (bench/promises_soak.py)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.property.machine import PromisesMachine

BOUNDED = settings(
    max_examples=6,
    stateful_step_count=8,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=list(HealthCheck),
)


def test_the_promises_hold_where_features_meet(warehouse_dir: str, tmp_path: Path) -> None:
    PromisesMachine.warehouse = Path(warehouse_dir)
    PromisesMachine.workspace = tmp_path
    run_state_machine_as_test(PromisesMachine, settings=BOUNDED)
