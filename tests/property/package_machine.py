"""The promises' state machine on the dbt Cloud package (`s3tables_spark` on dbt-spark over
a Thrift server): the promises of docs/guarantees.md that the package keeps, checked
after every step of a random sequence, as machine.py checks them on the adapter.

The project is the adapter's machine's, less what the package refuses (`upstream_changes()`,
write-audit-publish, undo, maintenance, custom strategies): upstreams a user changes in
every way dbt lets them (`events` appended, `customers` merged, `dim` rebuilt, the seed
`people` reloaded, `--full-refresh`), and readers of them in every strategy the package
runs and every way a model reads its own table (`max()` of `{{ this }}`,
`last_processed_value()`, none): run as dbt runs them, with `--full-refresh` and
`--empty`. After every step:

1. every table holds exactly what the oracle says: an upstream what the machine gave it;
   a reader what its strategy gives from its upstreams as of its last run that succeeded
   (a failed run changed nothing);
2. nothing dbt prints is a Python traceback or a Java stack.
"""

from __future__ import annotations

import datetime
import itertools
import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from tests.functional.harness import local_catalog
from tests.property.machine import RAW_TRACES, InProcessDbt, Invocation
from tests.property.project import Inputs, Rows, day, events_rows, keyed

IDS = st.integers(min_value=1, max_value=6)
NAMES = st.sampled_from(["ann", "bob", "cy"])
DAYS = st.integers(min_value=1, max_value=3)


def newer_events(inputs: Inputs, held: Rows) -> Rows:
    """What a reader of the events above the greatest id it holds gives: what it held,
    plus those events (all of them while ids only grow; after the upstream is rebuilt with
    lower ids, none)."""
    top = max((row[0] for row in held), default=-1)
    return held + Counter(row for row in events_rows(inputs) if row[0] > top)


def daily_rows(inputs: Inputs, held: Rows) -> Rows:
    """insert_overwrite by day of the events' daily count and sum: the days the events
    hold replaced, the other days kept."""
    days: dict[datetime.date, tuple[int, int]] = {}
    for _, d, v in inputs.events:
        n, s = days.get(day(d), (0, 0))
        days[day(d)] = (n + 1, s + v)
    kept = Counter({row: n for row, n in held.items() if row[0] not in days})
    return kept + Counter((d, n, s) for d, (n, s) in days.items())


@dataclass(frozen=True)
class Reader:
    """A reader: its SQL, the columns compared (and a filter on the rows, for scd2's open
    versions), and what its run gives from the upstreams and the rows it held."""

    sql: str
    columns: tuple[str, ...]
    expected: Callable[[Inputs, Rows], Rows]
    kind: str = "incremental"
    where: str | None = None


EVENTS_SOURCE = "select id, d, v from {{ ref('events') }}"
CUSTOMERS_SOURCE = "select id, name from {{ ref('customers') }}"
READERS: dict[str, Reader] = {
    "events_by_max": Reader(
        "{{ config(materialized='incremental', incremental_strategy='append') }}\n"
        f"{EVENTS_SOURCE}\n"
        "{% if is_incremental() %} where id > (select coalesce(max(id), -1) from {{ this }})"
        " {% endif %}\n",
        ("id", "d", "v"),
        newer_events,
    ),
    "events_by_last_value": Reader(
        "{{ config(materialized='incremental', unique_key='id', watermark_column='id') }}\n"
        f"{EVENTS_SOURCE}\n"
        "{% set last = last_processed_value() %}\n"
        "{% if is_incremental() and last is not none %} where id > {{ last }} {% endif %}\n",
        ("id", "d", "v"),
        newer_events,
    ),
    "events_daily": Reader(
        "{{ config(materialized='incremental', incremental_strategy='insert_overwrite', "
        "partition_by=['d']) }}\n"
        "select d, count(*) as n, sum(v) as s from {{ ref('events') }} group by d\n",
        ("d", "n", "s"),
        daily_rows,
    ),
    # `customers` is only ever merged into (its keys only grow): each mirror is it.
    "customers_mirror": Reader(
        "{{ config(materialized='incremental', unique_key='id') }}\n" + CUSTOMERS_SOURCE,
        ("id", "name"),
        lambda inputs, _: keyed(inputs.customers),
    ),
    "customers_replaced": Reader(
        "{{ config(materialized='incremental', unique_key='id', "
        "incremental_strategy='delete+insert') }}\n" + CUSTOMERS_SOURCE,
        ("id", "name"),
        lambda inputs, _: keyed(inputs.customers),
    ),
    "customers_history": Reader(
        "{{ config(materialized='incremental', unique_key='id', incremental_strategy='scd2') }}\n"
        + CUSTOMERS_SOURCE,
        ("id", "name"),
        lambda inputs, _: keyed(inputs.customers),
        where="valid_to is null",
    ),
    "dim_copy": Reader(
        "{{ config(materialized='table') }}\nselect id, name from {{ ref('dim') }}\n",
        ("id", "name"),
        lambda inputs, _: keyed(inputs.dim),
        kind="table",
    ),
    "people_copy": Reader(
        "{{ config(materialized='table') }}\nselect id, name from {{ ref('people') }}\n",
        ("id", "name"),
        lambda inputs, _: keyed(inputs.people),
        kind="table",
    ),
}


