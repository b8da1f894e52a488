"""`on_schema_change: full_incremental_refresh`: the chunk plan, progress read back from
the table, the chunk windows and their SQL, and the on_schema_change modes that replace
the table (pure functions, no Spark)."""

from __future__ import annotations

import datetime
import itertools
import json
import re

import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import FloatType, IntegerType, NestedField, StringType
from pyspark.sql import types as spark

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.incremental.chunked_refresh import (
    ChunkPlan,
    ChunkWindow,
    Progress,
    chunk_plan,
    chunk_sql,
    chunk_starts_sql,
    chunk_windows,
    next_chunk_start,
    progress_sql,
    remaining_rows,
)
from dbt.adapters.s3tables.incremental.schema_evolution import (
    ON_SCHEMA_CHANGE_MODES,
    REPLACING_MODES,
    SchemaDiff,
    check_mode,
    check_mode_for_strategy,
    plan_evolution,
    replaces_table,
    schema_diff,
)
from dbt.adapters.s3tables.incremental.strategies import STRATEGIES

FMT = "%Y-%m-%d %H:%M:%S"


def dt(text):
    return datetime.datetime.strptime(text, FMT if " " in text else "%Y-%m-%d")


def config(**raw):
    return {"full_incremental_refresh": raw}


# --- ChunkPlan -------------------------------------------------------------------------


def test_plan_property_is_sorted_json() -> None:
    plan = ChunkPlan(event_time="ts", chunk="week", begin="2024-01-01 00:00:00")
    assert plan.to_property() == (
        '{"begin": "2024-01-01 00:00:00", "chunk": "week", "event_time": "ts"}'
    )
    assert ChunkPlan("ts", "day").to_property() == (
        '{"begin": null, "chunk": "day", "event_time": "ts"}'
    )


@pytest.mark.parametrize(
    "plan",
    [
        ChunkPlan("ts", "day"),
        ChunkPlan("Event Time", "month", "2023-12-31 23:59:59"),
        ChunkPlan("we`ird", "week", "2024-01-01 00:00:00"),
    ],
)
def test_plan_property_round_trip(plan) -> None:
    restored = ChunkPlan.from_property(plan.to_property())
    assert restored == plan
    assert json.loads(plan.to_property())["event_time"] == plan.event_time


@pytest.mark.parametrize(("chunk", "unit"), [("day", "DAY"), ("week", "WEEK"), ("month", "MONTH")])
def test_spark_unit(chunk, unit) -> None:
    assert ChunkPlan("ts", chunk).spark_unit == unit


# --- chunk_plan ------------------------------------------------------------------------


def test_chunk_plan_defaults_to_day_without_begin() -> None:
    assert chunk_plan("orders", config(event_time="ts")) == ChunkPlan("ts", "day", None)


@pytest.mark.parametrize(("given", "expected"), [("Week", "week"), ("MONTH", "month")])
def test_chunk_plan_lowercases_chunk(given, expected) -> None:
    assert chunk_plan("orders", config(event_time="ts", chunk=given)).chunk == expected


@pytest.mark.parametrize(
    ("begin", "expected"),
    [
        ("2024-01-01", "2024-01-01 00:00:00"),
        ("2024-03-05 13:45:07", "2024-03-05 13:45:07"),
        ("  2024-02-29  ", "2024-02-29 00:00:00"),
        # YAML reads an unquoted date as a date / datetime object
        (datetime.date(2024, 1, 1), "2024-01-01 00:00:00"),
        (datetime.datetime(2024, 1, 1, 6, 30), "2024-01-01 06:30:00"),
    ],
)
def test_chunk_plan_normalizes_begin(begin, expected) -> None:
    plan = chunk_plan("orders", config(event_time="ts", begin=begin, chunk="month"))
    assert plan == ChunkPlan("ts", "month", expected)


