"""on_schema_change modes that replace the table (`full_refresh`, `recreate_empty`,
`full_incremental_refresh`), for every incremental strategy at once.

One project holds one model per mode and strategy, all reading the table model `src`
(the current state of an upstream system, driven by `var('phase')`). The incremental
branch of every model (except microbatch) keeps only the rows updated in this phase
(`upd = phase`); the full query returns every row of `src`, including two late rows
(ids 5 and 6, `upd` 0) that no incremental run ever picks up.

Phases (one `dbt run` each, every model of every mode together):
  1. first build: id, label, grp, ts, upd, gone
  2. no schema change: the strategy's normal statement, one commit
  3. the model stops returning `gone`: no replacement, old values stay, new rows NULL
  4. the model adds `extra` (string): the table is replaced as the mode says
  5. `extra` changes type (string to int): replaced again
  6. no schema change: the replaced table takes the strategy's normal statement again

Event times are relative to current_date() (ages 0-2 days), plus one row before the
chunked rebuild's `begin` and one NULL, so the microbatch model has three batches on its
first run and two afterwards (the UTC date must not change while the file runs).
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.harness import (
    column_types,
    query_rows,
    relation,
    run_vars,
    snapshot_rows,
    sort_rows,
    table_properties,
)

PLAN_PROPERTY = "dbt.s3tables.full_incremental_refresh"
CHUNK_CONFIG = "{'event_time': 'ts', 'begin': '2024-01-01', 'chunk': 'day'}"
MICROBATCH_BEGIN = (
    datetime.datetime.now(datetime.timezone.utc).date() - datetime.timedelta(days=2)
).isoformat()

# Versions of the upstream rows: (id, label, grp, age in days (-1: before `begin`,
# NULL: no event time), upd, gone, first phase, last phase).
SRC = """{{ config(materialized='table', event_time='ts') }}
select id, label, grp,
  case when age is null then cast(null as timestamp)
       when age < 0 then timestamp '2023-06-01 00:00:00'
       else cast(date_sub(current_date(), age) as timestamp) end as ts,
  upd, gone
from values
  (1, 'a',  'x', 2,    1, 'g1',  1, 4),
  (2, 'b',  'y', 2,    1, 'g2',  1, 1),
  (2, 'b2', 'y', 1,    2, 'g2b', 2, 3),
  (3, 'c',  'y', 1,    2, 'g3',  2, 9),
  (4, 'd',  'x', 0,    3, 'g4',  3, 9),
  (2, 'b4', 'y', 0,    4, 'g2d', 4, 9),
  (5, 'e',  'z', -1,   0, 'g5',  4, 9),
  (6, 'f',  'z', null, 0, 'g6',  4, 9),
  (7, 'g',  'x', 0,    4, 'g7',  4, 9),
  (1, 'a5', 'x', 0,    5, 'g1e', 5, 9),
  (8, 'h',  'x', 0,    6, 'g8',  6, 9)
  as t(id, label, grp, age, upd, gone, first_phase, last_phase)
