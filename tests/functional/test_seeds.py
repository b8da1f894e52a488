"""Seeds: one bulk DataFrame, one atomic `CREATE OR REPLACE TABLE ... AS SELECT`.

Every value is read back from the Iceberg table through Spark and compared with the CSV
text; column types are checked through the adapter (PyIceberg) and through Spark.
"""

from __future__ import annotations

import datetime
from decimal import Decimal
from pathlib import Path

import pytest
from dbt.tests.util import get_connection, run_dbt, run_dbt_and_capture

from tests.functional.harness import column_types, snapshot_count, snapshot_ids, table_rows

# Quoted cells with embedded quotes and commas, unicode (accents, CJK, emoji), empty cells
# (NULL) in an integer, a date and the decimal column.
TYPED_VALUES_CSV = (
    "id,name,note,birth_date,created_at,is_active,qty,amount\n"
    '1,"Zoë ""Zed"" Smith","hello, world",2024-01-15,2024-01-15 10:30:00,true,7,12.34\n'
    '2,日本,"🎉 party, ""big""",2023-12-31,2023-12-31 23:59:59,false,,0.5\n'
    "3,Plain,text,,2020-02-29 00:00:00,true,-3,\n"
    "4,Big,x,2000-01-01,2000-01-01 00:00:01,false,0,12345678.1234\n"
)

TYPED_VALUES_YML = """
version: 2
seeds:
  - name: typed_values
    config:
      column_types:
        amount: decimal(12,4)
"""

# Without `column_types`, an empty text cell is NULL as well (dbt's CSV reader).
TEXT_NULL_CSV = "id,label\n1,\n2,b\n"

EXPECTED_TYPES = [
    ("id", "bigint"),
    ("name", "string"),
    ("note", "string"),
    ("birth_date", "date"),
    ("created_at", "timestamp"),
    ("is_active", "boolean"),
    ("qty", "bigint"),
    ("amount", "decimal(12,4)"),
]


class TestSeedValuesAndTypes:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {
            "typed_values.csv": TYPED_VALUES_CSV,
            "typed_values.yml": TYPED_VALUES_YML,
            "text_null.csv": TEXT_NULL_CSV,
        }

    def test_values_round_trip(self, project):
        results = run_dbt(["seed"])
        assert len(results) == 2
        assert all(r.status == "success" for r in results)

        rows = project.run_sql(
            "select id, name, note, birth_date, cast(created_at as string), is_active, qty, "
            "amount from {schema}.typed_values order by id",
            fetch="all",
        )
        assert [tuple(r) for r in rows] == [
            (
                1,
                'Zoë "Zed" Smith',
                "hello, world",
                datetime.date(2024, 1, 15),
                "2024-01-15 10:30:00",
                True,
                7,
                Decimal("12.3400"),
            ),
            (
                2,
                "日本",
                '🎉 party, "big"',
                datetime.date(2023, 12, 31),
                "2023-12-31 23:59:59",
                False,
                None,
                Decimal("0.5000"),
            ),
            (3, "Plain", "text", None, "2020-02-29 00:00:00", True, -3, None),
            (
                4,
                "Big",
                "x",
                datetime.date(2000, 1, 1),
                "2000-01-01 00:00:01",
                False,
                0,
                Decimal("12345678.1234"),
            ),
        ]
        # Exact decimal text, not a float approximation.
        assert str(rows[0][7]) == "12.3400"
        assert str(rows[3][7]) == "12345678.1234"

        text_rows = project.run_sql("select id, label from {schema}.text_null order by id", "all")
        assert [tuple(r) for r in text_rows] == [(1, None), (2, "b")]

    def test_column_types(self, project):
        run_dbt(["seed"])
        relation = project.adapter.Relation.create(
            schema=project.test_schema, identifier="typed_values"
        )
        with get_connection(project.adapter):
            columns = project.adapter.get_columns_in_relation(relation)
        assert [(c.name, c.dtype) for c in columns] == EXPECTED_TYPES
        # Spark, reading the same Iceberg schema on its own path, agrees.
        assert column_types(project, f"{project.test_schema}.typed_values") == EXPECTED_TYPES

    def test_single_bulk_load_commit(self, project):
        run_dbt(["seed", "--select", "typed_values"])
        table = f"{project.test_schema}.typed_values"
        # Every load is one commit holding all rows (no row-by-row inserts).
        latest = project.run_sql(
            f"select summary['added-records'], operation from {table}.snapshots "
            "order by committed_at desc limit 1",
            fetch="one",
        )
        assert int(latest[0]) == 4
        assert latest[1] in ("append", "overwrite")


