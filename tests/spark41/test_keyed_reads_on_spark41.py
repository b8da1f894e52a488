"""A keyed `upstream_changes()` on Spark 4.1, whose Iceberg runtime reads a staged task set
as a table of its own (not through a read option, as on 3.5): a merge-on-read upstream
that took a MERGE and a DELETE is read file by file (format v2) or, for a format v3 table,
whose staged files that runtime reads without `_file` and `_pos`, as the difference of its
two snapshots, said in the log line; both mirrors equal their upstream, each key with
the change the batch made.

The dbt is `.venv-spark41`'s (tests/spark41/conftest.py).
"""

from __future__ import annotations

from pathlib import Path

from tests.functional.harness import assert_readable, dbt_in, local_output, write_project

# The upstream: a merge per batch, and in batch 2 a DELETE (its post-hook) after the merge.
UPSTREAM = """{{{{ config(materialized='incremental', unique_key='id', format_version={version},
    post_hook="delete from {{{{ this }}}} where id = 3 and {{{{ var('batch') }}}} = 2") }}}}
select * from values
{{% if var('batch') == 1 %}}(1, 'a'), (2, 'b'), (3, 'c'){{% else %}}(2, 'B'), (4, 'd'){{% endif %}}
as t(id, name)
"""
MIRROR = """{{{{ config(materialized='incremental', unique_key='id',
    merge_delete_when="_change_type = 'DELETE'") }}}}
select id, name, _change_type from {{{{ upstream_changes(ref('{upstream}'), unique_key='id') }}}}
"""
# Fails with the rows one holds and the other does not.
SAME_ROWS = """
select * from (select id, name from {{{{ ref('{mirror}') }}}}
  except all select id, name from {{{{ ref('{upstream}') }}}})
union all
select * from (select id, name from {{{{ ref('{upstream}') }}}}
  except all select id, name from {{{{ ref('{mirror}') }}}})
"""
# Fails with each row whose last change is not the one the batch made: a read that took an
# unchanged key for changed would report it UPDATE.
CHANGE_TYPES = """
select * from {{{{ ref('{mirror}') }}}}
{{% if var('batch') == 1 %}}where _change_type <> 'INSERT'
{{% else %}}where not ((id in (1, 4) and _change_type = 'INSERT')
  or (id = 2 and _change_type = 'UPDATE')){{% endif %}}
"""


def test_merge_on_read_changes_reach_the_mirror_on_spark41(
    tmp_path: Path, spark41_dbt: Path
) -> None:
    files = {}
    for version in (2, 3):
        upstream, mirror = f"customers_v{version}", f"mirror_v{version}"
        files[f"models/{upstream}.sql"] = UPSTREAM.format(version=version)
        files[f"models/{mirror}.sql"] = MIRROR.format(upstream=upstream)
        files[f"tests/{mirror}_same_rows.sql"] = SAME_ROWS.format(mirror=mirror, upstream=upstream)
        files[f"tests/{mirror}_change_types.sql"] = CHANGE_TYPES.format(mirror=mirror)
    project = write_project(
        tmp_path / "project",
        "keyed",
        output=local_output(tmp_path / "warehouse", "keyed"),
        profiles_dir=tmp_path,
        files=files,
    )
    outputs = []
    for batch in (1, 2):
        result = dbt_in(
            tmp_path, project, "build", "--vars", f"{{batch: {batch}}}", dbt=spark41_dbt
        )
        output = result.stdout + result.stderr
        assert result.returncode == 0, output
        assert_readable(output)
        outputs.append(output)
    second = outputs[1]
    assert "mirror_v2: local.keyed.customers_v2 read file by file: " in second, second
    assert (
        "mirror_v3: local.keyed.customers_v3 read as the difference of two whole snapshots, "
        "not file by file: Iceberg's Spark 4.1 runtime reads a format v3 table's files "
        "without their `_file` and `_pos` columns" in second
    ), second
    assert "PASS=8" in second, second