@pytest.mark.parametrize(
    ("model_config", "fragment"),
    [
        ({}, "needs this config as a mapping"),
        ({"full_incremental_refresh": None}, "needs this config as a mapping"),
        ({"full_incremental_refresh": "ts"}, "needs this config as a mapping"),
        ({"full_incremental_refresh": ["ts"]}, "needs this config as a mapping"),
        (config(event_time="ts", start="2024-01-01", end="x"), "unknown key(s) end, start"),
        # a misspelt key is reported as such, not as a missing event_time
        (config(evnt_time="ts"), "unknown key(s) evnt_time"),
        (config(), "`event_time` is missing"),
        (config(event_time=""), "`event_time` is missing"),
        (config(event_time=42), "`event_time` is missing"),
        (config(event_time="ts", chunk="hour"), "unknown chunk `hour`"),
        (config(event_time="ts", chunk="year"), "unknown chunk `year`"),
        (config(event_time="ts", chunk=None), "unknown chunk `None`"),
        (config(event_time="ts", begin="yesterday"), "`begin` is `yesterday`, not a date"),
        (config(event_time="ts", begin="2024-13-01"), "`begin` is `2024-13-01`, not a date"),
        (config(event_time="ts", begin="2024-02-30"), "`begin` is `2024-02-30`, not a date"),
        (
            config(event_time="ts", begin="2024-01-01T00:00:00"),
            "`begin` is `2024-01-01T00:00:00`, not a date",
        ),
        (config(event_time="ts", begin=""), "`begin` is ``, not a date"),
    ],
)
def test_chunk_plan_errors_name_model_key_and_fix(model_config, fragment) -> None:
    with pytest.raises(ModelConfigError) as error:
        chunk_plan("orders", model_config)
    message = str(error.value)
    assert "Model `orders`, config `full_incremental_refresh`" in message
    assert fragment in message
    fix = message.split("Fix: ", 1)
    assert len(fix) == 2 and fix[1].strip()


@pytest.mark.parametrize(
    ("model_config", "fix"),
    [
        ({}, "{event_time: <column>, begin: '2024-01-01', chunk: day}"),
        (config(event_time="ts", other=1), "use only event_time, begin and chunk"),
        (config(event_time="ts", chunk="hour"), "use one of: day, week, month"),
        (config(event_time="ts", begin="soon"), "YYYY-MM-DD (or YYYY-MM-DD HH:MM:SS)"),
    ],
)
def test_chunk_plan_error_fixes(model_config, fix) -> None:
    with pytest.raises(ModelConfigError) as error:
        chunk_plan("orders", model_config)
    assert fix in str(error.value).split("Fix: ", 1)[1]


# --- next_chunk_start ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "chunk", "expected"),
    [
        ("2024-01-01", "day", "2024-01-02"),
        ("2024-02-28", "day", "2024-02-29"),
        ("2023-02-28", "day", "2023-03-01"),
        ("2024-12-31", "day", "2025-01-01"),
        ("2024-01-01", "week", "2024-01-08"),
        ("2024-12-30", "week", "2025-01-06"),
        ("2024-02-26", "week", "2024-03-04"),
        ("2024-01-01", "month", "2024-02-01"),
        ("2024-11-01", "month", "2024-12-01"),
        ("2024-12-01", "month", "2025-01-01"),
        ("1999-12-01", "month", "2000-01-01"),
    ],
)
def test_next_chunk_start(start, chunk, expected) -> None:
    assert next_chunk_start(dt(start), chunk) == dt(expected)


def test_next_month_start_for_every_month() -> None:
    for year, month in itertools.product((2023, 2024), range(1, 13)):
        following = next_chunk_start(datetime.datetime(year, month, 1), "month")
        expected_year, expected_month = (year + 1, 1) if month == 12 else (year, month + 1)
        assert following == datetime.datetime(expected_year, expected_month, 1)


# --- Progress --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row_count", "last_chunk_start", "chunk", "expected"),
    [
        (0, None, "day", Progress(started=False)),
        (0, "2024-01-01 00:00:00", "day", Progress(started=False)),
        (3, None, "month", Progress(started=True, resume_from=None)),
        (3, "2024-01-31 00:00:00", "day", Progress(True, "2024-02-01 00:00:00")),
        (3, "2024-12-31 00:00:00", "day", Progress(True, "2025-01-01 00:00:00")),
        (3, "2024-12-30 00:00:00", "week", Progress(True, "2025-01-06 00:00:00")),
        (3, "2024-02-01 00:00:00", "month", Progress(True, "2024-03-01 00:00:00")),
        (3, "2024-12-01 00:00:00", "month", Progress(True, "2025-01-01 00:00:00")),
    ],
)
def test_progress_from_table(row_count, last_chunk_start, chunk, expected) -> None:
    assert Progress.from_table(row_count, last_chunk_start, chunk) == expected


def test_remaining_rows() -> None:
    assert remaining_rows("ts", Progress(started=False)) is None
    assert remaining_rows("ts", Progress(started=True)) == "`ts` IS NOT NULL"
    assert (
        remaining_rows("ts", Progress(True, "2024-02-01 00:00:00"))
        == "`ts` >= TIMESTAMP '2024-02-01 00:00:00'"
    )
    assert remaining_rows("we`ird", Progress(started=True)) == "`we``ird` IS NOT NULL"


