"""dbt-tests-adapter's simple_seed suite.

Its fixtures create the expected table with Postgres DDL (`TEXT`, `TIMESTAMP WITHOUT TIME
ZONE`, double-quoted names, several statements in one string); `SparkExpectedTable`
translates that DDL to Spark SQL and runs it statement by statement.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from dbt.tests.adapter.simple_seed import fixtures, seeds
from dbt.tests.adapter.simple_seed.test_seed import (
    BaseBasicSeedTests,
    BaseSeedConfigFullRefreshOff,
    BaseSeedConfigFullRefreshOn,
    BaseSeedCustomSchema,
    BaseSeedParsing,
    BaseSeedSpecificFormats,
    BaseSeedWithEmptyDelimiter,
    BaseSeedWithUniqueDelimiter,
    BaseSeedWithWrongDelimiter,
    BaseSimpleSeedEnabledViaConfig,
    BaseSimpleSeedWithBOM,
    BaseTestEmptySeed,
)
from dbt.tests.adapter.simple_seed.test_seed_type_override import BaseSimpleSeedColumnOverride
from dbt.tests.util import get_connection, run_dbt


def spark_statements(postgres_sql: str) -> list[str]:
    create, insert = [s.strip() for s in postgres_sql.split(";") if s.strip()]
    create = (
        create.replace("TIMESTAMP WITHOUT TIME ZONE", "TIMESTAMP")
        .replace("INTEGER", "BIGINT")
        .replace("TEXT", "STRING")
        + " USING iceberg"
    )
    # Spark refuses to store a string literal into a TIMESTAMP column: insert from an
    # inline table and cast the timestamp explicitly.
    head, values = insert.split("VALUES", 1)
    target, columns = head.split("(", 1)
    names = columns.replace('"', "").replace(")", "").strip()
    selected = names.replace("birthday", "CAST(birthday AS TIMESTAMP)")
    insert = f"{target.strip()} SELECT {selected} FROM VALUES {values.strip()} AS v({names})"
    return [create, insert]


class SparkExpectedTable:
    @pytest.fixture(scope="class", autouse=True)
    def setUp(self, project):
        for statement in spark_statements(seeds.seeds__expected_sql):
            project.run_sql(statement)


class TestBasicSeedTests(SparkExpectedTable, BaseBasicSeedTests):
    def test_simple_seed_full_refresh_flag(self, project):
        """Postgres drops the seed with CASCADE on --full-refresh, taking the downstream
        view with it. Here the seed is replaced atomically by `CREATE OR REPLACE TABLE`,
        so readers never see it missing and the downstream view keeps working."""
        self._build_relations_for_test(project)
        self._check_relation_end_state(
            run_result=run_dbt(["seed", "--full-refresh"]), project=project, exists=True
        )


class TestSeedConfigFullRefreshOn(SparkExpectedTable, BaseSeedConfigFullRefreshOn):
    def test_simple_seed_full_refresh_config(self, project):
        """As above: no CASCADE drop, the downstream relation survives a full refresh."""
        self._build_relations_for_test(project)
        self._check_relation_end_state(run_result=run_dbt(["seed"]), project=project, exists=True)


class TestSeedConfigFullRefreshOff(SparkExpectedTable, BaseSeedConfigFullRefreshOff):
    pass


class TestSeedCustomSchema(SparkExpectedTable, BaseSeedCustomSchema):
    pass


class TestSeedWithUniqueDelimiter(SparkExpectedTable, BaseSeedWithUniqueDelimiter):
    pass


class TestSeedWithWrongDelimiter(SparkExpectedTable, BaseSeedWithWrongDelimiter):
    pass


class TestSeedWithEmptyDelimiter(SparkExpectedTable, BaseSeedWithEmptyDelimiter):
    pass


class TestSimpleSeedEnabledViaConfig(BaseSimpleSeedEnabledViaConfig):
    @pytest.fixture(scope="function")
    def clear_test_schema(self, project):
        """The base fixture runs `drop schema ... cascade` in Spark, which Iceberg's JDBC
        catalog refuses for a non-empty namespace; the adapter's drop_schema empties the
        namespace first (tables purged), which is what the fixture means."""
        yield
        with get_connection(project.adapter):
            project.adapter.drop_schema(project.adapter.Relation.create(schema=project.test_schema))


class TestSeedParsing(SparkExpectedTable, BaseSeedParsing):
    pass


class TestSimpleSeedWithBOM(SparkExpectedTable, BaseSimpleSeedWithBOM):
    @pytest.fixture(scope="class", autouse=True)
    def setUp(self, project):
        """The base fixture copies seed_bom.csv from beside the test module; it ships
        beside dbt-tests-adapter's module, so copy it from there."""
        for statement in spark_statements(seeds.seeds__expected_sql):
            project.run_sql(statement)
        shutil.copyfile(
            Path(seeds.__file__).parent / "seed_bom.csv",
            project.project_root / "seeds" / "seed_bom.csv",
        )


class TestSeedSpecificFormats(BaseSeedSpecificFormats):
    pass


class TestEmptySeed(BaseTestEmptySeed):
    pass


class TestSimpleSeedColumnOverride(BaseSimpleSeedColumnOverride):
    """Spark spells Postgres' `text` as `string`, `integer` as `bigint` (the type seeds
    infer for whole numbers) and `timestamp without time zone` as `timestamp`."""

    @pytest.fixture(scope="class")
    def models(self):
        properties = (
            fixtures.properties__schema_yml.replace("type: text", "type: string")
            .replace("type: integer", "type: bigint")
            .replace("type: timestamp without time zone", "type: timestamp")
        )
        return {"schema.yml": properties}

    @staticmethod
    def seed_enabled_types():
        return {"seed_id": "string", "birthday": "date"}

    @staticmethod
    def seed_tricky_types():
        return {
            "seed_id_str": "string",
            "looks_like_a_bool": "string",
            "looks_like_a_date": "string",
        }
