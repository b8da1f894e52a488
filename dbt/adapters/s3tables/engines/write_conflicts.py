"""Re-running a statement that lost an Iceberg commit race to another writer.

Iceberg retries a commit itself (table properties `commit.retry.*`), but a MERGE, a
row-level DELETE or an overwrite also validates that no concurrent commit touched the
rows it read; when one did, the statement fails with a `ValidationException` whatever
Iceberg's retries say. Every write of this adapter is one statement that commits once or
not at all, so after such a failure nothing of it was written, and running the same
statement again computes it against the table's new state. That is what happens here, a
bounded number of times with a growing, jittered wait (profile keys
`write_conflict_retries` and `write_conflict_wait_seconds`).
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from dbt.adapters.events.logging import AdapterLogger

logger = AdapterLogger("s3tables")

T = TypeVar("T")

# Text of Iceberg's exceptions when a concurrent commit made this one impossible.
_CONFLICT = re.compile(
    r"CommitFailedException|Found conflicting files|Found new conflicting|"
    r"Missing required files to delete|found new (position )?delete|"
    r"Cannot commit, found new|conflicting (files|deletes)",
    re.IGNORECASE,
)
# Snapshot expiry (maintenance) removed the snapshot the statement started from while it
# ran, so its commit cannot validate the history since; run again, it starts from the
# current snapshot.
_EXPIRED_START = re.compile(
    r"Snapshot -?\d+ is not an ancestor of -?\d+|Cannot determine history between",
    re.IGNORECASE,
)
# `CREATE OR REPLACE VIEW` of a view another run created meanwhile fails as a create;
# re-run, it replaces that view.
_VIEW_CREATED_MEANWHILE = re.compile(r"View already exists", re.IGNORECASE)
_REPLACES_VIEW = re.compile(
    r"^\s*(?:/\*.*?\*/\s*|--[^\n]*\n\s*)*create\s+or\s+replace\s+view\b",
    re.IGNORECASE | re.DOTALL,
)
MAX_WAIT_SECONDS = 30.0


def is_write_conflict(text: str, statement: str = "") -> bool:
    """Whether an error's text (its class names and messages) is a lost commit race of
    `statement`."""
    if "CommitStateUnknownException" in text:
        return False
    if _VIEW_CREATED_MEANWHILE.search(text):
        return bool(_REPLACES_VIEW.match(statement))
    return bool(_CONFLICT.search(text) or _EXPIRED_START.search(text))


def conflict_cause(text: str) -> str:
    """What made a statement lose its commit, as the retry line says it."""
    if _EXPIRED_START.search(text):
        return "snapshot expiry (maintenance) removed the snapshot the statement started from"
    return "another writer committed to the table first"


@dataclass(frozen=True)
class ConflictRetries:
    """How often, and after how long a first wait, a conflicting statement is re-run."""

    retries: int = 3
    first_wait_seconds: float = 1.0

    def wait(self, retry: int) -> float:
        """Seconds before retry `retry` (1-based): doubling, jittered, capped."""
        base = self.first_wait_seconds * (2.0 ** (retry - 1))
        return min(MAX_WAIT_SECONDS, base * (1 + random.random()))


def run_with_conflict_retries(
    run: Callable[[], T],
    error_text: Callable[[BaseException], str],
    policy: ConflictRetries,
    statement: str,
    after_conflict: Callable[[float], object] | None = None,
) -> T:
    """`run()`, re-run while it fails with a write conflict and retries remain;
    `after_conflict(attempt start time)` deals with the files a lost attempt left."""
    for retry in range(policy.retries + 1):
        attempt_started = time.time()
        try:
            return run()
        except Exception as error:
            text = error_text(error)
            if retry == policy.retries or not is_write_conflict(text, statement):
                raise
            if after_conflict:
                after_conflict(attempt_started)
            wait = policy.wait(retry + 1)
            first_line = " ".join(statement.split())[:80]
            logger.warning(
                f"write conflict; retry {retry + 1} of {policy.retries} in {wait:.1f} s: "
                f"{conflict_cause(text)} (statement: {first_line}...)"
            )
            time.sleep(wait)
    raise AssertionError("unreachable")