RESEED_V1 = "id,val\n1,a\n2,b\n"
RESEED_V2 = "id,val\n10,x\n20,y\n30,z\n"
RESEED_V3 = "id,val\n100,full\n"
RESEED_BAD_TYPE_YML = """
version: 2
seeds:
  - name: reseed
    config:
      column_types:
        val: not_a_spark_type
"""

SPACED_SEED_CSV = "id,name\n1,Zoë\n2,b\n"
SPACED_SEED_YML = """
version: 2
seeds:
  - name: spaced_seed
    config:
      alias: Seed With Space
"""


class TestReseed:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"reseed.csv": RESEED_V1}

    def write_seed(self, project, text: str) -> None:
        path = Path(project.project_root) / "seeds" / "reseed.csv"
        path.write_text(text, encoding="utf-8")

    def rows(self, project) -> list[tuple]:
        return table_rows(project, "reseed", "id, val", order_by="id")

    def test_reseed_replaces_rows_and_keeps_history(self, project):
        table = f"{project.test_schema}.reseed"
        self.write_seed(project, RESEED_V1)
        run_dbt(["seed"])
        assert self.rows(project) == [(1, "a"), (2, "b")]
        first_snapshots = snapshot_ids(project, table)
        assert len(first_snapshots) >= 1

        self.write_seed(project, RESEED_V2)
        results = run_dbt(["seed"])
        assert len(results) == 1
        assert self.rows(project) == [(10, "x"), (20, "y"), (30, "z")]
        second_snapshots = snapshot_ids(project, table)
        # Replaced in place: the earlier snapshots are still in the table's history.
        assert len(second_snapshots) > len(first_snapshots)
        assert set(first_snapshots) < set(second_snapshots)
        assert snapshot_count(project, table) == len(second_snapshots)

    def test_full_refresh_seed(self, project):
        table = f"{project.test_schema}.reseed"
        self.write_seed(project, RESEED_V2)
        run_dbt(["seed"])
        before = snapshot_ids(project, table)

        self.write_seed(project, RESEED_V3)
        results = run_dbt(["seed", "--full-refresh"])
        assert len(results) == 1
        assert results[0].status == "success"
        assert self.rows(project) == [(100, "full")]
        after = snapshot_ids(project, table)
        assert after[-1] not in before

    def test_failed_reseed_leaves_table_unchanged(self, project):
        table = f"{project.test_schema}.reseed"
        self.write_seed(project, RESEED_V1)
        run_dbt(["seed"])
        before_rows = self.rows(project)
        before = snapshot_ids(project, table)

        # A type Spark cannot parse makes the load statement fail: nothing may be dropped.
        properties = Path(project.project_root) / "seeds" / "reseed.yml"
        properties.write_text(RESEED_BAD_TYPE_YML, encoding="utf-8")
        self.write_seed(project, RESEED_V2)
        try:
            results = run_dbt(["seed"], expect_pass=False)
            assert results[0].status == "error"
        finally:
            properties.unlink()
        assert self.rows(project) == before_rows == [(1, "a"), (2, "b")]
        assert snapshot_ids(project, table) == before


