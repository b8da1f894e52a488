"""dbt-tests-adapter's simple_snapshot suite: timestamp and check strategies, hard deletes
(invalidate and `new_record`), custom meta column names, `dbt_valid_to_current`, composite
unique keys, new source columns.

The fixtures build source and expected tables with Postgres SQL; `spark_sql` translates it
(types, casts, typed timestamp literals, no `database` part in names, no column DEFAULTs).
"""

from __future__ import annotations

import datetime
import re

import pytest
from dbt.tests.adapter.simple_snapshot import (
    fixtures,
    new_record_dbt_valid_to_current,
    new_record_timestamp_mode,
    test_ephemeral_snapshot_hard_deletes,
    test_various_configs,
)
from dbt.tests.adapter.simple_snapshot.new_record_check_mode import BaseSnapshotNewRecordCheckMode
from dbt.tests.adapter.simple_snapshot.new_record_dbt_valid_to_current import (
    BaseSnapshotNewRecordDbtValidToCurrent,
)
from dbt.tests.adapter.simple_snapshot.new_record_timestamp_mode import (
    BaseSnapshotNewRecordTimestampMode,
)
from dbt.tests.adapter.simple_snapshot.test_ephemeral_snapshot_hard_deletes import (
    BaseSnapshotEphemeralHardDeletes,
    BaseSnapshotNewColumnSpecificCheckCols,
    BaseSnapshotNewColumnTimestampStrategy,
    BaseSnapshotNewColumnWithDeletes,
)
from dbt.tests.adapter.simple_snapshot.test_snapshot import BaseSimpleSnapshot, BaseSnapshotCheck
from dbt.tests.adapter.simple_snapshot.test_various_configs import (
    BaseSnapshotColumnNames,
    BaseSnapshotColumnNamesFromDbtProject,
    BaseSnapshotDbtValidToCurrent,
    BaseSnapshotInvalidColumnNames,
    BaseSnapshotMultiUniqueKey,
)
from dbt.tests.util import check_relations_equal, run_dbt

_TIMESTAMP_LITERAL = re.compile(r"'(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})'")
_VARCHAR = re.compile(r"\bVARCHAR\(\d+\)", re.IGNORECASE)
_TEXT_CAST = re.compile(r"(\w+)::text\b")
_DEFAULT = re.compile(r"\s+default\s+('[^']*'|null)", re.IGNORECASE)


def spark_sql(sql: str) -> str:
    """The base fixtures' Postgres SQL in Spark's dialect, same tables and rows:
    - this adapter has no database, so `{database}.{schema}.x` and
      `{{target.database}}.{{target.schema}}.x` lose the database part;
    - `TEXT`, `VARCHAR(n)`, `TIMESTAMP WITHOUT TIME ZONE` become STRING and TIMESTAMP;
    - `x::text` and `null::timestamp` become CAST;
    - Postgres types a string literal by its target column, Spark's store assignment
      refuses a string into TIMESTAMP: timestamp-shaped literals become TIMESTAMP literals;
    - Iceberg on Spark 3.5 takes no column DEFAULT: `add column c T default v` becomes
      `add column c T` followed by an update setting v on the existing rows, which is
      what the DEFAULT does to them in Postgres.
    """
    sql = sql.replace("{database}.{schema}", "{schema}")
    sql = sql.replace("{{target.database}}.{{target.schema}}", "{{target.schema}}")
    sql = sql.replace("TIMESTAMP WITHOUT TIME ZONE", "TIMESTAMP")
    sql = re.sub(r"\bTEXT\b", "STRING", sql)
    sql = _VARCHAR.sub("STRING", sql)
    sql = _TEXT_CAST.sub(r"cast(\1 as string)", sql)
    sql = sql.replace("null::timestamp", "cast(null as timestamp)")
    sql = _TIMESTAMP_LITERAL.sub(r"TIMESTAMP '\1'", sql)
    default = _DEFAULT.search(sql)
    if default and sql.lstrip().lower().startswith("alter table"):
        table, column = re.search(r"alter table\s+(\S+)\s+add column\s+(\w+)", sql, re.I).groups()
        sql = _DEFAULT.sub("", sql).rstrip().rstrip(";")
        sql += f";\nupdate {table} set {column} = {default.group(1)};"
    return sql


class SparkNewRecordFixtures:
    """new_record_* fixtures in Spark SQL (see `spark_sql`)."""

    module = new_record_timestamp_mode

    @pytest.fixture(scope="class")
    def snapshots(self):
        return {"snapshot.sql": spark_sql(self.module._snapshot_actual_sql)}

    @pytest.fixture(scope="class")
    def seed_new_record_mode_statements(self):
        return [spark_sql(s) for s in self.module._seed_new_record_mode_statements]

    @pytest.fixture(scope="class")
    def delete_sql(self):
        return spark_sql(self.module._delete_sql)


class SparkNewRecordTimestampFixtures(SparkNewRecordFixtures):
    @pytest.fixture(scope="class")
    def invalidate_sql_statements(self):
        return [spark_sql(s) for s in self.module._invalidate_sql_statements]

    @pytest.fixture(scope="class")
    def update_sql(self):
        return spark_sql(self.module._update_sql)

    @pytest.fixture(scope="class")
    def reinsert_sql(self):
        return spark_sql(self.module._reinsert_sql)


class TestSnapshotNewRecordTimestampMode(
    SparkNewRecordTimestampFixtures, BaseSnapshotNewRecordTimestampMode
):
    pass


class TestSnapshotNewRecordCheckMode(
    SparkNewRecordTimestampFixtures, BaseSnapshotNewRecordCheckMode
):
    pass


