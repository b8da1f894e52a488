"""The promises' state machine (machine.py) as a test.

In `make test`: the bounded run, with a fixed seed (Hypothesis derandomized: the same
examples every time), a few examples of a few steps each, dbt in this process on the test
process's warehouse. In `make soak` (bench/promises_soak.py): the same test with
`PROMISES_EXAMPLES` examples of `PROMISES_STEPS` steps and the seed pytest is given
(`--hypothesis-seed`), printed with the command that replays it; with
`PROMISES_DBT=subprocess`, dbt runs in processes of its own that are SIGKILLed at random
moments (`KillingPromisesMachine`)."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.property.machine import KillingPromisesMachine, PromisesMachine

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
        # A failure is reported as found: shrinking reruns dbt from scratch per attempt.
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
    )


def test_the_promises_hold_where_features_meet(warehouse_dir: str, tmp_path: Path) -> None:
    killing = os.environ.get("PROMISES_DBT") == "subprocess"
    machine = KillingPromisesMachine if killing else PromisesMachine
    machine.warehouse = Path(warehouse_dir)
    machine.workspace = tmp_path
    run_state_machine_as_test(machine, settings=chosen_settings())
