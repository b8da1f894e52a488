"""Two runs of the same incremental models that overlap, in two dbt processes (a scheduler
starting a run before the last one ended): the tables hold what the two runs one after the
other would give, or the later run fails in one sentence naming the model and saying
nothing was written, and the next run completes it (docs/guarantees.md, promise 13).

Every way a run can depend on its own table is here: `upstream_changes()` without and
with a key, an `is_incremental()` filter on `max()` of `{{ this }}`, and
`last_processed_value()`. Each model's query sleeps, so that both processes plan their
runs from the same table state before either commits.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.functional.harness import Project, assert_readable

# Held inside each reader's query: both runs plan before either commits.
PAUSE = "coalesce(reflect('java.lang.Thread', 'sleep', cast(4000 as bigint)), 'x') is not null"

# The upstream: batch n appends ids 3n-2 to 3n.
EVENTS = """
{{ config(materialized='incremental', incremental_strategy='append') }}
{% set batch = var('batch', 1) | int %}
select cast(id as bigint) as id from range({{ batch * 3 - 2 }}, {{ batch * 3 + 1 }}) as r(id)
"""
READERS = {
    "by_changes": f"""
{{{{ config(materialized='incremental', incremental_strategy='append') }}}}
select id from {{{{ upstream_changes(ref('events')) }}}} where {PAUSE}
""",
    "by_keyed_changes": f"""
{{{{ config(materialized='incremental', incremental_strategy='append') }}}}
select id from {{{{ upstream_changes(ref('events'), unique_key='id') }}}} where {PAUSE}
""",
    "by_max": f"""
{{{{ config(materialized='incremental', incremental_strategy='append') }}}}
select id from {{{{ ref('events') }}}} where {PAUSE}
{{% if is_incremental() %}} and id > (select max(id) from {{{{ this }}}}) {{% endif %}}
""",
    "by_watermark": f"""
{{{{ config(materialized='incremental', unique_key='id', watermark_column='id') }}}}
select id from {{{{ ref('events') }}}} where {PAUSE}
{{% if is_incremental() %}} and id > {{{{ last_processed_value() }}}} {{% endif %}}
""",
}
CONFLICT = "nothing was written"


def test_overlapping_runs_write_each_row_once(tmp_path: Path) -> None:
    project = Project(tmp_path / "project", tmp_path / "warehouse")
    project.model("events", EVENTS)
    for name, sql in READERS.items():
        project.model(name, sql)
    first = project.run("run")
    assert first.returncode == 0, first.stdout[-4000:]
    failures = Counter[str]()
    # One overlap after the first build (the property test's concurrent walk overlaps runs
    # again after losers, test_promises.py).
    for batch in (2,):
        done = project.run("run", "-s", "events", "--vars", f"{{batch: {batch}}}")
        assert done.returncode == 0, done.stdout[-4000:]
        jobs = [
            project.start("run", "--exclude", "events", log_path=f"logs-{batch}-{job}")
            for job in (1, 2)
        ]
        outputs = [job.communicate(timeout=600)[0] for job in jobs]
        for job, output in zip(jobs, outputs, strict=True):
            assert_readable(output)
            if job.returncode != 0:
                # The loser says which model and that it wrote nothing; the rest passed.
                for name in READERS:
                    if f"Model `{name}`: its run planned from" in output:
                        failures[name] += 1
                assert CONFLICT in output and "Traceback" not in output, output
    # The next run completes what a loser left.
    settled = project.run("run", "--exclude", "events")
    assert settled.returncode == 0, settled.stdout[-4000:]
    expected = list(range(1, 7))
    for name in READERS:
        ids = sorted(project.ids(f"{name}"))
        assert ids == expected, f"{name}: {ids} (conflicts said: {dict(failures)})"
    # The runs overlapped: a run lost (else this test shows nothing).
    assert sum(failures.values()) >= 1, failures