where {{ var('phase', 1) | int }} between first_phase and last_phase
"""

SELECT = """
select id, label, grp, ts, upd
{%- if var('phase', 1) | int < 3 %}, gone{% endif %}
{%- if var('phase', 1) | int == 4 %}, concat('e', id) as extra
{%- elif var('phase', 1) | int >= 5 %}, cast(id * 10 as int) as extra{% endif %}
from {{ ref('src') }}
"""

INCREMENTAL_FILTER = """
{% if is_incremental() %} where upd = {{ var('phase', 1) | int }} {% endif %}
"""

STRATEGIES = {
    "m_append": "incremental_strategy='append'",
    "m_merge": "incremental_strategy='merge', unique_key='id'",
    "m_delete_insert": "incremental_strategy='delete+insert', unique_key='id'",
    "m_insert_overwrite": "incremental_strategy='insert_overwrite', partition_by=['grp']",
    "m_scd2": "incremental_strategy='scd2', unique_key='id'",
}
MICROBATCH = (
    f"incremental_strategy='microbatch', event_time='ts', begin='{MICROBATCH_BEGIN}', "
    "batch_size='day'"
)


def model_sql(mode: str, strategy_config: str, incremental_filter: bool = True) -> str:
    config = (
        f"materialized='incremental', on_schema_change='{mode}', "
        f"full_incremental_refresh={CHUNK_CONFIG}, {strategy_config}"
    )
    body = SELECT + (INCREMENTAL_FILTER if incremental_filter else "")
    return "{{ config(" + config + ") }}" + body


# --- expected rows: (id, label, grp, upd, gone[, extra]) plus `valid_to is null` for scd2

P1 = [(1, "a", "x", 1, "g1"), (2, "b", "y", 1, "g2")]
P2_APPEND = [*P1, (2, "b2", "y", 2, "g2b"), (3, "c", "y", 2, "g3")]
P2_UPSERT = [(1, "a", "x", 1, "g1"), (2, "b2", "y", 2, "g2b"), (3, "c", "y", 2, "g3")]
P3_NEW = (4, "d", "x", 3, None)

EXPECTED_P1_TO_P3 = {
    "m_append": [P1, P2_APPEND, [*P2_APPEND, P3_NEW]],
    "m_merge": [P1, P2_UPSERT, [*P2_UPSERT, P3_NEW]],
    "m_delete_insert": [P1, P2_UPSERT, [*P2_UPSERT, P3_NEW]],
    # Phase 3 writes partition x only: (1, 'a') goes, partition y keeps its `gone` values.
    "m_insert_overwrite": [P1, P2_UPSERT, [*P2_UPSERT[1:], P3_NEW]],
    "m_scd2": [
        [(*r, True) for r in P1],
        [
            (1, "a", "x", 1, "g1", True),
            (2, "b", "y", 1, "g2", False),
            (2, "b2", "y", 2, "g2b", True),
            (3, "c", "y", 2, "g3", True),
        ],
        [
            (1, "a", "x", 1, "g1", True),
            (2, "b", "y", 1, "g2", False),
            (2, "b2", "y", 2, "g2b", True),
            (3, "c", "y", 2, "g3", True),
            (*P3_NEW, True),
        ],
    ],
    # Each batch replaces its day: phase 3 rewrites yesterday and today, without `gone`.
    "m_microbatch": [
        P1,
        P2_APPEND,
        [*P1, (2, "b2", "y", 2, None), (3, "c", "y", 2, None), P3_NEW],
    ],
}

# The model's full query in phases 4 and 5 (every row of `src`), and its incremental rows.
FULL = {
    4: [
        (1, "a", "x", 1, None, "e1"),
        (2, "b4", "y", 4, None, "e2"),
        (3, "c", "y", 2, None, "e3"),
        (4, "d", "x", 3, None, "e4"),
        (5, "e", "z", 0, None, "e5"),
        (6, "f", "z", 0, None, "e6"),
        (7, "g", "x", 4, None, "e7"),
    ],
    5: [
        (1, "a5", "x", 5, None, 10),
        (2, "b4", "y", 4, None, 20),
        (3, "c", "y", 2, None, 30),
        (4, "d", "x", 3, None, 40),
        (5, "e", "z", 0, None, 50),
        (6, "f", "z", 0, None, 60),
        (7, "g", "x", 4, None, 70),
    ],
}
INCREMENTAL = {
    4: [(2, "b4", "y", 4, None, "e2"), (7, "g", "x", 4, None, "e7")],
    5: [(1, "a5", "x", 5, None, 10)],
}
# microbatch + recreate_empty: the run's batches (yesterday and today), nothing older.
MICROBATCH_RECREATED = {
    4: [r for r in FULL[4] if r[0] in (2, 3, 4, 7)],
    5: [r for r in FULL[5] if r[0] in (1, 2, 3, 4, 7)],
}

BASE_COLUMNS = ["id", "label", "grp", "ts", "upd"]
# (snapshot_id, operation, added-records) of each snapshot.
SNAPSHOT_COLUMNS = "snapshot_id, operation, summary['added-records']"


# --- helpers -------------------------------------------------------------------------


def partition_columns(project, table: str) -> list[str]:
    rows = [tuple(r) for r in project.run_sql(f"describe {table}", fetch="all")]
    names = [r[0] for r in rows]
    if "# Partition Information" not in names:
        return []
    start = names.index("# Partition Information") + 1
    return [n for n in names[start:] if n and not n.startswith("#")]


def run_phase(phase: int, names: list[str]) -> None:
    results = run_dbt(["run", *run_vars(phase=phase)], expect_pass=None)
    outcome = {r.node.name: (str(r.status), r.message) for r in results}
    failed = {name: o for name, o in outcome.items() if o[0] != "success"}
    assert not failed, (phase, failed)
    assert set(outcome) == {"src", *names}


def model_query(project, name: str, with_extra: bool) -> str:
    table = relation(project, name)
    extra = ", extra" if with_extra else ""
    scd2 = ", valid_to is null" if name.endswith("m_scd2") else ""
    return f"select id, label, grp, upd, gone{extra}{scd2} from {table}"


def current_rows(project, names: list[str], with_extra: bool) -> dict[str, list[tuple]]:
    return {name: query_rows(project, model_query(project, name, with_extra)) for name in names}


def expected_columns(name: str, extra_type: str | None) -> list[tuple[str, str]]:
    types = {"id": "int", "label": "string", "grp": "string", "ts": "timestamp", "upd": "int"}
    columns = [(c, types[c]) for c in BASE_COLUMNS]
    scd2 = (
        [("valid_from", "timestamp"), ("valid_to", "timestamp")] if name.endswith("m_scd2") else []
    )
    if extra_type is None:
        return [*columns, ("gone", "string"), *scd2]
    # A replacement writes the model's columns, then every column it stopped returning.
    return [*columns, ("extra", extra_type), *scd2, ("gone", "string")]


# --- the three modes, one project ------------------------------------------------------


class ReplacingMode:
    """One mode: its models (one per strategy, named `<prefix><strategy>`) and what each
    phase must leave in their tables; subclasses give the mode and its expectations."""

    mode: str = ""
    prefix: str = ""
    with_microbatch = False

    @property
    def strategies(self) -> list[str]:
        return [*STRATEGIES, *(["m_microbatch"] if self.with_microbatch else [])]

    @property
    def names(self) -> list[str]:
        return [self.prefix + strategy for strategy in self.strategies]

    def models(self) -> dict[str, str]:
        return {
            f"{self.prefix}{strategy}.sql": (
                model_sql(self.mode, MICROBATCH, incremental_filter=False)
                if strategy == "m_microbatch"
                else model_sql(self.mode, STRATEGIES[strategy])
            )
            for strategy in self.strategies
        }

    def by_model(self, values: dict[str, Any]) -> dict[str, Any]:
        """`values` keyed by strategy, keyed by this mode's model names instead."""
        return {self.prefix + strategy: value for strategy, value in values.items()}

    def expected_replaced(self, strategy: str, phase: int) -> list[tuple]:
        raise NotImplementedError

    def new_snapshots(self, per_table: int) -> dict[str, int]:
        """New snapshots per table: `per_table` for each strategy; microbatch commits once
        per batch, and every run after the first has two (yesterday and today)."""
        counts = dict.fromkeys(STRATEGIES, per_table)
        return self.by_model({**counts, "m_microbatch": 2} if self.with_microbatch else counts)

    def new_snapshot_counts(self, before, after) -> dict[str, int]:
        return {name: len(after[name]) - len(before[name]) for name in self.names}

    def expected_new_snapshots(self, phase: int) -> int:
        """New snapshots of a non-microbatch table on the replacing run of `phase`."""
        raise NotImplementedError

    def check_phase(self, project, phase: int, before, after) -> None:
        """What the run of `phase` left in this mode's tables (`before`, `after`: each
        table's snapshots before and after it)."""
        names, mode = self.names, self.mode
        tables = {name: relation(project, name) for name in names}
        if phase <= 3:  # normal incremental runs; no replacement
            expected = {s: EXPECTED_P1_TO_P3[s][phase - 1] for s in self.strategies}
            extra_type = None
        elif phase <= 5:  # a new column, then a type change: the table is replaced
            expected = {s: self.expected_replaced(s, phase) for s in self.strategies}
            extra_type = {4: "string", 5: "int"}[phase]
        else:  # no schema change: the replaced table takes the normal statement again
            expected = {s: after_phase_6(s, self.expected_replaced(s, 5)) for s in self.strategies}
            extra_type = "int"
        assert current_rows(project, names, with_extra=extra_type is not None) == self.by_model(
            {strategy: sort_rows(rows) for strategy, rows in expected.items()}
        ), (mode, phase)
        assert {name: column_types(project, t) for name, t in tables.items()} == {
            name: expected_columns(name, extra_type) for name in names
        }, (mode, phase)
        if phase == 1:
            return
        # The snapshot history from before the run is kept.
        assert {name: after[name][: len(before[name])] for name in names} == {
            name: before[name] for name in names
        }, (mode, phase)
        if phase in (4, 5):
            assert self.new_snapshot_counts(before, after) == self.new_snapshots(
                self.expected_new_snapshots(phase)
            ), (mode, phase)
            self.check_replacement_commits(phase, before, after)
            # The replaced table is still partitioned as configured.
            assert partition_columns(project, tables[self.prefix + "m_insert_overwrite"]) == [
                "grp"
            ], mode
            assert {
                name: PLAN_PROPERTY in table_properties(project, t) for name, t in tables.items()
            } == dict.fromkeys(names, False), (mode, phase)
        else:  # one statement, so one commit
            assert self.new_snapshot_counts(before, after) == self.new_snapshots(1), (mode, phase)

    def check_replacement_commits(self, phase, before, after) -> None:
        """Extra checks on the commits of a replacing run."""

    def committed(self, before, after, strategy: str) -> list[tuple]:
        """The snapshots the run committed to `strategy`'s table."""
        name = self.prefix + strategy
        return after[name][len(before[name]) :]

    def added_records(self, before, after, strategies, skip: int = 0) -> dict[str, list]:
        """Per strategy, the added-records of each snapshot the run committed (after the
        first `skip`)."""
        return {s: [r[2] for r in self.committed(before, after, s)[skip:]] for s in strategies}


