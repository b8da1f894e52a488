"""The dbt project the promises' state machine drives (machine.py): a few upstreams a user
changes in every way dbt lets them, and readers of them in every strategy, reading
style and model kind, each with what a full rebuild of it gives (`expected`).

Upstreams, each fed by a var the machine passes on every command:

- `events` (incremental append; `events_new`): rows `[id, day, v]`, ids always new;
- `customers` (incremental merge on `id`, `merge_delete_when: deleted`;
  `customer_changes`): upserts and deletes;
- `dim` (a `table` model, `CREATE OR REPLACE` on every build; `dim_rows`);
- the seed `people` (its CSV rewritten, then `dbt seed`).

Readers (`READERS`): a copy and a daily aggregate of `events` through
`upstream_changes()` (append, insert_overwrite), a copy by a custom strategy (a project
macro, dbt's `get_incremental_<name>_sql` hook), a watermark copy through `ref()`
(append) and a microbatch copy; keyed mirrors of `customers`, `dim` and `people` through
`upstream_changes(..., unique_key=)` (merge, delete+insert); a `table` model over
`upstream_changes()`; a `table` model over `dim` and `customers` with
`skip_when_unchanged`; a watermark merge through `last_processed_value()`; a model whose
kind and strategy change over its life (`life`: append, merge, table). `events_copy` is
audited (`audit_before_publish`), gated by a test
that fails on `fail_audit` and errors while the table `audit_probe` is missing, and by a
test with two parents that fails on `fail_two_parent`; the snapshot
`events_copy_history` of it is built with it. Refused
readers (tag `refused`): upstream_changes() in an ephemeral model, a view and a
microbatch model.

Faults, by var: `fail_model` (a reader whose query fails: it reads a table that does not
exist), `hook_model` (a reader whose pre-hook commits on its own table, changing no row,
before its write), `post_fail_model` (a reader whose post-hook fails after its data
commit); `pause_ms` holds every reader's query that long (two runs overlap), but the
`skip_when_unchanged` one's (a sleep is a function whose rows its check cannot know).
"""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.functional.harness import TEST_SPARK_SQL_SETTINGS

PROJECT = "promises"
# Days the events fall on: 2024-01-01 ... 2024-01-05 (microbatch backfills them all).
DAYS = 5
EVENT_TIME_WINDOW = ("--event-time-start", "2024-01-01", "--event-time-end", "2024-01-06")

Row = tuple[Any, ...]
Rows = Counter[Row]


@dataclass(frozen=True)
class Inputs:
    """What the upstreams hold, as the machine's model of them (the oracle)."""

    events: tuple[tuple[int, int, int], ...] = ()  # (id, day, v)
    customers: Mapping[int, str] = field(default_factory=dict)
    dim: Mapping[int, str] = field(default_factory=dict)
    people: Mapping[int, str] = field(default_factory=dict)


def day(n: int) -> datetime.date:
    return datetime.date(2024, 1, n)


def timestamp(n: int) -> datetime.datetime:
    """`events.ts` of day n: Spark's TIMESTAMP is Iceberg's timestamptz, an instant, which
    the adapter's session writes in UTC and PyIceberg reads back as UTC."""
    return datetime.datetime(2024, 1, n, 10, 0, 0, tzinfo=datetime.timezone.utc)


def events_rows(inputs: Inputs) -> Rows:
    return Counter((i, day(d), v) for i, d, v in inputs.events)


def daily_rows(inputs: Inputs) -> Rows:
    days: dict[datetime.date, tuple[int, int]] = {}
    for _, d, v in inputs.events:
        n, s = days.get(day(d), (0, 0))
        days[day(d)] = (n + 1, s + v)
    return Counter((d, n, s) for d, (n, s) in days.items())


def microbatch_rows(inputs: Inputs) -> Rows:
    return Counter((i, timestamp(d), v) for i, d, v in inputs.events)


def keyed(values: Mapping[int, str]) -> Rows:
    return Counter(values.items())


