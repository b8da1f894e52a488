"""merge, delete+insert and scd2 give the same rows with MERGE INTO (use_merge: true) and
with the one-statement INSERT OVERWRITE fallback (use_merge: false)."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

from tests.functional.harness import table_rows

SOURCE = """
{% if var('batch', 1) == 1 %}
select * from values (1, 'a', 10), (2, 'b', 20), (3, 'c', 30), (NULL, 'n', 0) as t(id, name, amount)
{% else %}
select * from values (1, 'a', 11), (2, 'b', 20), (4, 'd', 40), (4, 'd', 41), (NULL, 'n', 1)
  as t(id, name, amount)
{% endif %}
"""


def model(strategy: str, use_merge: str, extra: str = "") -> str:
    return (
        f"{{{{ config(materialized='incremental', incremental_strategy='{strategy}', "
        f"unique_key='id', use_merge={use_merge}{extra}) }}}}\n"
        "select * from {{ ref('source_rows') }}"
    )


MODELS = {
    "source_rows.sql": SOURCE,
    "merge_on.sql": model("merge", "true", ", watermark_column='amount'"),
    "merge_off.sql": model("merge", "false", ", watermark_column='amount'"),
    "delins_on.sql": model("delete+insert", "true"),
    "delins_off.sql": model("delete+insert", "false"),
    "scd2_on.sql": model("scd2", "true", ", watermark_column='amount'"),
    "scd2_off.sql": model("scd2", "false", ", watermark_column='amount'"),
}


class TestBothWritePaths:
    @pytest.fixture(scope="class")
    def models(self):
        return MODELS

    def test_paths_agree(self, project):
        run_dbt(["run"])
        run_dbt(["run", "--vars", "{batch: 2}"])

        merged = table_rows(project, "merge_on", "id, name, amount", key=repr)
        assert merged == table_rows(project, "merge_off", "id, name, amount", key=repr)
        assert merged == sorted(
            [(1, "a", 11), (2, "b", 20), (3, "c", 30), (4, "d", 41), (None, "n", 1)], key=repr
        )

        replaced = table_rows(project, "delins_on", "id, name, amount", key=repr)
        assert replaced == table_rows(project, "delins_off", "id, name, amount", key=repr)
        assert replaced == sorted(
            [(1, "a", 11), (2, "b", 20), (3, "c", 30), (4, "d", 40), (4, "d", 41), (None, "n", 1)],
            key=repr,
        )

        history = "id, name, amount, valid_to is null as is_open, valid_from is not null"
        scd2 = table_rows(project, "scd2_on", history, key=repr)
        assert scd2 == table_rows(project, "scd2_off", history, key=repr)
        # Key 1 and the NULL key changed: closed + open rows; 2 unchanged; 3 absent from
        # the source stays open; 4 is new (two incoming rows: the run takes one per key,
        # the greatest `amount`).
        assert scd2 == sorted(
            [
                (1, "a", 10, False, True),
                (1, "a", 11, True, True),
                (2, "b", 20, True, True),
                (3, "c", 30, True, True),
                (4, "d", 41, True, True),
                (None, "n", 0, False, True),
                (None, "n", 1, True, True),
            ],
            key=repr,
        )


class TestBadUseMerge:
    @pytest.fixture(scope="class")
    def models(self):
        return {"source_rows.sql": SOURCE, "bad.sql": model("merge", "'sometimes'")}

    def test_unknown_value_fails_the_first_build_and_lists_valid_ones(self, project):
        # Every key is checked before the first build writes anything: the table is
        # never created with a config its second run would refuse.
        result = run_dbt(["run"], expect_pass=False)
        message = next(r.message for r in result.results if r.node.name == "bad")
        assert "use_merge" in message and "auto, true, false" in message and "`bad`" in message
        views = project.run_sql(f"show views in {project.test_schema}", fetch="all")
        assert "source_rows" in [row[1] for row in views]
        tables = project.run_sql(f"show tables in {project.test_schema}", fetch="all")
        assert "bad" not in [row[1] for row in tables]