def test_progress_sql_uses_the_table_column_name() -> None:
    plan = ChunkPlan("event_time", "month")
    assert progress_sql("cat.db.orders", "Event_Time", plan) == (
        "SELECT COUNT(*), CAST(date_trunc('MONTH', MAX(`Event_Time`)) AS STRING) FROM cat.db.orders"
    )


# --- chunk_starts_sql ------------------------------------------------------------------

SOURCE = "select * from src"


def test_chunk_starts_sql_fresh_without_begin() -> None:
    sql = chunk_starts_sql(SOURCE, ChunkPlan("ts", "day"), Progress(started=False))
    assert sql == (
        "SELECT DISTINCT CAST(date_trunc('DAY', `ts`) AS STRING) AS chunk_start "
        "FROM (\nselect * from src\n) AS dbt_chunk_source WHERE `ts` IS NOT NULL "
        "ORDER BY chunk_start"
    )


def test_chunk_starts_sql_resumed_with_begin() -> None:
    plan = ChunkPlan("ts", "week", "2024-01-10 00:00:00")
    sql = chunk_starts_sql(SOURCE, plan, Progress(True, "2024-02-05 00:00:00"))
    assert sql == (
        "SELECT DISTINCT CAST(date_trunc('WEEK', `ts`) AS STRING) AS chunk_start "
        "FROM (\nselect * from src\n) AS dbt_chunk_source WHERE `ts` IS NOT NULL "
        "AND `ts` >= TIMESTAMP '2024-01-10 00:00:00' "
        "AND `ts` >= TIMESTAMP '2024-02-05 00:00:00' ORDER BY chunk_start"
    )


def test_chunk_starts_sql_quotes_the_column() -> None:
    sql = chunk_starts_sql(SOURCE, ChunkPlan("a`b", "month"), Progress(started=False))
    assert "date_trunc('MONTH', `a``b`)" in sql
    assert "WHERE `a``b` IS NOT NULL ORDER BY" in sql


# --- ChunkWindow -----------------------------------------------------------------------

A = "2024-01-01 00:00:00"
B = "2024-01-02 00:00:00"
C = "2024-01-03 00:00:00"


@pytest.mark.parametrize(
    ("window", "predicate"),
    [
        (ChunkWindow(None, None), "`ts` IS NOT NULL"),
        (ChunkWindow(None, None, with_nulls=True), None),
        (ChunkWindow(A, None), f"`ts` >= TIMESTAMP '{A}'"),
        (ChunkWindow(None, B), f"`ts` < TIMESTAMP '{B}'"),
        (ChunkWindow(A, B), f"`ts` >= TIMESTAMP '{A}' AND `ts` < TIMESTAMP '{B}'"),
        (ChunkWindow(None, B, with_nulls=True), f"(`ts` < TIMESTAMP '{B}' OR `ts` IS NULL)"),
        (
            ChunkWindow(A, B, with_nulls=True),
            f"(`ts` >= TIMESTAMP '{A}' AND `ts` < TIMESTAMP '{B}' OR `ts` IS NULL)",
        ),
    ],
)
def test_window_predicate(window, predicate) -> None:
    assert window.predicate("ts") == predicate


@pytest.mark.parametrize(
    ("window", "text"),
    [
        (ChunkWindow(None, B, with_nulls=True), f"[start, {B})"),
        (ChunkWindow(A, B), f"[{A}, {B})"),
        (ChunkWindow(B, None), f"[{B}, end)"),
        (ChunkWindow(None, None, with_nulls=True), "[start, end)"),
    ],
)
def test_window_describe(window, text) -> None:
    assert window.describe() == text


def test_chunk_sql() -> None:
    assert chunk_sql(SOURCE, "ts", ChunkWindow(A, B)) == (
        "SELECT * FROM (\nselect * from src\n) AS dbt_chunk_source "
        f"WHERE `ts` >= TIMESTAMP '{A}' AND `ts` < TIMESTAMP '{B}'"
    )
    assert chunk_sql(SOURCE, "ts", ChunkWindow(None, None, with_nulls=True)) == (
        "SELECT * FROM (\nselect * from src\n) AS dbt_chunk_source"
    )


# --- chunk_windows ---------------------------------------------------------------------