class TestSnapshotNewRecordDbtValidToCurrent(
    SparkNewRecordFixtures, BaseSnapshotNewRecordDbtValidToCurrent
):
    module = new_record_dbt_valid_to_current


class SparkEphemeralSourceFixtures:
    """The source table's Postgres DDL/DML in Spark SQL (see `spark_sql`)."""

    module = test_ephemeral_snapshot_hard_deletes

    @pytest.fixture(scope="class")
    def source_create_sql(self):
        return spark_sql(self.module._source_create_sql)

    @pytest.fixture(scope="class")
    def source_insert_sql(self):
        return spark_sql(self.module._source_insert_sql)

    @pytest.fixture(scope="class")
    def source_alter_sql(self):
        return spark_sql(self.module._source_alter_sql)

    @pytest.fixture(scope="class")
    def source_delete_sql(self):
        return spark_sql(self.module._source_delete_sql)


class TestSnapshotEphemeralHardDeletes(
    SparkEphemeralSourceFixtures, BaseSnapshotEphemeralHardDeletes
):
    pass


class TestSnapshotNewColumnTimestampStrategy(
    SparkEphemeralSourceFixtures, BaseSnapshotNewColumnTimestampStrategy
):
    pass


class TestSnapshotNewColumnSpecificCheckCols(
    SparkEphemeralSourceFixtures, BaseSnapshotNewColumnSpecificCheckCols
):
    pass


class TestSnapshotNewColumnWithDeletes(
    SparkEphemeralSourceFixtures, BaseSnapshotNewColumnWithDeletes
):
    pass


class TestSimpleSnapshot(BaseSimpleSnapshot):
    def add_fact_column(self, column=None, definition=None):
        """The base's ALTER TABLE in Spark's dialect: STRING for `varchar(200)`, and no
        `default null` (Iceberg on Spark 3.5 takes no DEFAULT clause, and NULL is what a
        new column without one holds on existing rows)."""
        super().add_fact_column(column, _DEFAULT.sub("", _VARCHAR.sub("STRING", definition)))


class TestSnapshotCheck(BaseSnapshotCheck):
    pass


class SparkVariousConfigsFixtures:
    """test_various_configs' test bodies read their Postgres SQL from module constants, not
    fixtures: for the class's duration those constants hold the Spark SQL (see `spark_sql`),
    the test bodies and their assertions stay the base's."""

    @pytest.fixture(scope="class", autouse=True)
    def spark_dialect_constants(self):
        with pytest.MonkeyPatch.context() as patch:
            for name in dir(fixtures):
                value = getattr(fixtures, name)
                if isinstance(value, str) and hasattr(test_various_configs, name):
                    patch.setattr(test_various_configs, name, spark_sql(value))
            yield


class TestSnapshotColumnNames(SparkVariousConfigsFixtures, BaseSnapshotColumnNames):
    pass


class TestSnapshotColumnNamesFromDbtProject(
    SparkVariousConfigsFixtures, BaseSnapshotColumnNamesFromDbtProject
):
    pass


class TestSnapshotInvalidColumnNames(SparkVariousConfigsFixtures, BaseSnapshotInvalidColumnNames):
    pass


class TestSnapshotDbtValidToCurrent(SparkVariousConfigsFixtures, BaseSnapshotDbtValidToCurrent):
    def test_valid_to_current(self, project):
        """The base indexes the rows of an unordered select, relying on Postgres returning
        them in heap order. Iceberg returns them in data-file order, which the snapshot's
        MERGE rewrites, so here the rows are ordered by (id, valid_from) and the same rows
        are checked: id 1 and id 10 current at first; after the update id 1 still current,
        id 10's first version closed at its updated_at + 1 hour and its second current."""
        for name in (
            "create_seed_sql",
            "create_snapshot_expected_sql",
            "seed_insert_sql",
            "populate_snapshot_expected_valid_to_current_sql",
        ):
            project.run_sql(spark_sql(getattr(fixtures, name)))
        assert len(run_dbt(["snapshot"])) == 1

        select = (
            "select id, test_scd_id, test_valid_to from {schema}.snapshot_actual"
            " order by id, test_valid_from"
        )
        original_snapshot = project.run_sql(select, fetch="all")
        assert [row[0] for row in original_snapshot] == list(range(1, 21))
        assert original_snapshot[0][2] == datetime.datetime(2099, 12, 31, 0, 0)
        assert original_snapshot[9][2] == datetime.datetime(2099, 12, 31, 0, 0)

        project.run_sql(spark_sql(fixtures.invalidate_sql))
        project.run_sql(spark_sql(fixtures.update_with_current_sql))
        assert len(run_dbt(["snapshot"])) == 1

        updated_snapshot = project.run_sql(select, fetch="all")
        assert updated_snapshot[0][0] == 1
        assert updated_snapshot[0][2] == datetime.datetime(2099, 12, 31, 0, 0)
        # id 10's original row is closed out at its updated_at + 1 hour...
        assert updated_snapshot[9][0] == 10
        assert updated_snapshot[9][2] == datetime.datetime(2016, 8, 20, 16, 44, 49)
        # ...and its updated row is current.
        assert updated_snapshot[10][0] == 10
        assert updated_snapshot[10][2] == datetime.datetime(2099, 12, 31, 0, 0)

        check_relations_equal(project.adapter, ["snapshot_actual", "snapshot_expected"])


class TestSnapshotMultiUniqueKey(SparkVariousConfigsFixtures, BaseSnapshotMultiUniqueKey):
    pass