UPSTREAMS = {
    "events": (
        "{{ config(materialized='incremental', incremental_strategy='append') }}\n"
        "{% set rows = var('events_new', []) %}\n"
        "{% if rows %}select id, cast(d as date) as d, v from values\n"
        "{% for r in rows %}({{ r[0] }}, date'2024-01-0{{ r[1] }}', {{ r[2] }})"
        "{{ ',' if not loop.last }}{% endfor %} as t(id, d, v)\n"
        "{% else %}select 1 as id, date'2024-01-01' as d, 1 as v where false{% endif %}\n"
    ),
    "customers": (
        "{{ config(materialized='incremental', unique_key='id') }}\n"
        "{% set rows = var('customer_changes', {}) %}\n"
        "{% if rows %}select id, name from values\n"
        "{% for k, n in rows.items() %}({{ k }}, '{{ n }}'){{ ',' if not loop.last }}"
        "{% endfor %} as t(id, name)\n"
        "{% else %}select 1 as id, 'x' as name where false{% endif %}\n"
    ),
    "dim": (
        "{{ config(materialized='table') }}\n"
        "{% set rows = var('dim_rows', {}) %}\n"
        "{% if rows %}select id, name from values\n"
        "{% for k, n in rows.items() %}({{ k }}, '{{ n }}'){{ ',' if not loop.last }}"
        "{% endfor %} as t(id, name)\n"
        "{% else %}select 1 as id, 'x' as name where false{% endif %}\n"
    ),
}
UPSTREAM_COLUMNS = {"events": ("id", "d", "v"), "customers": ("id", "name"), "dim": ("id", "name")}


def people_csv(people: Mapping[int, str]) -> str:
    return "id,name\n" + "".join(f"{k},{v}\n" for k, v in sorted(people.items()))