def by_watermark(inputs: Inputs, held: Rows) -> Rows:
    """An append of the events whose id is above every id the table holds: the events,
    while ids only grow; after the upstream is replaced, what the table held stays."""
    top = max((row[0] for row in held), default=-1)
    return held + Counter(row for row in events_rows(inputs) if row[0] > top)


@dataclass(frozen=True)
class Reader:
    """A reader model: its SQL, the columns the machine compares, what a full rebuild of
    it gives from the upstreams, its upstream, and how it reads."""

    sql: str
    columns: tuple[str, ...]
    # What a full rebuild gives from the upstreams (and the rows the table holds before
    # the run: a watermark model keeps what it has).
    expected: Callable[[Inputs, Rows], Rows]
    upstream: str
    # `changes` (upstream_changes() without a key), `keyed` (with one), `ref`, `whole`
    # (a table model: the whole upstream on every build).
    reading: str
    audited: bool = False
    # Its kind by the machine's `life` var, where that changes it: `incremental`, `table`
    # or `microbatch` (None: `kind`).
    kinds: Mapping[str, str] | None = None
    kind: str = "incremental"

    def kind_in(self, life: str) -> str:
        return (self.kinds or {}).get(life, self.kind)

    def reading_in(self, life: str) -> str:
        """How it reads in that life: a `table` reads its upstream whole."""
        return "whole" if self.kind_in(life) == "table" else self.reading


FAULT = "{{ injected_fault() }}"