def after_phase_6(strategy: str, rows: list[tuple]) -> list[tuple]:
    """Phase 6 brings one new row, in partition x."""
    new = (8, "h", "x", 6, None, 80)
    if strategy == "m_insert_overwrite":
        return [*(r for r in rows if r[2] != "x"), new]
    if strategy == "m_scd2":
        return [*rows, (*new, True)]
    return [*rows, new]


def scd2_open(strategy: str, rows: list[tuple]) -> list[tuple]:
    return [(*r, True) for r in rows] if strategy == "m_scd2" else rows


class FullRefresh(ReplacingMode):
    """Replaced from the model's full query: late rows included, history kept."""

    mode = "full_refresh"
    prefix = "fr_"

    def expected_replaced(self, strategy, phase):
        return scd2_open(strategy, FULL[phase])

    def expected_new_snapshots(self, phase):
        return 1

    def check_replacement_commits(self, phase, before, after):
        # One commit holding every row of the full query.
        added = self.added_records(before, after, STRATEGIES)
        assert added == dict.fromkeys(STRATEGIES, [str(len(FULL[phase]))]), (self.mode, phase)


class RecreateEmpty(ReplacingMode):
    """Replaced with this run's incremental rows only; works with microbatch."""

    mode = "recreate_empty"
    prefix = "re_"
    with_microbatch = True

    def expected_replaced(self, strategy, phase):
        if strategy == "m_microbatch":
            return MICROBATCH_RECREATED[phase]
        return scd2_open(strategy, INCREMENTAL[phase])

    def expected_new_snapshots(self, phase):
        return 1

    def check_replacement_commits(self, phase, before, after):
        # Rows per commit: the incremental rows, in the replacing snapshot. microbatch:
        # the first batch (yesterday: id 3) replaces the table, today's batch merges.
        added = self.added_records(before, after, self.strategies)
        today = {4: "3", 5: "4"}[phase]
        assert added == {
            **{strategy: [str(len(INCREMENTAL[phase]))] for strategy in STRATEGIES},
            "m_microbatch": ["1", today],
        }, (self.mode, phase)