class PackagePromisesMachine(RuleBasedStateMachine):
    """Set before a run: the Thrift server's state (`server`), a folder for the projects
    (`workspace`), what puts the package in a project (`install`) and its profile output
    (`output`)."""

    server: dict[str, Any]
    workspace: Path
    install: Callable[[Path], None]
    output: Callable[[dict[str, Any]], dict[str, Any]]
    examples = itertools.count(1)

    def __init__(self) -> None:
        super().__init__()
        self.schema = f"package_promises_{next(self.examples)}"
        self.root = self.workspace / self.schema
        self.inputs = Inputs()
        self.held: dict[str, Rows] = {}
        self.next_id = 1
        self.dbt = InProcessDbt(self.root)

    def invoke(self, *args: str) -> Invocation:
        result = self.dbt.invoke(list(args))
        for trace in RAW_TRACES:
            assert trace not in result.output, result.output
        return result

    def vars_(self, **values: Any) -> str:
        return json.dumps(values)

    def rows(self, table: str, columns: tuple[str, ...], where: str | None = None) -> Rows:
        data = local_catalog(self.server["warehouse"]).load_table(self.schema, table)
        scanned = (data.scan(row_filter=where) if where else data.scan()).to_arrow()
        return Counter(zip(*(scanned.column(c).to_pylist() for c in columns), strict=True))

    @initialize()
    def build_everything(self) -> None:
        models = {f"models/{n}.sql": sql for n, sql in UPSTREAMS.items()}
        models.update({f"models/{n}.sql": r.sql for n, r in READERS.items()})
        models["seeds/people.csv"] = people_csv({})
        for path, text in models.items():
            (self.root / path).parent.mkdir(parents=True, exist_ok=True)
            (self.root / path).write_text(text)
        project = {
            "name": "package_promises",
            "version": "1.0",
            "profile": "package_promises",
            "vars": {"s3tables_rules": False},
            "seeds": {"package_promises": {"+column_types": {"id": "int", "name": "string"}}},
        }
        (self.root / "dbt_project.yml").write_text(yaml.safe_dump(project))
        profile = {"target": "dev", "outputs": {"dev": self.output(self.server)}}
        profile["outputs"]["dev"]["schema"] = self.schema
        (self.root / "profiles.yml").write_text(yaml.safe_dump({"package_promises": profile}))
        self.install(self.root)
        assert self.invoke("seed").success
        assert self.invoke("run").success
        self.held = {name: Counter() for name in READERS}

    @rule(rows=st.lists(st.tuples(DAYS, st.integers(0, 9)), max_size=3), full_refresh=st.booleans())
    def append_events(self, rows: list[tuple[int, int]], full_refresh: bool) -> None:
        new = tuple((self.next_id + i, d, v) for i, (d, v) in enumerate(rows))
        self.next_id += len(rows)
        args = ["run", "-s", "events", "--vars", self.vars_(events_new=[list(r) for r in new])]
        assert self.invoke(*args, *(["--full-refresh"] if full_refresh else [])).success
        events = new if full_refresh else self.inputs.events + new
        self.inputs = replace(self.inputs, events=events)

    @rule(changes=st.dictionaries(IDS, NAMES, max_size=3))
    def change_customers(self, changes: dict[int, str]) -> None:
        args = ["run", "-s", "customers", "--vars", self.vars_(customer_changes=changes)]
        assert self.invoke(*args).success
        self.inputs = replace(self.inputs, customers={**self.inputs.customers, **changes})

    @rule(rows=st.dictionaries(IDS, NAMES, max_size=3))
    def rebuild_dim(self, rows: dict[int, str]) -> None:
        assert self.invoke("run", "-s", "dim", "--vars", self.vars_(dim_rows=rows)).success
        self.inputs = replace(self.inputs, dim=rows)

    @rule(rows=st.dictionaries(IDS, NAMES, max_size=3))
    def reload_people(self, rows: dict[int, str]) -> None:
        (self.root / "seeds" / "people.csv").write_text(people_csv(rows))
        assert self.invoke("seed").success
        self.inputs = replace(self.inputs, people=rows)

    @rule(
        readers=st.sets(st.sampled_from(sorted(READERS)), min_size=1, max_size=4),
        full_refresh=st.booleans(),
        empty=st.booleans(),
    )
    def run_readers(self, readers: set[str], full_refresh: bool, empty: bool) -> None:
        """The readers run as one `dbt run` (with `--full-refresh`, with `--empty`): each
        writes what its strategy gives from the upstreams (or, under `--empty`, no row:
        an incremental reader keeps what it holds, unless it was rebuilt, and a table
        holds none)."""
        args = ["run", "-s", *sorted(readers)]
        args += ["--full-refresh"] if full_refresh else []
        args += ["--empty"] if empty else []
        result = self.invoke(*args)
        assert result.success, result.output
        for name in readers:
            reader = READERS[name]
            rebuilt = full_refresh or reader.kind == "table"
            held = Counter() if rebuilt else self.held[name]
            self.held[name] = held if empty else reader.expected(self.inputs, held)

    @invariant()
    def every_table_holds_what_the_oracle_says(self) -> None:
        if not self.held:
            return
        upstreams = {
            "events": events_rows(self.inputs),
            "customers": keyed(self.inputs.customers),
            "dim": keyed(self.inputs.dim),
        }
        for name, expected in upstreams.items():
            assert self.rows(name, UPSTREAM_COLUMNS[name]) == expected, name
        assert self.rows("people", ("id", "name")) == keyed(self.inputs.people)
        for name, reader in READERS.items():
            actual = self.rows(name, reader.columns, reader.where)
            assert actual == self.held[name], (name, actual, self.held[name])
