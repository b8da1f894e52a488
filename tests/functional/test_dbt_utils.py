"""dbt_utils' relation lookups (get_relations_by_pattern / _by_prefix and their SQL)
answered from the Iceberg catalog once a project sets the dispatch order that
docs/dbt-features.md gives. dbt_utils itself cannot be installed here (packages come from
GitHub), so a local package named `dbt_utils` stands in for it with the same public macros
dispatching the same way; its own implementations fail loudly, as dbt_utils'
information_schema query does on Spark."""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.s3tables.engines.spark_errors import INFORMATION_SCHEMA_FIX


def stand_in_macro(name: str, arguments: str, fallback: str) -> str:
    """A public dbt_utils macro dispatching in the dbt_utils namespace, and its default."""
    names = ", ".join(a.split("=")[0] for a in arguments.split(", "))
    return (
        f"{{% macro {name}({arguments}) %}}\n"
        f"  {{{{ return(adapter.dispatch('{name}', 'dbt_utils')({names})) }}}}\n"
        f"{{% endmacro %}}\n"
        f"{{% macro default__{name}({arguments}) %}}\n  {fallback}\n{{% endmacro %}}\n"
    )


FAIL = '{{ exceptions.raise_compiler_error("stand-in: reached information_schema") }}'
PATTERN_ARGS = "schema_pattern, table_pattern, exclude='', database=target.database"
STAND_IN_MACROS = (
    stand_in_macro("get_relations_by_pattern", PATTERN_ARGS, FAIL)
    + stand_in_macro("get_relations_by_prefix", "schema, prefix, exclude=''", FAIL)
    + stand_in_macro(
        "get_tables_by_pattern_sql",
        PATTERN_ARGS,
        "select table_schema, table_name from {{ database }}.information_schema.tables",
    )
)

LOOKUPS = """
{{ config(materialized='table') }}
{% set by_pattern = dbt_utils.get_relations_by_pattern(target.schema, 'part\\\\_%') %}
{% set by_prefix = dbt_utils.get_relations_by_prefix(target.schema, 'part_', exclude='%_b') %}
{% set none_found = dbt_utils.get_relations_by_pattern(target.schema, 'nothing%') %}
{% if execute %}
  {% set listed = run_query(dbt_utils.get_tables_by_pattern_sql(target.schema, 'PART%')) %}
  {% set empty = run_query(dbt_utils.get_tables_by_pattern_sql(target.schema, 'zzz%')) %}
{% endif %}
select '{{ by_pattern | map(attribute="identifier") | sort | join(",") }}' as by_pattern,
       '{{ by_pattern | map(attribute="type") | sort | join(",") }}' as types,
       '{{ by_prefix | map(attribute="identifier") | sort | join(",") }}' as by_prefix,
       {{ none_found | length }} as none_found,
       '{{ (listed.rows | map(attribute=1) | sort | join(",")) if execute else "" }}' as listed,
       {{ (empty.rows | length) if execute else 0 }} as empty
"""


def install_stand_in(project) -> None:
    """The stand-in `dbt_utils` package, installed into the test project."""
    root = Path(str(project.project_root))
    package = root / "stand_in_dbt_utils"
    (package / "macros").mkdir(parents=True)
    (package / "dbt_project.yml").write_text(
        "name: dbt_utils\nversion: '1.0'\nconfig-version: 2\nmacro-paths: ['macros']\n"
    )
    (package / "macros" / "relations.sql").write_text(STAND_IN_MACROS)
    (root / "packages.yml").write_text("packages:\n  - local: stand_in_dbt_utils\n")
    run_dbt(["deps"])


class TestRelationLookupsThroughDispatch:
    @pytest.fixture(scope="class", autouse=True)
    def stand_in_package(self, project):
        install_stand_in(project)

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "dispatch": [{"macro_namespace": "dbt_utils", "search_order": ["dbt", "dbt_utils"]}]
        }

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "part_a.sql": "{{ config(materialized='table') }} select 1 as id",
            "part_b.sql": "{{ config(materialized='view') }} select 2 as id",
            "partial.sql": "{{ config(materialized='table') }} select 3 as id",
            "lookups.sql": LOOKUPS,
        }

    def test_lookups_come_from_the_catalog(self, project):
        # SQL LIKE: `_` in the prefix `part_` matches any character, so `partial` is in.
        run_dbt(["run", "--exclude", "lookups"])
        run_dbt(["run", "--select", "lookups"])
        row = project.run_sql(f"select * from {project.test_schema}.lookups", fetch="one")
        assert tuple(row) == (
            "part_a,part_b",
            "table,view",
            "part_a,partial",
            0,
            "part_a,part_b,partial",
            0,
        )


class TestWithoutTheDispatchSettingTheErrorNamesIt:
    """dbt_utils' published dispatch setting (its own macros first): its SQL reads
    information_schema, Spark fails, and the error's last line names the fix."""

    @pytest.fixture(scope="class", autouse=True)
    def stand_in_package(self, project):
        install_stand_in(project)

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "listed.sql": (
                "{{ config(materialized='table') }}\n"
                "select * from ({{ dbt_utils.get_tables_by_pattern_sql(target.schema, 'x%') }})"
            )
        }

    def test_the_error_names_the_dispatch_fix(self, project):
        _, output = run_dbt_and_capture(["run"], expect_pass=False)
        assert "search_order: ['dbt', 'dbt_utils']" in output
        assert INFORMATION_SCHEMA_FIX in output
