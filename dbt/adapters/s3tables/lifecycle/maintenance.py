"""Table maintenance: which of Iceberg's Spark procedures run, with which arguments, and how
their effect is reported.

Merge-on-read writes leave delete files, every commit a snapshot, and failed writes orphan
files. S3 Tables buckets maintain their tables themselves; the embedded, REST and Glue
catalogs do not, so `s3tables_maintain` runs these, and so does a model's `maintenance`
config after its build (see maintenance_config.py); pure SQL builders here, the adapter
runs them and reads the table's health before and after through PyIceberg:

- `compact`: small data files rewritten together, and every data file that has deletes
  rewritten without them (`rewrite_data_files`), then the delete files left dangling
  removed (`rewrite_position_delete_files`);
- `rewrite_manifests`: the table's manifests regrouped;
- `expire_snapshots`: snapshots older than N days, keeping the last M;
- `remove_orphan_files`: files no snapshot references, older than a safety window of at
  least a day (a running write's files are younger: they may still be committed).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime, timedelta, timezone
from typing import Any

from dbt.adapters.s3tables.catalogs.snapshots import TableHealth
from dbt.adapters.s3tables.errors import MaintenanceError
from dbt.adapters.s3tables.sql.text import procedure_call, sql_string

# In the order they run: the rewrites first (each adds a snapshot), so that expiry leaves
# exactly the snapshots asked for.
OPERATIONS = ("compact", "rewrite_manifests", "expire_snapshots", "remove_orphan_files")
# A write in progress has written its files but not committed them yet: younger files are
# never orphans to remove.
MIN_ORPHAN_AGE_DAYS = 1.0


@dataclass(frozen=True)
class MaintenanceOptions:
    operations: tuple[str, ...] = OPERATIONS
    # expire_snapshots: snapshots older than this go, but never the last `retain_last`.
    snapshots_older_than_days: float = 5.0
    retain_last: int = 5
    # remove_orphan_files: only files older than this (at least MIN_ORPHAN_AGE_DAYS).
    orphans_older_than_days: float = 3.0
    # Maintain tables of a catalog that maintains its own (S3 Tables) all the same.
    force: bool = False


def parse_maintenance_options(arguments: dict[str, Any]) -> MaintenanceOptions:
    """The options `arguments` give (unset keys keep their defaults), or a MaintenanceError
    naming the argument and the fix."""
    known = {f.name for f in fields(MaintenanceOptions)}
    values = {k: v for k, v in arguments.items() if v is not None}
    for key in values:
        if key not in known:
            raise MaintenanceError(key, "is not an argument", f"use: {', '.join(sorted(known))}")
    operations = values.get("operations", OPERATIONS)
    if isinstance(operations, str):
        operations = [operations]
    unknown = [o for o in operations if o not in OPERATIONS]
    if unknown or not operations:
        raise MaintenanceError(
            "operations",
            f"names `{', '.join(unknown) or 'nothing'}`",
            f"use: {', '.join(OPERATIONS)}",
        )
    options = MaintenanceOptions(
        operations=tuple(operations),
        snapshots_older_than_days=_number(values, "snapshots_older_than_days", 5.0),
        retain_last=int(_number(values, "retain_last", 5)),
        orphans_older_than_days=_number(values, "orphans_older_than_days", 3.0),
        force=bool(values.get("force", False)),
    )
    if options.retain_last < 1:
        raise MaintenanceError("retain_last", "must keep at least 1 snapshot", "omit it for 5")
    if options.snapshots_older_than_days < 0:
        raise MaintenanceError(
            "snapshots_older_than_days", "is negative", "give a number of days, e.g. 5"
        )
    if options.orphans_older_than_days < MIN_ORPHAN_AGE_DAYS:
        raise MaintenanceError(
            "orphans_older_than_days",
            f"is under {MIN_ORPHAN_AGE_DAYS:g} day: a running write's files would look like "
            "orphans",
            f"use {MIN_ORPHAN_AGE_DAYS:g} or more (default 3)",
        )
    return options


def _number(values: dict[str, Any], key: str, default: float) -> float:
    value = values.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MaintenanceError(key, f"is `{value}`, not a number", f"omit it for {default:g}")
    return float(value)


def _timestamp(moment: datetime) -> str:
    # In UTC, said so in the literal: right whatever the session's time zone. To the
    # millisecond, as snapshot times are: a snapshot committed a moment before is older.
    utc = moment.astimezone(timezone.utc)
    return f"TIMESTAMP '{utc:%Y-%m-%dT%H:%M:%S}.{utc.microsecond // 1000:03d}Z'"


def _options_map(options: dict[str, str]) -> str:
    pairs = ", ".join(f"{sql_string(k)}, {sql_string(v)}" for k, v in options.items())
    return f"map({pairs})"


def operations_in_order(options: MaintenanceOptions) -> list[str]:
    """The operations `options` ask for, in the order they run."""
    return [operation for operation in OPERATIONS if operation in options.operations]


def procedure_calls(
    catalog: str,
    namespace: str,
    table: str,
    operation: str,
    options: MaintenanceOptions,
    now: datetime,
) -> list[str]:
    """The CALL statements of one operation; `now` (an aware datetime) is the moment it
    starts, from which its cutoffs count: taken after the rewrites, the snapshots they
    committed are older than expiry's cutoff, so `retain_last` is what remains."""

    def call(name: str, *arguments: str) -> str:
        return procedure_call(catalog, namespace, table, name, *arguments)

    if operation == "compact":
        return [
            call(
                "rewrite_data_files",
                "options => "
                + _options_map({"min-input-files": "2", "delete-file-threshold": "1"}),
            ),
            call("rewrite_position_delete_files", "options => map('rewrite-all', 'true')"),
        ]
    if operation == "rewrite_manifests":
        return [call("rewrite_manifests")]
    if operation == "expire_snapshots":
        cutoff = _timestamp(now - timedelta(days=options.snapshots_older_than_days))
        return [
            call(
                "expire_snapshots",
                f"older_than => {cutoff}",
                f"retain_last => {options.retain_last}",
            )
        ]
    cutoff = _timestamp(now - timedelta(days=options.orphans_older_than_days))
    return [call("remove_orphan_files", f"older_than => {cutoff}")]


def describe_change(
    table: str,
    before: TableHealth,
    after: TableHealth,
    removed: int | None,
    because: str | None = None,
) -> str:
    """One line for the log: the table's health before and after, the orphan files removed
    (None: not looked for) and why maintenance ran, when it was a threshold's crossing."""
    reason = f" ({because})" if because else ""
    orphans = "" if removed is None else f", orphan files removed {removed}"
    return (
        f"maintained {table}{reason}: data files {before.data_files} -> {after.data_files}, "
        f"delete files {before.delete_files} -> {after.delete_files}, bytes {before.bytes} "
        f"-> {after.bytes}, snapshots {before.snapshots} -> {after.snapshots}{orphans}"
    )