class FullIncrementalRefresh(ReplacingMode):
    """Same rows as full_refresh, one commit for the (empty) replacement and one per day
    holding rows; rows before `begin` and NULL event times go in the first chunk."""

    mode = "full_incremental_refresh"
    prefix = "fir_"
    # Rows per chunk. Phase 4: days -2 (id 1, plus ids 5 and 6), -1 (id 3), 0 (2, 4, 7).
    # Phase 5: id 1 moved to day 0: days -1 (id 3, plus 5 and 6) and 0 (1, 2, 4, 7).
    CHUNKS = {4: ["3", "1", "3"], 5: ["3", "4"]}

    def expected_replaced(self, strategy, phase):
        return scd2_open(strategy, FULL[phase])

    def expected_new_snapshots(self, phase):
        return 1 + len(self.CHUNKS[phase])

    def check_replacement_commits(self, phase, before, after):
        added = self.added_records(before, after, STRATEGIES, skip=1)
        assert added == dict.fromkeys(STRATEGIES, self.CHUNKS[phase]), (self.mode, phase)
        replaced = {
            strategy: self.committed(before, after, strategy)[0][2] in (None, "0")
            for strategy in STRATEGIES
        }
        assert replaced == dict.fromkeys(STRATEGIES, True), (self.mode, phase)


