"""Metadata changes rendered as Iceberg Spark SQL (for format-v3 tables PyIceberg cannot
write), and applied by PyIceberg in one transaction (on an in-memory SQL catalog)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    IdentityTransform,
    TruncateTransform,
    VoidTransform,
)
from pyiceberg.types import (
    DecimalType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    StructType,
)

from dbt.adapters.s3tables.catalogs.metadata_changes import (
    ColumnChange,
    MetadataChange,
    UnsupportedThroughSql,
    apply_with_pyiceberg,
    spark_sql,
    transform_sql,
    upgrade_sql,
)
from dbt.adapters.s3tables.catalogs.table_changes import MainMoved, check_main_at
from dbt.adapters.s3tables.sql.text import table_identifier

T = "`local`.`s`.`t`"


def test_identifier_quotes_every_part() -> None:
    assert table_identifier("local", "a.b", "t`x") == "`local`.`a`.`b`.`t``x`"


def test_empty_change_is_no_statement() -> None:
    assert not MetadataChange()
    assert spark_sql(T, MetadataChange()) == []


def test_properties_set_then_removed() -> None:
    change = MetadataChange(set_properties={"a": "1", "it's": "x"}, remove_properties=["b"])
    assert spark_sql(T, change) == [
        f"ALTER TABLE {T} SET TBLPROPERTIES ('a' = '1', 'it\\'s' = 'x')",
        f"ALTER TABLE {T} UNSET TBLPROPERTIES IF EXISTS ('b')",
    ]


def test_columns_added_in_one_statement_then_widened_documented_dropped() -> None:
    change = MetadataChange(
        add_columns=[
            ColumnChange(("n",), LongType(), doc="a count"),
            ColumnChange(("point", "z"), DecimalType(10, 2)),
        ],
        update_columns=[
            ColumnChange(("id",), LongType()),
            ColumnChange(("name",), doc="who"),
        ],
        delete_columns=["old"],
    )
    assert spark_sql(T, change) == [
        f"ALTER TABLE {T} ADD COLUMNS (`n` bigint COMMENT 'a count', `point`.`z` decimal(10,2))",
        f"ALTER TABLE {T} ALTER COLUMN `id` TYPE bigint",
        f"ALTER TABLE {T} ALTER COLUMN `name` COMMENT 'who'",
        f"ALTER TABLE {T} DROP COLUMNS (`old`)",
    ]


def test_partition_fields_dropped_then_added() -> None:
    change = MetadataChange(
        remove_partition_fields=["day"],
        add_partition_fields=[("id", BucketTransform(16)), ("ts", DayTransform())],
    )
    assert spark_sql(T, change) == [
        f"ALTER TABLE {T} DROP PARTITION FIELD `day`",
        f"ALTER TABLE {T} ADD PARTITION FIELD bucket(16, `id`)",
        f"ALTER TABLE {T} ADD PARTITION FIELD days(`ts`)",
    ]


@pytest.mark.parametrize(
    ("transform", "sql"),
    [(IdentityTransform(), "`c`"), (TruncateTransform(4), "truncate(4, `c`)")],
)
def test_transforms(transform: object, sql: str) -> None:
    assert transform_sql("c", transform) == sql  # type: ignore[arg-type]  # parametrized


def test_what_spark_sql_cannot_do_is_refused_with_the_reason() -> None:
    with pytest.raises(UnsupportedThroughSql, match="void"):
        transform_sql("c", VoidTransform())
    with pytest.raises(UnsupportedThroughSql, match="SET NOT NULL"):
        spark_sql(T, MetadataChange(update_columns=[ColumnChange(("id",), required=True)]))


def test_upgrade_is_one_property_statement() -> None:
    assert upgrade_sql(T, 3) == f"ALTER TABLE {T} SET TBLPROPERTIES ('format-version' = '3')"


def test_pyiceberg_applies_a_whole_change_in_one_commit(tmp_path: Path) -> None:
    catalog = SqlCatalog("t", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}")
    catalog.create_namespace("s")
    table = catalog.create_table(
        "s.t",
        Schema(
            NestedField(1, "id", IntegerType(), required=False),
            NestedField(2, "point", StructType(NestedField(3, "x", LongType())), required=False),
            NestedField(4, "old", StringType(), required=False),
        ),
    )
    metadata_files = len(list(tmp_path.glob("s/t/metadata/*.metadata.json")))
    apply_with_pyiceberg(
        table,
        MetadataChange(
            set_properties={"a": "1"},
            add_columns=[ColumnChange(("point", "z"), LongType(), doc="depth")],
            update_columns=[ColumnChange(("id",), LongType(), doc="key", required=True)],
            delete_columns=["old"],
            add_partition_fields=[("ID", BucketTransform(4))],
        ),
    )
    table = catalog.load_table("s.t")
    assert len(list(tmp_path.glob("s/t/metadata/*.metadata.json"))) == metadata_files + 1
    assert table.properties["a"] == "1"
    schema = table.schema()
    assert [f.name for f in schema.fields] == ["id", "point"]
    assert schema.find_field("id").field_type == LongType()
    assert schema.find_field("id").required and schema.find_field("id").doc == "key"
    assert schema.find_field("point.z").doc == "depth"
    assert [f.name for f in table.spec().fields] == ["id_bucket_4"]


# --- branches: a run's own branch, created, fast-forwarded into main and removed --------


def test_branches_created_fast_forwarded_then_removed_through_spark_sql() -> None:
    fast_forward = (
        "CALL `local`.system.fast_forward(table => 's.t', branch => 'main', to => {branch})"
    )
    change = MetadataChange(
        create_branches={"b1": 12},
        fast_forward_to="b2",
        remove_branches=["b2"],
        set_properties={"a": "1"},
    )
    assert spark_sql(T, change, fast_forward) == [
        f"ALTER TABLE {T} CREATE BRANCH `b1` AS OF VERSION 12",
        "CALL `local`.system.fast_forward(table => 's.t', branch => 'main', to => 'b2')",
        f"ALTER TABLE {T} SET TBLPROPERTIES ('a' = '1')",
        f"ALTER TABLE {T} DROP BRANCH IF EXISTS `b2`",
    ]
    with pytest.raises(UnsupportedThroughSql):
        spark_sql(T, MetadataChange(fast_forward_to="b2"))


def _table_with_two_snapshots(tmp_path: Path):  # noqa: ANN202
    import pyarrow as pa

    catalog = SqlCatalog("t", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}")
    catalog.create_namespace("s")
    table = catalog.create_table("s.t", Schema(NestedField(1, "id", LongType(), required=False)))
    rows = pa.table({"id": pa.array([1], pa.int64())})
    table.append(rows)
    table.append(rows)
    return catalog, catalog.load_table("s.t"), rows


def test_main_takes_a_branch_head_with_properties_in_one_commit(tmp_path: Path) -> None:
    catalog, table, rows = _table_with_two_snapshots(tmp_path)
    base = table.current_snapshot().snapshot_id
    apply_with_pyiceberg(table, MetadataChange(create_branches={"run": base}))
    table = catalog.load_table("s.t")
    table.append(rows, branch="run")
    table = catalog.load_table("s.t")
    head = table.snapshot_by_name("run").snapshot_id
    metadata_files = len(list(tmp_path.glob("s/t/metadata/*.metadata.json")))
    check_main_at(table, base)
    apply_with_pyiceberg(
        table,
        MetadataChange(fast_forward_to="run", remove_branches=["run"], set_properties={"k": "v"}),
    )
    table = catalog.load_table("s.t")
    assert table.current_snapshot().snapshot_id == head
    assert "run" not in table.metadata.refs and table.properties["k"] == "v"
    assert len(list(tmp_path.glob("s/t/metadata/*.metadata.json"))) == metadata_files + 1


def test_a_fast_forward_from_a_main_that_moved_commits_nothing(tmp_path: Path) -> None:
    catalog, table, rows = _table_with_two_snapshots(tmp_path)
    base = table.current_snapshot().snapshot_id
    apply_with_pyiceberg(table, MetadataChange(create_branches={"run": base}))
    loaded = catalog.load_table("s.t")
    loaded.append(rows, branch="run")
    stale = catalog.load_table("s.t")
    catalog.load_table("s.t").append(rows)  # another writer moves main
    with pytest.raises(CommitFailedException):
        apply_with_pyiceberg(
            stale, MetadataChange(fast_forward_to="run", set_properties={"k": "v"})
        )
    table = catalog.load_table("s.t")
    assert table.current_snapshot().parent_snapshot_id == base and "k" not in table.properties
    with pytest.raises(MainMoved) as moved:
        check_main_at(table, base)
    assert [c.operation for c in moved.value.since or ()] == ["append"]
    assert moved.value.current != base
    # A base main never went through (a rollback, a replace) is said as such.
    with pytest.raises(MainMoved) as replaced:
        check_main_at(table, 12345)
    assert replaced.value.since is None