def test_fresh_windows_sort_starts_and_open_both_ends() -> None:
    assert chunk_windows([C, A, B], Progress(started=False)) == [
        ChunkWindow(None, B, with_nulls=True),
        ChunkWindow(B, C),
        ChunkWindow(C, None),
    ]


def test_fresh_single_start_is_one_all_rows_window() -> None:
    assert chunk_windows([A], Progress(started=False)) == [ChunkWindow(None, None, with_nulls=True)]


def test_fresh_without_starts_still_writes_every_row() -> None:
    assert chunk_windows([], Progress(started=False)) == [ChunkWindow(None, None, with_nulls=True)]


@pytest.mark.parametrize("progress", [Progress(True), Progress(True, B)])
def test_resumed_without_starts_writes_nothing(progress) -> None:
    assert chunk_windows([], progress) == []


def test_resumed_windows_start_at_resume_point_without_nulls() -> None:
    assert chunk_windows([C, B], Progress(True, B)) == [ChunkWindow(B, C), ChunkWindow(C, None)]
    assert chunk_windows([B, C], Progress(True)) == [ChunkWindow(None, C), ChunkWindow(C, None)]


# Property checks: the windows, interpreted in Python, against sample event times.


def in_window(window, value):
    """Lower bound inclusive, upper exclusive, NULL only where with_nulls."""
    if value is None:
        return window.with_nulls
    if window.lower is not None and value < dt(window.lower):
        return False
    return window.upper is None or value < dt(window.upper)


_COMPARISON = re.compile(r"`ts` (>=|<) TIMESTAMP '([^']*)'")


def sql_matches(predicate, value):
    """Evaluate a generated predicate on `ts` with SQL NULL semantics (no predicate: all)."""
    if predicate is None:
        return True
    expression = _COMPARISON.sub(
        lambda m: f"(v is not None and v {m.group(1)} dt('{m.group(2)}'))", predicate
    )
    expression = expression.replace("`ts` IS NOT NULL", "(v is not None)")
    expression = expression.replace("`ts` IS NULL", "(v is None)")
    expression = expression.replace(" AND ", " and ").replace(" OR ", " or ")
    assert "`" not in expression and "TIMESTAMP" not in expression, expression
    return eval(expression, {"dt": dt, "v": value})


def truncate(value, chunk):
    """Spark's date_trunc: midnight, the Monday of the week, the 1st of the month."""
    day = value.replace(hour=0, minute=0, second=0, microsecond=0)
    if chunk == "week":
        return day - datetime.timedelta(days=day.weekday())
    if chunk == "month":
        return day.replace(day=1)
    return day


def remaining(values, progress):
    """The rows `remaining_rows` selects, evaluated through its SQL."""
    predicate = remaining_rows("ts", progress)
    return [v for v in values if sql_matches(predicate, v)]


def chunk_starts(values, plan, progress):
    """What `chunk_starts_sql` returns for these event times."""
    begin = dt(plan.begin) if plan.begin else None
    starts = {
        truncate(v, plan.chunk).strftime(FMT)
        for v in remaining(values, progress)
        if v is not None and (begin is None or v >= begin)
    }
    return sorted(starts)


def table_progress(rows, plan):
    """What `progress_sql` reads back from a table holding these event times."""
    present = [v for v in rows if v is not None]
    last = truncate(max(present), plan.chunk).strftime(FMT) if present else None
    return Progress.from_table(len(rows), last, plan.chunk)


def check_cover(windows, values):
    """Every value lands in exactly one window, by bounds and by the SQL predicate."""
    for value in values:
        hits = [w for w in windows if in_window(w, value)]
        assert len(hits) == 1, (value, windows)
        assert [w for w in windows if sql_matches(w.predicate("ts"), value)] == hits


def check_consecutive(windows):
    for before, after in itertools.pairwise(windows):
        assert before.upper is not None and before.upper == after.lower
        assert dt(before.upper) > (dt(before.lower) if before.lower else datetime.datetime.min)
    assert windows[-1].upper is None


SAMPLES = [
    None,
    datetime.datetime(2023, 6, 15, 8, 0),
    None,
    datetime.datetime(2023, 12, 31, 23, 59, 59),
    datetime.datetime(2024, 1, 1, 0, 0),
    datetime.datetime(2024, 1, 9, 23, 59, 59),
    datetime.datetime(2024, 1, 10, 0, 0),
    datetime.datetime(2024, 1, 10, 11, 59, 59),
    datetime.datetime(2024, 1, 10, 12, 0),
    datetime.datetime(2024, 1, 14, 23, 59, 59),
    datetime.datetime(2024, 1, 15, 0, 0),
    datetime.datetime(2024, 1, 31, 18, 30),
    datetime.datetime(2024, 2, 1, 0, 0),
    datetime.datetime(2024, 2, 29, 12, 0),
    datetime.datetime(2024, 2, 29, 12, 0),
    datetime.datetime(2024, 3, 4, 0, 0),
    datetime.datetime(2024, 12, 31, 23, 59, 59),
    datetime.datetime(2025, 1, 1, 0, 0, 1),
    datetime.datetime(2025, 1, 6, 0, 0),
]

