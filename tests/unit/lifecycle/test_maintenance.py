"""Maintenance options (checked before anything runs) and the procedure calls they make."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from dbt.adapters.s3tables.catalogs import CATALOG_TYPES
from dbt.adapters.s3tables.catalogs.snapshots import TableHealth
from dbt.adapters.s3tables.errors import MaintenanceError
from dbt.adapters.s3tables.lifecycle.maintenance import (
    OPERATIONS,
    MaintenanceOptions,
    describe_change,
    operations_in_order,
    parse_maintenance_options,
    procedure_calls,
)

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=timezone.utc)


def test_defaults_run_every_operation_with_a_safe_orphan_window() -> None:
    options = parse_maintenance_options({"operations": None, "force": False})
    assert options == MaintenanceOptions()
    assert options.operations == OPERATIONS
    assert options.orphans_older_than_days >= 1


def calls(options: MaintenanceOptions) -> list[tuple[str, str]]:
    return [
        (operation, sql)
        for operation in operations_in_order(options)
        for sql in procedure_calls("local", "analytics", "my events", operation, options, NOW)
    ]


def test_the_calls_in_order() -> None:
    options = parse_maintenance_options({"retain_last": 2, "snapshots_older_than_days": 1})
    made = calls(options)
    assert [operation for operation, _ in made] == [
        "compact",
        "compact",
        "rewrite_manifests",
        "expire_snapshots",
        "remove_orphan_files",
    ]
    table = "table => '`analytics`.`my events`'"
    assert made[0][1] == (
        f"CALL `local`.system.rewrite_data_files({table}, options => "
        "map('min-input-files', '2', 'delete-file-threshold', '1'))"
    )
    assert made[1][1] == (
        f"CALL `local`.system.rewrite_position_delete_files({table}, options => "
        "map('rewrite-all', 'true'))"
    )
    assert made[3][1] == (
        f"CALL `local`.system.expire_snapshots({table}, older_than => "
        "TIMESTAMP '2026-11-25T12:00:00.000Z', retain_last => 2)"
    )
    assert made[4][1] == (
        f"CALL `local`.system.remove_orphan_files({table}, older_than => "
        "TIMESTAMP '2026-11-23T12:00:00.000Z')"
    )


def test_cutoffs_to_the_millisecond_in_utc() -> None:
    options = parse_maintenance_options({"operations": "expire_snapshots"})
    now = datetime(2026, 11, 26, 13, 0, 0, 123_987, tzinfo=timezone(timedelta(hours=1)))
    (sql,) = procedure_calls("c", "n", "t", "expire_snapshots", options, now)
    assert "older_than => TIMESTAMP '2026-11-21T12:00:00.123Z'" in sql


def test_only_the_operations_asked_for() -> None:
    options = parse_maintenance_options({"operations": ["expire_snapshots", "compact"]})
    assert operations_in_order(options) == ["compact", "expire_snapshots"]


@pytest.mark.parametrize(
    ("arguments", "key"),
    [
        ({"orphans_older_than_days": 0.5}, "orphans_older_than_days"),
        ({"retain_last": 0}, "retain_last"),
        ({"snapshots_older_than_days": -1}, "snapshots_older_than_days"),
        ({"retain_last": "many"}, "retain_last"),
        ({"operations": ["vacuum"]}, "operations"),
        ({"operations": []}, "operations"),
        ({"dry_run": True}, "dry_run"),
    ],
)
def test_bad_arguments_name_the_key_and_the_fix(arguments, key) -> None:
    with pytest.raises(MaintenanceError) as error:
        parse_maintenance_options(arguments)
    assert f"argument `{key}`" in str(error.value) and "Fix:" in str(error.value)


def test_only_s3tables_maintains_its_own_tables() -> None:
    assert {name for name, kind in CATALOG_TYPES.items() if kind.maintains_its_tables} == {
        "s3tables"
    }


def test_the_change_in_one_line() -> None:
    line = describe_change(
        "analytics.events", TableHealth(31, 30, 9000, 32), TableHealth(1, 0, 2000, 2), 1
    )
    assert line == (
        "maintained analytics.events: data files 31 -> 1, delete files 30 -> 0, bytes 9000 "
        "-> 2000, snapshots 32 -> 2, orphan files removed 1"
    )


def test_the_change_after_a_build_says_why_and_omits_orphans_not_looked_for() -> None:
    line = describe_change(
        "analytics.events",
        TableHealth(5, 4, 9000, 6),
        TableHealth(1, 0, 2000, 2),
        None,
        because="delete files 4 > 3",
    )
    assert line == (
        "maintained analytics.events (delete files 4 > 3): data files 5 -> 1, delete files "
        "4 -> 0, bytes 9000 -> 2000, snapshots 6 -> 2"
    )