MODES = (FullRefresh(), RecreateEmpty(), FullIncrementalRefresh())


class TestReplacingModes:
    """Phases 1-6 for the three modes at once: each phase is one `dbt run` of every model."""

    @pytest.fixture(scope="class")
    def models(self):
        models = {"src.sql": SRC}
        for mode in MODES:
            models.update(mode.models())
        return models

    def test_phases(self, project):
        names = [name for mode in MODES for name in mode.names]
        tables = {name: relation(project, name) for name in names}
        before: dict[str, list] = {}
        for phase in range(1, 7):
            run_phase(phase, names)
            after = {
                name: snapshot_rows(project, t, SNAPSHOT_COLUMNS) for name, t in tables.items()
            }
            for mode in MODES:
                mode.check_phase(project, phase, before, after)
            before = after


# --- microbatch cannot rebuild its whole history; unknown modes ------------------------


class TestModesRefusedOnFirstRun:
    @pytest.fixture(scope="class")
    @classmethod
    def models(cls):
        return {
            "src.sql": SRC,
            "mb_full_refresh.sql": model_sql("full_refresh", MICROBATCH, incremental_filter=False),
            "mb_full_incremental_refresh.sql": model_sql(
                "full_incremental_refresh", MICROBATCH, incremental_filter=False
            ),
            "merge_unknown_mode.sql": model_sql("rebuild", STRATEGIES["m_merge"]),
        }

    def test_first_run_fails_and_creates_nothing(self, project):
        results, log = run_dbt_and_capture(["run"], expect_pass=False)
        outcome = {r.node.name: r for r in results}
        assert {name: str(r.status) for name, r in outcome.items()} == {
            "src": "success",
            "mb_full_refresh": "error",
            "mb_full_incremental_refresh": "error",
            "merge_unknown_mode": "error",
        }
        for name in ("mb_full_refresh", "mb_full_incremental_refresh"):
            # dbt reports a microbatch model's error per batch, in the log: the first
            # batch fails and the others are skipped.
            assert outcome[name].batch_results.successful == [], name
            assert outcome[name].batch_results.failed, name
            lines = [line for line in log.splitlines() if f"Model `{name}`" in line]
            assert lines, name
            assert all("microbatch" in line and "recreate_empty" in line for line in lines), lines
        message = outcome["merge_unknown_mode"].message
        assert "rebuild" in message
        modes = (
            "ignore, fail, append_new_columns, sync_all_columns, full_refresh, "
            "recreate_empty, full_incremental_refresh"
        )
        assert modes in message, message
        tables = {
            r[1] for r in project.run_sql(f"show tables in {project.test_schema}", fetch="all")
        }
        assert tables == {"src"}