READERS: dict[str, Reader] = {
    "events_copy": Reader(
        "{{ config(materialized='incremental', incremental_strategy='append', "
        "audit_before_publish=true) }}\n"
        f"select id, d, v from {{{{ upstream_changes(ref('events')) }}}} where {FAULT}\n",
        ("id", "d", "v"),
        lambda inputs, _: events_rows(inputs),
        "events",
        "changes",
        audited=True,
    ),
    # A custom strategy (dbt's get_incremental_<name>_sql hook) that declares it replaces
    # nothing: its upstream_changes() read is exact, as append's.
    "events_custom": Reader(
        "{{ config(materialized='incremental', incremental_strategy='append_rows', "
        "incremental_strategy_traits={'replaces': 'nothing', 'skipped_when_empty': true}) }}\n"
        f"select id, d, v from {{{{ upstream_changes(ref('events')) }}}} where {FAULT}\n",
        ("id", "d", "v"),
        lambda inputs, _: events_rows(inputs),
        "events",
        "changes",
    ),
    "events_daily": Reader(
        "{{ config(materialized='incremental', incremental_strategy='insert_overwrite', "
        "partition_by=['d']) }}\n"
        "select d, count(*) as n, cast(sum(v) as bigint) as s "
        f"from {{{{ upstream_changes(ref('events')) }}}} where {FAULT} group by d\n",
        ("d", "n", "s"),
        lambda inputs, _: daily_rows(inputs),
        "events",
        "changes",
    ),
    "events_by_watermark": Reader(
        "{{ config(materialized='incremental', incremental_strategy='append') }}\n"
        f"select id, d, v from {{{{ ref('events') }}}} where {FAULT}\n"
        "{% if is_incremental() %}and id > (select coalesce(max(id), -1) from {{ this }})"
        "{% endif %}\n",
        ("id", "d", "v"),
        by_watermark,
        "events",
        "ref",
    ),
    "events_by_batch": Reader(
        "{{ config(materialized='incremental', incremental_strategy='microbatch', "
        "event_time='ts', begin='2024-01-01', batch_size='day') }}\n"
        f"select id, ts, v from {{{{ ref('events') }}}} where {FAULT}\n",
        ("id", "ts", "v"),
        lambda inputs, _: microbatch_rows(inputs),
        "events",
        "ref",
        kind="microbatch",
    ),
    # A watermark merge whose filter reads last_processed_value(): ids only grow, so it
    # holds the events, until the upstream is replaced (what it merged stays).
    "events_by_last_value": Reader(
        "{{ config(materialized='incremental', unique_key='id', watermark_column='id') }}\n"
        f"select id, d, v from {{{{ ref('events') }}}} where {FAULT}\n"
        "{% set last = last_processed_value() %}\n"
        "{% if is_incremental() and last is not none %}and id > {{ last }}{% endif %}\n",
        ("id", "d", "v"),
        by_watermark,
        "events",
        "ref",
    ),
    # A model whose kind and strategy change over its life (`life`: an incremental
    # append, an incremental merge, a `table`), reading upstream_changes() throughout.
    "events_life": Reader(
        "{% set life = var('life', 'append') %}\n"
        "{% if life == 'table' %}{{ config(materialized='table') }}\n"
        "{% elif life == 'merge' %}"
        "{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}\n"
        "{% else %}"
        "{{ config(materialized='incremental', incremental_strategy='append') }}\n"
        "{% endif %}\n"
        f"select id, d, v from {{{{ upstream_changes(ref('events')) }}}} where {FAULT}\n",
        ("id", "d", "v"),
        lambda inputs, _: events_rows(inputs),
        "events",
        "changes",
        kinds={"table": "table"},
    ),
    "customers_mirror": Reader(
        "{{ config(materialized='incremental', unique_key='id', "
        "merge_delete_when=\"_change_type = 'DELETE'\") }}\n"
        "select id, name, _change_type "
        f"from {{{{ upstream_changes(ref('customers'), unique_key='id') }}}} where {FAULT}\n",
        ("id", "name"),
        lambda inputs, _: keyed(inputs.customers),
        "customers",
        "keyed",
    ),
    "customers_table": Reader(
        "{{ config(materialized='table') }}\n"
        f"select id, name from {{{{ upstream_changes(ref('customers')) }}}} where {FAULT}\n",
        ("id", "name"),
        lambda inputs, _: keyed(inputs.customers),
        "customers",
        "whole",
        kind="table",
    ),
    "dim_mirror": Reader(
        "{{ config(materialized='incremental', unique_key='id', "
        "merge_delete_when=\"_change_type = 'DELETE'\") }}\n"
        "select id, name, _change_type "
        f"from {{{{ upstream_changes(ref('dim'), unique_key='id') }}}} where {FAULT}\n",
        ("id", "name"),
        lambda inputs, _: keyed(inputs.dim),
        "dim",
        "keyed",
    ),
    # Not rebuilt while dim's and customers' snapshots and its SQL stay as its data was
    # built from (`skip_when_unchanged`): a skip must leave what a rebuild gives. On a
    # Spark server a plain table (the check needs the query's plan, in process only).
    "dim_and_customers": Reader(
        "{{ config(materialized='table', "
        "skip_when_unchanged=target.get('method', 'session') == 'session') }}\n"
        f"select id, name from {{{{ ref('dim') }}}} where {FAULT}\n"
        "union all select id + 1000, name from {{ ref('customers') }}\n",
        ("id", "name"),
        lambda inputs, _: (
            keyed(inputs.dim) + Counter((i + 1000, n) for i, n in inputs.customers.items())
        ),
        "dim",
        "ref",
        kind="table",
    ),
    "people_mirror": Reader(
        "{{ config(materialized='incremental', unique_key='id', "
        "merge_delete_when=\"_change_type = 'DELETE'\") }}\n"
        "select id, name, _change_type "
        f"from {{{{ upstream_changes(ref('people'), unique_key='id') }}}} where {FAULT}\n",
        ("id", "name"),
        lambda inputs, _: keyed(inputs.people),
        "people",
        "keyed",
    ),
}
UPSTREAMS = ("events", "customers", "dim", "people")
UPSTREAM_COLUMNS = {
    "events": ("id", "d", "v"),
    "customers": ("id", "name"),
    "dim": ("id", "name"),
    "people": ("id", "name"),
}


def upstream_rows(name: str, inputs: Inputs) -> Rows:
    if name == "events":
        return events_rows(inputs)
    values: Mapping[int, str] = getattr(inputs, name)
    return keyed(values)