PLANS = [
    ChunkPlan("ts", chunk, begin)
    for chunk in ("day", "week", "month")
    for begin in (None, "2024-01-10 00:00:00", "2024-01-10 12:00:00", "2030-01-01 00:00:00")
]


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: f"{p.chunk}-{p.begin}")
def test_fresh_windows_cover_every_row_once(plan) -> None:
    fresh = Progress(started=False)
    starts = chunk_starts(SAMPLES, plan, fresh)
    windows = chunk_windows(starts, fresh)
    check_cover(windows, SAMPLES)
    check_consecutive(windows)
    assert windows[0].lower is None and windows[0].with_nulls
    assert not any(w.with_nulls for w in windows[1:])
    # one window per chunk period holding rows: no empty commit
    assert len(windows) == max(len(starts), 1)
    assert all(any(in_window(w, v) for v in SAMPLES) for w in windows)


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: f"{p.chunk}-{p.begin}")
def test_resuming_after_each_chunk_writes_exactly_the_rest(plan) -> None:
    fresh = Progress(started=False)
    windows = chunk_windows(chunk_starts(SAMPLES, plan, fresh), fresh)
    for committed_chunks in range(1, len(windows) + 1):
        committed = [v for v in SAMPLES if any(in_window(w, v) for w in windows[:committed_chunks])]
        progress = table_progress(committed, plan)
        assert progress.started
        rest = remaining(SAMPLES, progress)
        assert len(committed) + len(rest) == len(SAMPLES)
        assert None not in rest
        resumed = chunk_windows(chunk_starts(SAMPLES, plan, progress), progress)
        if committed_chunks == len(windows):
            assert resumed == [] and rest == []
            continue
        assert resumed[0].lower == progress.resume_from
        assert not any(w.with_nulls for w in resumed)
        check_consecutive(resumed)
        check_cover(resumed, rest)
        assert not any(in_window(w, v) for w in resumed for v in committed)
        # the resumed windows are the fresh windows not yet committed
        assert resumed[1:] == windows[committed_chunks + 1 :]


def test_resume_when_only_null_event_times_are_committed() -> None:
    plan = ChunkPlan("ts", "day", "2024-01-10 00:00:00")
    progress = table_progress([None, None], plan)
    assert progress == Progress(started=True, resume_from=None)
    rest = remaining(SAMPLES, progress)
    assert rest == [v for v in SAMPLES if v is not None]
    resumed = chunk_windows(chunk_starts(SAMPLES, plan, progress), progress)
    assert resumed[0].lower is None and not resumed[0].with_nulls
    check_consecutive(resumed)
    check_cover(resumed, rest)
    assert not any(in_window(w, None) for w in resumed)


# --- on_schema_change modes --------------------------------------------------------------

ALL_MODES = (
    "ignore",
    "fail",
    "append_new_columns",
    "sync_all_columns",
    "full_refresh",
    "recreate_empty",
    "full_incremental_refresh",
)
OTHER_STRATEGIES = ("append", "merge", "delete+insert", "insert_overwrite", "scd2")


def test_modes_constants() -> None:
    assert ON_SCHEMA_CHANGE_MODES == ALL_MODES
    assert REPLACING_MODES == ("full_refresh", "recreate_empty", "full_incremental_refresh")


@pytest.mark.parametrize("mode", ALL_MODES)
def test_check_mode_accepts_every_mode(mode) -> None:
    assert check_mode("orders", mode) == mode


@pytest.mark.parametrize("mode", [None, ""])
def test_check_mode_defaults_to_ignore(mode) -> None:
    assert check_mode("orders", mode) == "ignore"


@pytest.mark.parametrize("mode", ["full_incremental", "FULL_REFRESH", "drop_columns"])
def test_check_mode_refuses_unknown_and_lists_valid_modes(mode) -> None:
    with pytest.raises(ModelConfigError) as error:
        check_mode("orders", mode)
    message = str(error.value)
    assert f"Model `orders`, config `on_schema_change`: unknown value `{mode}`" in message
    assert "use one of: " + ", ".join(ALL_MODES) in message


