"""The `table` materialization: atomic replace, partitioning, properties, view<->table, quoting."""

from __future__ import annotations

import datetime

import pytest
from dbt.tests.util import get_connection, run_dbt, run_dbt_and_capture
from pyiceberg.transforms import BucketTransform
from pyiceberg.types import IntegerType

from tests.functional.harness import latest_snapshot_id, snapshot_count, table_properties

FAILING_MODEL_SQL = """
{{ config(materialized='table') }}
{% if var('fail', false) %}
select case when id = 2 then raise_error('boom') else id end as id, label
from values (1, 'new-a'), (2, 'new-b'), (3, 'new-c') as t(id, label)
{% else %}
select id, label from values (1, 'a'), (2, 'b'), (3, 'c') as t(id, label)
{% endif %}
"""


class TestFailedRebuildKeepsTable:
    @pytest.fixture(scope="class")
    def models(self):
        return {"atomic_model.sql": FAILING_MODEL_SQL}

    def test_failing_query_leaves_table_unchanged(self, project):
        table = f"{project.test_schema}.atomic_model"
        results = run_dbt(["run"])
        assert len(results) == 1
        rows_before = project.run_sql(f"select id, label from {table} order by id", "all")
        assert [tuple(r) for r in rows_before] == [(1, "a"), (2, "b"), (3, "c")]
        snapshot_before = latest_snapshot_id(project, table)
        count_before = snapshot_count(project, table)

        results = run_dbt(["run", "--vars", "{fail: true}"], expect_pass=False)
        assert len(results) == 1
        assert results[0].status == "error"
        assert "boom" in (results[0].message or "")

        rows_after = project.run_sql(f"select id, label from {table} order by id", "all")
        assert [tuple(r) for r in rows_after] == [(1, "a"), (2, "b"), (3, "c")]
        assert latest_snapshot_id(project, table) == snapshot_before
        assert snapshot_count(project, table) == count_before

        # A good rebuild replaces the table in place: its history is kept.
        run_dbt(["run"])
        assert snapshot_count(project, table) >= 2
        history = [
            r[0] for r in project.run_sql(f"select snapshot_id from {table}.snapshots", "all")
        ]
        assert snapshot_before in history
        assert latest_snapshot_id(project, table) != snapshot_before
        rows = project.run_sql(f"select id, label from {table} order by id", "all")
        assert [tuple(r) for r in rows] == [(1, "a"), (2, "b"), (3, "c")]


PARTITIONED_MODEL_SQL = """
{{ config(
    materialized='table',
    partition_by=['days(event_ts)', 'bucket(4, id)'],
    tblproperties={'write.format.default': 'parquet', 'comment_key': 'x'},
) }}
select id, cast(event_ts as timestamp) as event_ts, payload
from values
    (1, '2024-01-01 10:00:00', 'p1'),
    (2, '2024-01-01 11:00:00', 'p2'),
    (3, '2024-01-01 12:00:00', 'p3'),
    (1, '2024-01-02 10:00:00', 'p4'),
    (5, '2024-01-02 23:59:59', 'p5'),
    (6, '2024-01-03 00:00:00', 'p6')
    as t(id, event_ts, payload)
"""

PARTITIONED_ROWS = [
    (1, datetime.date(2024, 1, 1)),
    (2, datetime.date(2024, 1, 1)),
    (3, datetime.date(2024, 1, 1)),
    (1, datetime.date(2024, 1, 2)),
    (5, datetime.date(2024, 1, 2)),
    (6, datetime.date(2024, 1, 3)),
]


class TestPartitionsAndProperties:
    @pytest.fixture(scope="class")
    def models(self):
        return {"partitioned_model.sql": PARTITIONED_MODEL_SQL}

    def test_partitioning_and_tblproperties(self, project):
        results = run_dbt(["run"])
        assert len(results) == 1
        table = f"{project.test_schema}.partitioned_model"

        # Iceberg's bucket hash computed independently by PyIceberg (int and long hash alike).
        bucket = BucketTransform(4).transform(IntegerType())
        epoch = datetime.date(1970, 1, 1)
        expected = {((day - epoch).days, bucket(i)) for i, day in PARTITIONED_ROWS}
        expected_records: dict[tuple[int, int], int] = {}
        for i, day in PARTITIONED_ROWS:
            key = ((day - epoch).days, bucket(i))
            expected_records[key] = expected_records.get(key, 0) + 1

        partitions = project.run_sql(
            "select cast(datediff(partition.event_ts_day, date'1970-01-01') as int), "
            f"partition.id_bucket, record_count from {table}.partitions",
            fetch="all",
        )
        assert len(partitions) == len(expected)
        assert {(r[0], r[1]): r[2] for r in partitions} == expected_records

        # The spec itself: two fields, in order, with the requested transforms.
        spec_rows = project.run_sql(f"describe table extended {table}", "all")
        spec = [(r[0], r[1]) for r in spec_rows if str(r[0]).startswith("Part ")]
        assert spec == [("Part 0", "days(event_ts)"), ("Part 1", "bucket(4, id)")]

        properties = table_properties(project, table)
        assert properties.get("comment_key") == "x"
        assert properties.get("write.format.default") == "parquet"

        count = project.run_sql(f"select count(*) from {table}", fetch="one")[0]
        assert count == len(PARTITIONED_ROWS)


