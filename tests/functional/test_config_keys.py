"""Config keys nothing reads, through real `dbt` processes: a typo (`unique_ky`) is a warning
naming the node, the key and the nearest known key, before anything is written; the
project flag `s3tables_fail_on_unknown_config_keys` makes it an error that writes nothing.
A project using many legitimate keys (dbt's, for every node type, the adapter's, a
package's declared in var `s3tables_known_config_keys`, one a Python model reads) builds
without any other such warning."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from tests.functional.harness import SCHEMA, Project, write_files

PROJECT = {
    "name": "config_keys",
    "version": "1.0",
    "profile": "faults",
    # Keys a package (dbt-osmosis) and a macro of the project read.
    "vars": {"s3tables_known_config_keys": ["dbt-osmosis", "required_tests"]},
    "models": {
        "config_keys": {
            "+persist_docs": {"relation": True, "columns": True},
            "+docs": {"show": True, "node_color": "#cd7f32"},
            "+meta": {"owner": "data"},
            "+dbt-osmosis": "_{model}.yml",
            "+tags": ["nightly"],
        }
    },
    "seeds": {
        "config_keys": {
            "+column_types": {"amount": "decimal(10,2)"},
            "+delimiter": ",",
            "+quote_columns": False,
            "+tblproperties": {"write.format.default": "parquet"},
        }
    },
    "snapshots": {"config_keys": {"+tags": ["history"]}},
}

MODELS = {
    "typo.sql": "{{ config(materialized='incremental', unique_ky='id') }}\nselect 1 as id",
    "legit_table.sql": """{{ config(
    materialized='table', alias='legit_table', enabled=true, full_refresh=none,
    tags=['daily'], meta={'team': 'core'}, docs={'show': false}, access='public',
    description='all of dbt and the adapter', partition_by=['id'],
    tblproperties={'commit.retry.num-retries': '5'}, audit_before_publish=false,
    pre_hook='select 1', post_hook=['select 2'], sql_header='SET spark.sql.ansi.enabled=false',
    event_time='ts', on_configuration_change='apply', required_tests=1
) }}
select id, cast('2024-01-01' as timestamp) as ts from {{ ref('prices') }}""",
    "legit_incremental.sql": """{{ config(
    materialized='incremental', incremental_strategy='merge', unique_key='id',
    unique_key_is_unique=true, incremental_predicates=['DBT_INTERNAL_DEST.id > 0'],
    merge_update_columns=['amount'], on_schema_change='append_new_columns',
    write_mode='copy_on_write', use_merge='auto'
) }}
select id, amount from {{ ref('prices') }}""",
    "legit_view.sql": "{{ config(materialized='view') }}\nselect id from {{ ref('prices') }}",
    "legit_py.py": """def model(dbt, session):
    dbt.config(materialized="table", my_threshold=3)
    threshold = dbt.config.get("my_threshold")
    return session.createDataFrame([(threshold,)], "threshold int")
""",
    "schema.yml": yaml.safe_dump(
        {
            "models": [
                {
                    "name": "legit_table",
                    "columns": [
                        {
                            "name": "id",
                            "data_tests": [
                                {
                                    "not_null": {
                                        "config": {
                                            "severity": "warn",
                                            "warn_if": ">0",
                                            "error_if": ">10",
                                            "where": "id > 0",
                                            "limit": 10,
                                            "fail_calc": "count(*)",
                                            "store_failures": False,
                                            "meta": {"k": "v"},
                                            "tags": ["t"],
                                        }
                                    }
                                }
                            ],
                        }
                    ],
                }
            ],
            "unit_tests": [
                {
                    "name": "legit_unit",
                    "model": "legit_view",
                    "config": {"tags": ["unit"], "meta": {"k": "v"}},
                    "given": [{"input": "ref('prices')", "rows": [{"id": 7, "amount": 1}]}],
                    "expect": {"rows": [{"id": 7}]},
                }
            ],
        }
    ),
}
SNAPSHOTS = {
    "snapshots.yml": yaml.safe_dump(
        {
            "snapshots": [
                {
                    "name": "prices_history",
                    "relation": "ref('prices')",
                    "config": {
                        "unique_key": "id",
                        "strategy": "check",
                        "check_cols": "all",
                        "hard_deletes": "invalidate",
                        "meta": {"k": "v"},
                    },
                }
            ]
        }
    ),
    # The snapshot block of dbt before 1.9, with its keys of then.
    "legacy_history.sql": f"""{{% snapshot legacy_history %}}
{{{{ config(target_schema='{SCHEMA}', unique_key='id', strategy='check',
    check_cols=['amount'], invalidate_hard_deletes=True) }}}}
select * from {{{{ ref('prices') }}}}
{{% endsnapshot %}}""",
}
SINGULAR_TEST = """{{ config(severity='warn', severty='warn', tags=['x']) }}
select * from {{ ref('legit_table') }} where id < 0"""

UNREAD = re.compile(
    r"(Model|Seed|Snapshot|Test) `([^`]+)`, config `([^`]+)`: neither dbt nor "
    r"s3tables reads this key"
)


def write_project(root: Path, fail_flag: bool) -> Project:
    project = Project(root, root / "warehouse", threads=4)
    settings = dict(PROJECT, flags={"s3tables_fail_on_unknown_config_keys": fail_flag})
    (root / "dbt_project.yml").write_text(yaml.safe_dump(settings))
    files = {f"models/{name}": text for name, text in MODELS.items()}
    files["seeds/prices.csv"] = "id,amount\n1,1.50\n2,20.25\n"
    files |= {f"snapshots/{name}": text for name, text in SNAPSHOTS.items()}
    files["tests/typo_test.sql"] = SINGULAR_TEST
    write_files(root, files)
    return project


def test_unread_config_keys_warn_or_fail_and_legitimate_ones_pass(tmp_path: Path) -> None:
    # The flag on: the typo fails the model, naming the key and the nearest one, and its
    # table is never created.
    project = write_project(tmp_path, fail_flag=True)
    failed = project.run("run", "--select", "typo")
    assert failed.returncode != 0
    assert (
        "Model `typo`, config `unique_ky`: neither dbt nor s3tables reads this key, so it "
        "changes nothing (did you mean `unique_key`?). Fix: correct it" in failed.stdout
    ), failed.stdout[-4000:]
    assert "makes this an error" not in failed.stdout
    assert "typo" not in {r.name for r in project.catalog().list_relations(SCHEMA)}

    # The flag off: one warning per unread key, none for the legitimate ones, and the
    # whole project builds.
    write_project(tmp_path, fail_flag=False)
    built = project.run("build")
    assert built.returncode == 0, built.stdout[-6000:]
    warned = UNREAD.findall(built.stdout)
    assert sorted(warned) == [("Model", "typo", "unique_ky"), ("Test", "typo_test", "severty")], (
        built.stdout[-6000:]
    )
    assert "(did you mean `severity`?)" in built.stdout
    assert "(flag `s3tables_fail_on_unknown_config_keys` makes this an error)" in built.stdout
    assert project.ids("typo") == [1]