# Readers no read of upstream changes can be exact in: refused on every run.
REFUSED = {
    "ephemeral_changes": "{{ config(materialized='ephemeral', tags=['refused']) }}\n"
    "select id from {{ upstream_changes(ref('events')) }}\n",
    "reads_ephemeral": "{{ config(materialized='incremental', tags=['refused']) }}\n"
    "select id from {{ ref('ephemeral_changes') }}\n",
    "view_changes": "{{ config(materialized='view', tags=['refused']) }}\n"
    "select id from {{ upstream_changes(ref('events')) }}\n",
    "microbatch_changes": "{{ config(materialized='incremental', tags=['refused'], "
    "incremental_strategy='microbatch', event_time='ts', begin='2024-01-01', "
    "batch_size='day') }}\n"
    "select id, ts from {{ upstream_changes(ref('events')) }}\n",
}
# What each refused reader's message says (dbt names an ephemeral's error at its own name).
REFUSAL_SENTENCES = {
    "ephemeral_changes": "Model `ephemeral_changes` (materialized `ephemeral`): upstream_changes()",
    "view_changes": "Model `view_changes` (materialized `view`): upstream_changes()",
    "microbatch_changes": "Model `microbatch_changes`: microbatch replaces each batch's",
}

UPSTREAM_MODELS = {
    "events": """{{ config(materialized='incremental', incremental_strategy='append',
                  event_time='ts') }}
{%- set rows = var('events_new', []) %}
select cast(id as int) as id, cast(d as date) as d, cast(ts as timestamp) as ts,
       cast(v as int) as v
from values
{%- for r in rows or [[0, 1, 0]] %}
  ({{ r[0] }}, date'2024-01-0{{ r[1] }}', timestamp'2024-01-0{{ r[1] }} 10:00:00',
   {{ r[2] }}){{ ',' if not loop.last }}
{%- endfor %} as t(id, d, ts, v)
{% if not rows %}where false{% endif %}
""",
    "customers": """{{ config(materialized='incremental', unique_key='id',
                  merge_delete_when='deleted') }}
{%- set rows = var('customer_changes', []) %}
select cast(id as int) as id, cast(name as string) as name, deleted
from values
{%- for r in rows or [[0, 'none', false]] %}
  ({{ r[0] }}, '{{ r[1] }}', {{ 'true' if r[2] else 'false' }}){{ ',' if not loop.last }}
{%- endfor %} as t(id, name, deleted)
{% if not rows %}where false{% endif %}
""",
    "dim": """{{ config(materialized='table') }}
{%- set rows = var('dim_rows', []) %}
select cast(id as int) as id, cast(name as string) as name
from values
{%- for r in rows or [[0, 'none']] %}
  ({{ r[0] }}, '{{ r[1] }}'){{ ',' if not loop.last }}
{%- endfor %} as t(id, name)
{% if not rows %}where false{% endif %}
""",
}

MACROS = """
{#-- When `fail_model` names the reader, its query reads a table that does not exist:
     the model fails after its pre-hooks and its reads' planning, before any write, with
     rows or without (a row-level raise_error would not fire on no rows). --#}
{% macro injected_fault() -%}
  {%- if var("fail_model", "") == this.identifier -%}
    exists (select 1 from {{ target.schema }}.injected_failure_of_{{ this.identifier }})
  {%- elif var("pause_ms", 0) and not config.get("skip_when_unchanged") -%}
    coalesce(reflect('java.lang.Thread', 'sleep', cast({{ var("pause_ms") }} as bigint)), 'x')
      is not null
  {%- else -%}
    true
  {%- endif -%}
{%- endmacro %}

{#-- When `post_fail_model` names the reader: a post-hook that fails, after its data
     commit. --#}
{% macro failing_post_hook() -%}
  {%- if var('post_fail_model', '') == this.identifier -%}
    select * from {{ target.schema }}.injected_post_hook_failure
  {%- endif -%}
{%- endmacro %}

{#-- events_custom's strategy: the rows of its temp relation appended. --#}
{% macro get_incremental_append_rows_sql(arg_dict) -%}
  insert into {{ arg_dict['target_relation'] }} select * from {{ arg_dict['temp_relation'] }}
{%- endmacro %}

{#-- When `hook_model` names the reader: a pre-hook that commits (an empty append) on its
     own table before its write. --#}
{% macro committing_hook() -%}
  {%- if var('hook_model', '') == this.identifier and is_incremental() -%}
    insert into {{ this }} select * from {{ this }} where false
  {%- endif -%}
{%- endmacro %}
"""