SWITCHING_MODEL_SQL = """
{{ config(materialized=var('mat', 'view')) }}
select 1 as id, '{{ var('mat', 'view') }}' as built_as
"""


class TestViewTableSwitch:
    @pytest.fixture(scope="class")
    def models(self):
        return {"switching_model.sql": SWITCHING_MODEL_SQL}

    def relation_types(self, project) -> dict[str, str]:
        schema_relation = project.adapter.Relation.create(schema=project.test_schema)
        with get_connection(project.adapter):
            relations = project.adapter.list_relations_without_caching(schema_relation)
        return {r.identifier: str(r.type) for r in relations}

    def built_as(self, project) -> list[tuple]:
        rows = project.run_sql("select id, built_as from {schema}.switching_model", "all")
        return [tuple(r) for r in rows]

    def test_view_to_table_and_back(self, project):
        for materialized in ("view", "table", "view", "table"):
            results = run_dbt(["run", "--vars", f"{{mat: {materialized}}}"])
            assert len(results) == 1
            assert results[0].status == "success"
            assert self.relation_types(project) == {"switching_model": materialized}
            assert self.built_as(project) == [(1, materialized)]


QUOTED_NAME_TABLE_SQL = """
{{ config(materialized='table', alias='Mixed Case Name') }}
select 1 as id, 'table' as kind
"""

QUOTED_NAME_VIEW_SQL = """
{{ config(materialized='view', alias='View With Space') }}
select id, kind from {{ ref('mixed_case_table') }}
"""


class TestIdentifierNeedingQuotes:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "mixed_case_table.sql": QUOTED_NAME_TABLE_SQL,
            "mixed_case_view.sql": QUOTED_NAME_VIEW_SQL,
        }

    def test_alias_with_space_and_capitals(self, project):
        results = run_dbt(["run"])
        assert len(results) == 2
        assert all(r.status == "success" for r in results)

        rows = project.run_sql("select id, kind from `{schema}`.`Mixed Case Name`", "all")
        assert [tuple(r) for r in rows] == [(1, "table")]
        rows = project.run_sql("select id, kind from `{schema}`.`View With Space`", "all")
        assert [tuple(r) for r in rows] == [(1, "table")]

        # A second run finds the existing relations (cache lookups by the quoted names).
        results = run_dbt(["run"])
        assert all(r.status == "success" for r in results)
        rows = project.run_sql("select count(*) from `{schema}`.`Mixed Case Name`", "one")
        assert rows[0] == 1

        schema_relation = project.adapter.Relation.create(schema=project.test_schema)
        with get_connection(project.adapter):
            relations = project.adapter.list_relations_without_caching(schema_relation)
        # The catalog keeps the names exactly as written (case and space).
        found = {r.identifier: str(r.type) for r in relations}
        assert found == {"Mixed Case Name": "table", "View With Space": "view"}


class TestUntypedNullColumns:
    """Spark types a bare NULL as `void`, which Iceberg cannot store: the column is
    stored as string (nested ones too), with a warning naming it."""

    @pytest.fixture(scope="class")
    def models(self):
        query = "select 1 as id, null as nothing, array(null) as nothings, cast(null as date) as d"
        return {
            "null_table.sql": "{{ config(materialized='table') }} " + query,
            "null_view.sql": "{{ config(materialized='view') }} " + query,
        }

    def test_null_columns_become_strings(self, project):
        results, output = run_dbt_and_capture(["run"])
        assert len(results) == 2
        assert "column(s) nothing, nothings hold only NULL" in output
        for name in ("null_table", "null_view"):
            with get_connection(project.adapter):
                relation = project.adapter.get_relation(None, project.test_schema, name)
                columns = project.adapter.get_columns_in_relation(relation)
            types = {c.name: c.dtype for c in columns}
            assert types == {
                "id": "int",
                "nothing": "string",
                "nothings": "array<string>",
                "d": "date",
            }, name
            row = project.run_sql(f"select * from {project.test_schema}.{name}", fetch="one")
            assert tuple(row) == (1, None, [None], None)


class TestOneAnalysisUnderS3TablesRules:
    """Under S3 Tables' rules a table build checks its column names and casts its untyped
    columns: both read the query's columns, which Spark analyses once (over a server each
    analysis is a round trip)."""

    @pytest.fixture(scope="class")
    def dbt_profile_target(self, dbt_profile_target: dict) -> dict:
        return {**dbt_profile_target, "s3tables_rules": True}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "ruled_table.sql": "{{ config(materialized='table') }} select 1 as id, null as nothing"
        }

    def test_the_query_is_analysed_once(self, project, monkeypatch) -> None:
        from dbt.adapters.s3tables.engines.session import SessionEngine

        analysed: list[str] = []
        analyse = SessionEngine.query_schema

        def counted(engine: SessionEngine, sql: str):
            analysed.append(sql)
            return analyse(engine, sql)

        monkeypatch.setattr(SessionEngine, "query_schema", counted)
        for _ in range(2):  # the first build creates the table, the second replaces it
            analysed.clear()
            results, output = run_dbt_and_capture(["run"])
            assert len(results) == 1
            assert "column(s) nothing hold only NULL" in output
            models = [sql for sql in analysed if "as nothing" in sql]
            assert len(models) == 1, analysed
        row = project.run_sql(f"select * from {project.test_schema}.ruled_table", fetch="one")
        assert tuple(row) == (1, None)
