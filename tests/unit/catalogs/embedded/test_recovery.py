"""Rebuilding a lost embedded catalog from the tables' own metadata files (PyIceberg
only: no Spark)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.embedded.recovery import (
    latest_metadata_file,
    metadata_version,
    missing_snapshot_files,
)
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.catalogs.recover_command import main


def catalog(warehouse: Path) -> IcebergCatalog:
    return IcebergCatalog(
        CatalogConfig(name="local", catalog_type="local", warehouse=str(warehouse))
    )


def test_the_latest_metadata_file_is_the_highest_version(tmp_path: Path) -> None:
    metadata = tmp_path / "metadata"
    metadata.mkdir()
    for name in ("00002-b.metadata.json", "00010-a.metadata.json", "00009-c.gz.metadata.json"):
        (metadata / name).write_text("{}")
    assert latest_metadata_file(tmp_path).name == "00010-a.metadata.json"
    assert metadata_version(Path("v1.metadata.json")) == -1


def test_a_purged_tables_leftover_metadata_is_not_registered(tmp_path: Path) -> None:
    document = {
        "current-snapshot-id": 7,
        "snapshots": [{"snapshot-id": 7, "manifest-list": f"file:{tmp_path}/snap-7.avro"}],
    }
    assert "is gone" in (missing_snapshot_files(document) or "")
    (tmp_path / "snap-7.avro").write_bytes(b"")
    assert missing_snapshot_files(document) is None
    assert missing_snapshot_files({"current-snapshot-id": -1, "snapshots": []}) is None


def test_a_deleted_catalog_is_rebuilt_with_history(tmp_path: Path, capsys) -> None:
    iceberg = catalog(tmp_path)
    iceberg.create_namespace("analytics")
    rows = pa.table({"id": pa.array([1, 2, 3], pa.int64())})
    table = iceberg.catalog.create_table(("analytics", "orders"), schema=rows.schema)
    table.append(rows)
    table.append(rows)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp_path}/catalog.db{suffix}").unlink(missing_ok=True)

    assert main([str(tmp_path)]) == 0
    assert "registered table analytics.orders" in capsys.readouterr().out
    recovered = catalog(tmp_path).load_table("analytics", "orders")
    assert recovered.scan().to_arrow().num_rows == 6
    assert len(recovered.history()) == 2


def test_a_damaged_catalog_is_moved_aside_not_deleted(tmp_path: Path) -> None:
    iceberg = catalog(tmp_path)
    iceberg.create_namespace("analytics")
    rows = pa.table({"id": pa.array([1], pa.int64())})
    iceberg.catalog.create_table(("analytics", "t"), schema=rows.schema).append(rows)
    # Closing the connections checkpoints the WAL into the file, as when no process runs.
    iceberg.catalog.engine.dispose()
    assert not (tmp_path / "catalog.db-wal").exists()
    (tmp_path / "catalog.db").write_bytes(b"garbage" * 100)

    assert main([str(tmp_path)]) == 0
    (aside,) = tmp_path.glob("catalog.db.unreadable-*[0-9]")
    assert aside.read_bytes() == b"garbage" * 100
    assert catalog(tmp_path).load_table("analytics", "t").scan().to_arrow().num_rows == 1


def test_dry_run_registers_nothing(tmp_path: Path, capsys) -> None:
    metadata = tmp_path / "analytics" / "v" / "metadata"
    metadata.mkdir(parents=True)
    (metadata / "00000-a.metadata.json").write_text(json.dumps({"view-uuid": "u"}))
    assert main([str(tmp_path), "--dry-run"]) == 0
    assert "would register view analytics.v" in capsys.readouterr().out
    assert not (tmp_path / "catalog.db").exists()