@pytest.mark.parametrize("mode", ["full_refresh", "full_incremental_refresh"])
def test_microbatch_refuses_whole_history_rebuilds(mode) -> None:
    with pytest.raises(ModelConfigError) as error:
        check_mode_for_strategy("events", mode, STRATEGIES["microbatch"])
    message = str(error.value)
    assert "Model `events`, config `on_schema_change`" in message
    assert f"`{mode}`" in message and "microbatch" in message
    fix = message.split("Fix: ", 1)[1]
    assert "recreate_empty" in fix and "--full-refresh" in fix


@pytest.mark.parametrize(
    "mode", ["ignore", "fail", "append_new_columns", "sync_all_columns", "recreate_empty"]
)
def test_microbatch_accepts_other_modes(mode) -> None:
    assert check_mode_for_strategy("events", mode, STRATEGIES["microbatch"]) == mode


def test_microbatch_default_and_unknown_mode() -> None:
    assert check_mode_for_strategy("events", None, STRATEGIES["microbatch"]) == "ignore"
    with pytest.raises(ModelConfigError, match="unknown value `nope`"):
        check_mode_for_strategy("events", "nope", STRATEGIES["microbatch"])


@pytest.mark.parametrize(("strategy", "mode"), list(itertools.product(OTHER_STRATEGIES, ALL_MODES)))
def test_other_strategies_accept_every_mode(strategy, mode) -> None:
    assert check_mode_for_strategy("orders", mode, STRATEGIES[strategy]) == mode


def test_other_strategies_refuse_unknown_modes() -> None:
    with pytest.raises(ModelConfigError, match="unknown value `nope`"):
        check_mode_for_strategy("orders", "nope", STRATEGIES["merge"])


TABLE = Schema(
    NestedField(1, "id", IntegerType(), required=False),
    NestedField(2, "amount", FloatType(), required=False),
    NestedField(3, "old", StringType(), required=False),
)


def model(*fields):
    return spark.StructType([spark.StructField(name, kind) for name, kind in fields])


ID = ("ID", spark.IntegerType())
AMOUNT = ("amount", spark.FloatType())
OLD = ("old", spark.StringType())

DIFFS = {
    "same": schema_diff(TABLE, model(ID, AMOUNT, OLD)),
    "removed_only": schema_diff(TABLE, model(ID, AMOUNT)),
    "added": schema_diff(TABLE, model(ID, AMOUNT, OLD, ("new", spark.DateType()))),
    "widened": schema_diff(TABLE, model(("id", spark.LongType()), AMOUNT, OLD)),
    "narrowed": schema_diff(TABLE, model(ID, ("amount", spark.StringType()))),
}


def test_sample_diffs_are_what_their_names_say() -> None:
    assert DIFFS["same"].empty
    removed = DIFFS["removed_only"]
    assert removed.removed == ["old"] and not removed.added and not removed.changed
    assert [path for path, _ in DIFFS["added"].added] == [("new",)]
    assert [c.path for c in DIFFS["widened"].changed] == [("id",)]
    narrowed = DIFFS["narrowed"]
    assert [c.path for c in narrowed.changed] == [("amount",)] and narrowed.removed == ["old"]


@pytest.mark.parametrize("mode", [*ALL_MODES, None])
@pytest.mark.parametrize("diff_name", list(DIFFS))
def test_replaces_table(mode, diff_name) -> None:
    expected = mode in REPLACING_MODES and diff_name in ("added", "widened", "narrowed")
    assert replaces_table(mode, DIFFS[diff_name]) is expected


@pytest.mark.parametrize("mode", REPLACING_MODES)
@pytest.mark.parametrize("diff_name", list(DIFFS))
def test_replacing_modes_plan_no_evolution(mode, diff_name) -> None:
    plan = plan_evolution("orders", mode, DIFFS[diff_name])
    assert plan == SchemaDiff() and plan.empty


def test_replacing_modes_differ_from_sync_all_columns() -> None:
    # the same narrowing diff that sync_all_columns refuses is handed to table replacement
    with pytest.raises(ModelConfigError):
        plan_evolution("orders", "sync_all_columns", DIFFS["narrowed"])
    assert not plan_evolution("orders", "sync_all_columns", DIFFS["widened"]).empty
    assert plan_evolution("orders", "full_incremental_refresh", DIFFS["narrowed"]).empty
