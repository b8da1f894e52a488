"""Hostile or mistaken input through real dbt commands: seed values that do not fit their
column types, predicates that try to escape their parentheses, backticks in names and
property keys, names too long for the warehouse, a data file deleted behind Iceberg's
back. Each fails with one sentence naming the cause, and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.harness import snapshot_ids, table_rows

SEED = "id,amount,day\n1,10,2024-01-01\n2,20,2024-01-02\n"
SEED_TYPES = """
seeds:
  - name: payments
    config:
      column_types: {id: int, amount: int, day: date}
"""


class TestSeedValuesMustFitTheirTypes:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"payments.csv": SEED, "payments.yml": SEED_TYPES}

    def rows(self, project) -> list[tuple]:
        return table_rows(project, "payments", "id, amount, day", order_by="id")

    @pytest.mark.parametrize(
        ("row", "column", "value", "type_name"),
        [
            ("3,99999999999,2024-01-03", "amount", "99999999999", "int"),
            ("3,abc,2024-01-03", "amount", "abc", "int"),
            ("3,30,2024-02-30", "day", "2024-02-30", "date"),
        ],
    )
    def test_a_misfit_fails_the_seed_naming_it(self, project, row, column, value, type_name):
        csv = Path(project.project_root) / "seeds" / "payments.csv"
        csv.write_text(SEED)
        run_dbt(["seed"])
        table = f"{project.test_schema}.payments"
        before_rows, before = self.rows(project), snapshot_ids(project, table)

        csv.write_text(SEED + row + "\n")
        results, output = run_dbt_and_capture(["seed"], expect_pass=False)
        assert results[0].status == "error"
        assert (
            f"Seed seeds/payments.csv, row 3: value '{value}' of column {column} does not fit "
            f"its type {type_name}. Nothing was loaded."
        ) in output
        # Nothing written: same rows, same snapshots.
        assert self.rows(project) == before_rows and len(before_rows) == 2
        assert snapshot_ids(project, table) == before


INCREMENTAL = """
{{ config(materialized='incremental', unique_key='id',
          incremental_predicates=var('predicates', [])) }}
select id, concat('v', cast(id * {{ var('round', 1) }} as string)) as payload
from range(1, {{ var('rows', 6) }}) as r(id)
"""


class TestPredicatesStayOneExpression:
    @pytest.fixture(scope="class")
    def models(self):
        return {"guarded.sql": INCREMENTAL}

    def test_a_predicate_breaking_out_is_refused_and_nothing_written(self, project):
        run_dbt(["run"])
        table = f"{project.test_schema}.guarded"
        before = snapshot_ids(project, table)
        rows = "select id, payload from {schema}.guarded order by id"
        before_rows = project.run_sql(rows, fetch="all")

        vars_text = '{round: 2, rows: 7, predicates: ["1=1) OR (1=1"]}'
        results, output = run_dbt_and_capture(["run", "--vars", vars_text], expect_pass=False)
        assert results[0].status == "error"
        assert "Model `guarded`, config `incremental_predicates`" in output
        assert "closes a parenthesis it did not open" in output
        assert snapshot_ids(project, table) == before
        assert project.run_sql(rows, fetch="all") == before_rows


class TestBackticksInNamesAndPropertyKeys:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "odd_table.sql": (
                "{{ config(materialized='table', alias='we`ird name', "
                'tblproperties={"k`ey\'x": "v\'al"}) }}\nselect 1 as `a``b`'
            ),
            "odd_incremental.sql": (
                "{{ config(materialized='incremental', alias='in`c', unique_key='id') }}\n"
                "select 1 as id, 'x' as `we``ird`"
            ),
        }

    def test_names_are_quoted_whole(self, project):
        run_dbt(["run"])
        run_dbt(["run"])  # the second run reads and merges into the odd names
        iceberg = project.adapter.iceberg
        names = {r.name for r in iceberg.list_relations(project.test_schema)}
        assert {"we`ird name", "in`c"} <= names
        table = iceberg.load_table(project.test_schema, "we`ird name")
        assert table.properties.get("k`ey'x") == "v'al"
        assert [f.name for f in table.schema().fields] == ["a`b"]
        merged = iceberg.load_table(project.test_schema, "in`c")
        assert [f.name for f in merged.schema().fields] == ["id", "we`ird"]
        assert merged.scan().to_arrow().num_rows == 1


class TestNamesLongerThanAFolderName:
    @pytest.fixture(scope="class")
    def models(self):
        config = f"{{{{ config(materialized='table', alias='{'x' * 256}') }}}}"
        return {"long_name.sql": f"{config}\nselect 1 as id"}

    def test_a_name_too_long_is_refused_before_any_write(self, project):
        results, output = run_dbt_and_capture(["run"], expect_pass=False)
        assert results[0].status == "error"
        assert "Model `long_name`, config `alias`" in output
        assert "is 256 bytes long" in output and "at most 255 bytes" in output
        assert "Mkdirs failed" not in output
        names = {r.name for r in project.adapter.iceberg.list_relations(project.test_schema)}
        assert not any(name.startswith("xxx") for name in names)


class TestMissingDataFile:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "fragile.sql": "{{ config(materialized='table') }}\nselect id from range(10) as r(id)"
        }

    def test_reading_a_table_whose_data_file_was_deleted_says_how_to_recover(self, project):
        run_dbt(["run"])
        table = project.adapter.iceberg.load_table(project.test_schema, "fragile")
        data_file = table.inspect.files().column("file_path").to_pylist()[0]
        Path(data_file.removeprefix("file:").removeprefix("//")).unlink()
        with pytest.raises(Exception) as raised:
            project.run_sql("select sum(id) from {schema}.fragile", fetch="one")
        message = str(raised.value)
        assert "A data file the table references is missing" in message
        assert "rollback_to_snapshot" in message
        assert "\tat org.apache" not in message