class TestSeedNameNeedingQuotes:
    """A seed alias with spaces and capitals, like the quoted `table` model names."""

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"spaced_seed.csv": SPACED_SEED_CSV, "spaced_seed.yml": SPACED_SEED_YML}

    def test_seed_alias_with_space(self, project):
        results = run_dbt(["seed"])
        assert len(results) == 1
        rows = project.run_sql(
            "select id, name from `{schema}`.`Seed With Space` order by id", "all"
        )
        assert [tuple(r) for r in rows] == [(1, "Zoë"), (2, "b")]


class TestEmptySeed:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"empty_seed.csv": "id,name,created_at\n"}

    def test_header_only_seed_loads_zero_rows(self, project):
        results = run_dbt(["seed"])
        assert len(results) == 1
        assert results[0].status == "success"
        count = project.run_sql("select count(*) from {schema}.empty_seed", fetch="one")[0]
        assert count == 0

        relation = project.adapter.Relation.create(
            schema=project.test_schema, identifier="empty_seed"
        )
        with get_connection(project.adapter):
            columns = project.adapter.get_columns_in_relation(relation)
            relations = project.adapter.list_relations_without_caching(
                project.adapter.Relation.create(schema=project.test_schema)
            )
        assert [c.name for c in columns] == ["id", "name", "created_at"]
        assert [(r.identifier, r.type) for r in relations] == [("empty_seed", "table")]

        # Seeding again (still empty) works and stays empty.
        run_dbt(["seed"])
        count = project.run_sql("select count(*) from {schema}.empty_seed", fetch="one")[0]
        assert count == 0


BAD_VALUE_CSV = "id,qty,note\n1,5,a\n2,five,b\n3,7,c\n"
BAD_VALUE_YML = """
version: 2
seeds:
  - name: bad_value
    config:
      column_types:
        qty: int
"""


class TestSeedBadValue:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"bad_value.csv": BAD_VALUE_CSV, "bad_value.yml": BAD_VALUE_YML}

    def test_value_not_fitting_its_type_fails_and_writes_nothing(self, project):
        results, output = run_dbt_and_capture(["seed"], expect_pass=False)
        assert results[0].status == "error"
        assert (
            "Seed seeds/bad_value.csv, row 2: value 'five' of column qty does not fit its "
            "type int" in output
        )
        with get_connection(project.adapter):
            assert project.adapter.get_relation(None, project.test_schema, "bad_value") is None


# Inferred as dbt's agate loader infers: `$1,000`-style numbers, `TRUE`, ISO datetimes.
AGATE_STYLE_CSV = (
    "id,price,flag,at,day\n"
    '1,"$1,000.50",TRUE,2024-01-15T10:30:00,2024-01-15\n'
    "2,12,false,2024-01-16T00:00:00,\n"
)


class TestSeedAgateStyleValuesAndShow:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"agate_style.csv": AGATE_STYLE_CSV}

    def test_inferred_types_values_and_show(self, project):
        results = run_dbt(["seed", "--show"])
        assert results[0].status == "success"
        # What `--show` samples from: the first rows, as dbt's agate loader reads them.
        assert [list(row) for row in results[0].agate_table.rows] == [
            [
                Decimal(1),
                Decimal("1000.50"),
                True,
                datetime.datetime(2024, 1, 15, 10, 30),
                datetime.date(2024, 1, 15),
            ],
            [Decimal(2), Decimal(12), False, datetime.datetime(2024, 1, 16), None],
        ]
        assert column_types(project, f"{project.test_schema}.agate_style") == [
            ("id", "bigint"),
            ("price", "double"),
            ("flag", "boolean"),
            ("at", "timestamp"),
            ("day", "date"),
        ]
        rows = project.run_sql(
            "select id, price, flag, cast(at as string), day from {schema}.agate_style order by id",
            fetch="all",
        )
        assert [tuple(r) for r in rows] == [
            (1, 1000.5, True, "2024-01-15 10:30:00", datetime.date(2024, 1, 15)),
            (2, 12.0, False, "2024-01-16 00:00:00", None),
        ]
