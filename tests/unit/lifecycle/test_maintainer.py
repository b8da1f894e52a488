"""`TableMaintainer.maintain_after_build` on fakes of the catalog and the engine: which
statements run, or why none did (no config, no threshold crossed, a catalog that maintains
its own tables)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.snapshots import TableHealth
from dbt.adapters.s3tables.lifecycle.maintainer import TableMaintainer
from dbt.adapters.s3tables.model_config import ModelConfig, parse_model_config
from dbt.adapters.s3tables.relation import S3TablesRelation

RELATION = S3TablesRelation.create(schema="analytics", identifier="events")
CROWDED = TableHealth(data_files=9, delete_files=5, bytes=9000, snapshots=6)
COMPACT = TableHealth(data_files=1, delete_files=0, bytes=2000, snapshots=2)


class FakeIceberg:
    def __init__(self, catalog_type: str, healths: list[TableHealth]) -> None:
        self.config = CatalogConfig(name="lake", catalog_type=catalog_type, warehouse="/w")
        self.healths = healths
        self.reads = 0

    def table_health(self, namespace: str, name: str) -> TableHealth:
        assert (namespace, name) == ("analytics", "events")
        self.reads += 1
        return self.healths[self.reads - 1]


class FakeAdapter(TableMaintainer):
    """The maintainer over a fake catalog and engine, recording each statement."""

    def __init__(self, iceberg: FakeIceberg) -> None:
        self.iceberg = iceberg
        self.statements: list[str] = []
        super().__init__(lambda relation: SimpleNamespace(iceberg=self.iceberg), self.run)

    def run(self, sql: str) -> list[dict[str, Any]]:
        self.statements.append(sql)
        return []


def model(maintenance: Any) -> ModelConfig:
    return parse_model_config("events", {"materialized": "table", "maintenance": maintenance})


WHEN = {"when": {"delete_files_above": 3}}


def test_crossed_threshold_runs_the_operations_and_says_why() -> None:
    adapter = FakeAdapter(FakeIceberg("local", [CROWDED, COMPACT]))
    line = adapter.maintain_after_build(RELATION, model(WHEN))
    assert [s.split("(")[0] for s in adapter.statements] == [
        "CALL `lake`.system.rewrite_data_files",
        "CALL `lake`.system.rewrite_position_delete_files",
        "CALL `lake`.system.rewrite_manifests",
        "CALL `lake`.system.expire_snapshots",
    ]
    assert line == (
        "maintained `analytics`.`events` (delete files 5 > 3): data files 9 -> 1, delete "
        "files 5 -> 0, bytes 9000 -> 2000, snapshots 6 -> 2"
    )


def test_below_every_threshold_nothing_runs() -> None:
    adapter = FakeAdapter(FakeIceberg("local", [CROWDED]))
    settings = {"when": {"delete_files_above": 5, "snapshots_above": 6}}
    assert adapter.maintain_after_build(RELATION, model(settings)) is None
    assert adapter.statements == [] and adapter.iceberg.reads == 1


def test_no_config_reads_nothing() -> None:
    adapter = FakeAdapter(FakeIceberg("local", []))
    assert adapter.maintain_after_build(RELATION, model(None)) is None
    assert adapter.iceberg.reads == 0


def test_a_catalog_maintaining_its_tables_is_left_alone_unless_forced() -> None:
    adapter = FakeAdapter(FakeIceberg("s3tables", [CROWDED, COMPACT]))
    line = adapter.maintain_after_build(RELATION, model(WHEN))
    assert "maintains its own tables" in line and "`force: true`" in line
    assert adapter.statements == [] and adapter.iceberg.reads == 0

    line = adapter.maintain_after_build(RELATION, model({**WHEN, "force": True}))
    assert line.startswith("maintained `analytics`.`events` (delete files 5 > 3)")
    assert len(adapter.statements) == 4
