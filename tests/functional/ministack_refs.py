"""ministack (the S3 Tables emulator), run with its Iceberg REST commits' branch updates
applied as the Iceberg REST spec and Java Iceberg's `TableMetadata.Builder` apply them.

ministack 1.5.33 (its newest release) moves main to every snapshot an `add-snapshot`
adds, whatever branch the commit is for; ignores the current snapshot when
`set-snapshot-ref` moves main; and ignores `remove-snapshot-ref`. A commit to a branch
(write-audit-publish's, an overlapping run's) then leaves main's ref and the current
snapshot apart, which Java Iceberg refuses to load ("Current snapshot ID does not match
main branch"). Here, as the spec says: `add-snapshot` adds the snapshot only,
`set-snapshot-ref` of main makes it the current snapshot (with its snapshot-log entry),
and `remove-snapshot-ref` removes the ref. Every other update is ministack's own.

Run as ministack is (`python tests/functional/ministack_refs.py` in ministack's
virtualenv, in place of `python -m ministack`).
"""

from __future__ import annotations

import runpy
import time
from typing import Any

MAIN = "main"


def apply_refs_as_the_spec_does(apply: Any) -> Any:
    """ministack's `_apply_iceberg_updates`, with the three branch updates of the spec."""

    def applied(metadata: dict[str, Any], updates: list[dict[str, Any]]) -> None:
        for update in updates:
            action = update.get("action", "")
            if action == "add-snapshot":
                current = metadata.get("current-snapshot-id")
                apply(metadata, [update])
                metadata["current-snapshot-id"] = current if current is not None else -1
            elif action == "set-snapshot-ref":
                apply(metadata, [update])
                if update.get("ref-name", MAIN) == MAIN:
                    snapshot = update.get("snapshot-id", -1)
                    if metadata.get("current-snapshot-id") != snapshot:
                        now = int(time.time() * 1000)
                        metadata["current-snapshot-id"] = snapshot
                        metadata["last-updated-ms"] = now
                        metadata.setdefault("snapshot-log", []).append(
                            {"snapshot-id": snapshot, "timestamp-ms": now}
                        )
            elif action == "remove-snapshot-ref":
                metadata.get("refs", {}).pop(update.get("ref-name", ""), None)
            else:
                apply(metadata, [update])

    return applied


if __name__ == "__main__":
    from ministack.services import s3tables

    s3tables._apply_iceberg_updates = apply_refs_as_the_spec_does(s3tables._apply_iceberg_updates)
    runpy.run_module("ministack", run_name="__main__", alter_sys=True)
