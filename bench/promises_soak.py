"""The long run of the promises' state machine (tests/property/), for `make soak`: many
examples of many steps, from a seed printed first, so that any failure replays with the
one-line command printed with it. Hypothesis also prints the failing example's steps,
shrunk, as Python code.

    python bench/promises_soak.py --examples 40 --steps 20            # dbt in this process
    python bench/promises_soak.py --examples 10 --steps 10 --kill     # dbt in subprocesses,
                                                                      # SIGKILLed at random
    python bench/promises_soak.py --examples 6 --steps 10 --concurrent
                                      # two dbt processes at once: overlapping runs of the
                                      # same readers, an upstream racing its readers
    python bench/promises_soak.py --examples 5 --steps 8 --server thrift
                                      # dbt's statements on a local Thrift server
    python bench/promises_soak.py --seed 1234 ...                     # replay a seed
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST = "tests/property/test_promises.py"
# How the machine's two-process steps begin in its log of commands.
TWO_PROCESS_STEPS = ("two runs at once", "events appended while")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=40)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--seed", type=int, default=None, help="default: a random one")
    variants = parser.add_mutually_exclusive_group()
    variants.add_argument("--kill", action="store_true", help="dbt in subprocesses, killed")
    variants.add_argument(
        "--concurrent", action="store_true", help="two dbt processes at once on the same tables"
    )
    parser.add_argument(
        "--server",
        choices=["thrift", "connect"],
        help="dbt's statements on a local Spark server of this kind (its own warehouse)",
    )
    options = parser.parse_args()
    seed = options.seed if options.seed is not None else random.SystemRandom().getrandbits(32)
    environment = {
        "PROMISES_EXAMPLES": str(options.examples),
        "PROMISES_STEPS": str(options.steps),
        **({"PROMISES_DBT": "subprocess"} if options.kill else {}),
        **({"PROMISES_DBT": "concurrent"} if options.concurrent else {}),
        **({"PROMISES_SERVER": options.server} if options.server else {}),
    }
    command = [
        sys.executable,
        "-m",
        "pytest",
        TEST,
        "-k",
        "test_the_promises_hold_where_features_meet",
        "-p",
        "no:cacheprovider",
        "-q",
        f"--hypothesis-seed={seed}",
    ]
    replay = " ".join([*(f"{k}={v}" for k, v in environment.items()), *map(shlex.quote, command)])
    variant = "kill" if options.kill else "concurrent" if options.concurrent else "in process"
    if options.server:
        variant = f"{variant}, statements on a {options.server} server"
    print(
        f"promises soak ({variant}): seed {seed}, {options.examples} examples of up to "
        f"{options.steps} steps",
        flush=True,
    )
    started = time.monotonic()
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as log:
        env = {**os.environ, **environment, "PROMISES_LOG": log.name}
        result = subprocess.run(command, cwd=ROOT, env=env)
        examples = [json.loads(line) for line in Path(log.name).read_text().splitlines()]
    minutes = (time.monotonic() - started) / 60
    commands = sum(len(e["commands"]) for e in examples)
    killed = sum(c.endswith("(killed)") for e in examples for c in e["commands"])
    together = sum(c.startswith(TWO_PROCESS_STEPS) for e in examples for c in e["commands"])
    outcome = "held" if result.returncode == 0 else "BROKEN"
    extra = f", {killed} of them killed" if options.kill else ""
    extra += f", {together} steps of two processes at once" if options.concurrent else ""
    print(
        f"promises soak ({variant}): the promises {outcome} over {len(examples)} examples "
        f"and {commands} dbt commands{extra} ({minutes:.1f} min); seed {seed}"
    )
    if result.returncode != 0:
        print(f"replay: {replay}")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
