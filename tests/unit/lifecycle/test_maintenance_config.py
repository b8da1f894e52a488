"""A model's `maintenance` config: parsed once with its other keys (errors name the model,
the key and the fix), and the threshold decision taken after a build."""

from __future__ import annotations

import pytest

from dbt.adapters.s3tables.catalogs.snapshots import TableHealth
from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.lifecycle.maintenance import MaintenanceOptions
from dbt.adapters.s3tables.lifecycle.maintenance_config import (
    AFTER_BUILD_OPERATIONS,
    MaintenanceConfig,
    parse_maintenance_config,
)
from dbt.adapters.s3tables.model_config import parse_model_config


def health(data_files: int = 1, delete_files: int = 0, snapshots: int = 1) -> TableHealth:
    return TableHealth(
        data_files=data_files, delete_files=delete_files, bytes=1000, snapshots=snapshots
    )


def test_unset_or_null_means_no_maintenance() -> None:
    assert parse_maintenance_config("events", None) is None
    assert parse_model_config("events", {"materialized": "table"}).maintenance is None
    assert parse_model_config("events", {"maintenance": None}).maintenance is None


def test_defaults_are_the_run_operations_without_orphan_removal() -> None:
    config = parse_maintenance_config("events", {"when": {"delete_files_above": 10}})
    assert config == MaintenanceConfig(
        when={"delete_files_above": 10},
        options=MaintenanceOptions(operations=AFTER_BUILD_OPERATIONS),
    )
    assert AFTER_BUILD_OPERATIONS == ("compact", "rewrite_manifests", "expire_snapshots")


def test_the_options_of_s3tables_maintain() -> None:
    config = parse_maintenance_config(
        "events",
        {
            "when": {"snapshots_above": 50, "data_files_above": 100},
            "operations": ["compact", "expire_snapshots"],
            "retain_last": 3,
            "snapshots_older_than_days": 0,
            "force": True,
        },
    )
    assert config is not None
    assert config.when == {"snapshots_above": 50, "data_files_above": 100}
    assert config.options == MaintenanceOptions(
        operations=("compact", "expire_snapshots"),
        retain_last=3,
        snapshots_older_than_days=0.0,
        force=True,
    )


def test_the_model_config_carries_it_for_every_materialization() -> None:
    for materialized in ("table", "incremental", "seed"):
        config = parse_model_config(
            "events",
            {
                "materialized": materialized,
                "unique_key": "id",
                "maintenance": {"when": {"delete_files_above": 2}},
            },
        )
        assert config.maintenance is not None
        assert config.maintenance.when == {"delete_files_above": 2}


@pytest.mark.parametrize(
    ("value", "key", "fix"),
    [
        ("weekly", "maintenance", "give `when:`"),
        ({"when": {"delete_files_above": 1}, "vacuum": True}, "maintenance.vacuum", "use: when"),
        ({"operations": ["compact"]}, "maintenance.when", "delete_files_above"),
        ({"when": {}}, "maintenance.when", "delete_files_above"),
        ({"when": 10}, "maintenance.when", "delete_files_above"),
        (
            {"when": {"delete_file_above": 10}},
            "maintenance.when.delete_file_above",
            "use: delete_files_above",
        ),
        ({"when": {"snapshots_above": -1}}, "maintenance.when.snapshots_above", "whole number"),
        ({"when": {"snapshots_above": 2.5}}, "maintenance.when.snapshots_above", "whole number"),
        ({"when": {"snapshots_above": "50"}}, "maintenance.when.snapshots_above", "whole number"),
        ({"when": {"snapshots_above": True}}, "maintenance.when.snapshots_above", "whole number"),
        (
            {"when": {"snapshots_above": 5}, "operations": ["vacuum"]},
            "maintenance.operations",
            "use: compact",
        ),
        ({"when": {"snapshots_above": 5}, "retain_last": 0}, "maintenance.retain_last", "omit"),
        (
            {"when": {"snapshots_above": 5}, "orphans_older_than_days": 0.1},
            "maintenance.orphans_older_than_days",
            "use 1 or more",
        ),
    ],
)
def test_a_bad_value_names_model_key_and_fix(value: object, key: str, fix: str) -> None:
    with pytest.raises(ModelConfigError) as error:
        parse_model_config("events", {"materialized": "incremental", "maintenance": value})
    message = str(error.value)
    assert f"Model `events`, config `{key}`: " in message, message
    assert fix in message.split("Fix:")[1], message


@pytest.mark.parametrize(
    ("when", "table", "crossed"),
    [
        ({"delete_files_above": 10}, health(delete_files=10), []),
        ({"delete_files_above": 10}, health(delete_files=11), ["delete files 11 > 10"]),
        ({"delete_files_above": 0}, health(delete_files=1), ["delete files 1 > 0"]),
        ({"delete_files_above": 0}, health(delete_files=0), []),
        ({"data_files_above": 100}, health(data_files=101), ["data files 101 > 100"]),
        ({"snapshots_above": 50}, health(snapshots=50), []),
        ({"snapshots_above": 50}, health(snapshots=51), ["snapshots 51 > 50"]),
        (
            {"delete_files_above": 10, "data_files_above": 100, "snapshots_above": 50},
            health(data_files=5, delete_files=3, snapshots=51),
            ["snapshots 51 > 50"],
        ),
        (
            {"delete_files_above": 2, "snapshots_above": 5},
            health(delete_files=3, snapshots=6),
            ["delete files 3 > 2", "snapshots 6 > 5"],
        ),
    ],
)
def test_maintenance_runs_when_any_count_is_above_its_threshold(
    when: dict[str, int], table: TableHealth, crossed: list[str]
) -> None:
    config = MaintenanceConfig(when=when, options=MaintenanceOptions())
    assert config.crossed(table) == crossed