AUDIT_TEST = """
-- Gates events_copy's publish: fails on `fail_audit`, errors while audit_probe is missing.
select rows_audited, probes
from (select count(*) as rows_audited from {{ ref('events_copy') }}) as audited
cross join (select count(*) as probes from {{ target.schema }}.audit_probe) as probe
where {{ 'true' if var('fail_audit', false) else 'false' }}
"""


# A second test of events_copy, with two parents (dbt does not make events_copy's
# children wait for it): fails on `fail_two_parent`, gating the audit all the same.
TWO_PARENT_TEST = """
select c.id from {{ ref('events_copy') }} as c
left join {{ ref('events') }} as e on c.id = e.id
where e.id is null or {{ 'true' if var('fail_two_parent', false) else 'false' }}
"""
# A snapshot of the audited reader, built in the same `dbt build`: it must never record
# rows an audit has not published.
SNAPSHOT = """
{% snapshot events_copy_history %}
{{ config(unique_key='id', strategy='check', check_cols='all') }}
select id, d, v from {{ ref('events_copy') }}
{% endsnapshot %}
"""
SNAPSHOT_NAME = "events_copy_history"


def people_csv(people: Mapping[int, str]) -> str:
    return "id,name\n" + "".join(f"{i},{n}\n" for i, n in sorted(people.items()))


def write_project(
    root: Path, warehouse: Path, schema: str, server: Mapping[str, object] | None = None
) -> None:
    """The project in `root`, its profile on the embedded catalog in `warehouse`, every
    table in namespace `schema`: dbt's own Spark (`local[2]`), or the Spark server that
    `server` names (its `method`, `host`, `port`: the server's catalog is `warehouse`'s)."""
    for folder in ("models/upstreams", "models/readers", "models/refused", "macros", "seeds"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    project = {
        "name": PROJECT,
        "version": "1.0",
        "profile": PROJECT,
        "config-version": 2,
        "models": {
            PROJECT: {
                "readers": {
                    "+pre-hook": "{{ committing_hook() }}",
                    "+post-hook": "{{ failing_post_hook() }}",
                }
            }
        },
        "seeds": {PROJECT: {"people": {"+column_types": {"id": "int", "name": "string"}}}},
    }
    (root / "dbt_project.yml").write_text(yaml.safe_dump(project))
    output: dict[str, object] = {
        "type": "s3tables",
        "schema": schema,
        "warehouse": str(warehouse),
        "threads": 2,
        "progress_interval_seconds": 0,
    }
    # A test server starts with the tests' Spark settings (tests/conftest.py).
    output.update(server or {"master": "local[2]", "spark_conf": dict(TEST_SPARK_SQL_SETTINGS)})
    profiles = {PROJECT: {"target": "dev", "outputs": {"dev": output}}}
    (root / "profiles.yml").write_text(yaml.safe_dump(profiles))
    for name, sql in UPSTREAM_MODELS.items():
        (root / "models" / "upstreams" / f"{name}.sql").write_text(sql)
    for name, reader in READERS.items():
        (root / "models" / "readers" / f"{name}.sql").write_text(reader.sql)
    for name, sql in REFUSED.items():
        (root / "models" / "refused" / f"{name}.sql").write_text(sql)
    (root / "macros" / "faults.sql").write_text(MACROS)
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "events_copy_audit.sql").write_text(AUDIT_TEST)
    (root / "tests" / "events_copy_in_events.sql").write_text(TWO_PARENT_TEST)
    (root / "snapshots").mkdir(exist_ok=True)
    (root / "snapshots" / f"{SNAPSHOT_NAME}.sql").write_text(SNAPSHOT)
    (root / "seeds" / "people.csv").write_text(people_csv({}))
