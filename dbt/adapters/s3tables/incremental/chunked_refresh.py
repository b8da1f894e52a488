"""`on_schema_change: full_incremental_refresh`: rebuild a table's whole history in time
chunks, one commit per chunk, resuming after the last committed chunk when a run stops
part-way (pure functions; the adapter runs the SQL).

Chunks are made from the data: one per `chunk` period that holds rows, so no empty commit
is ever made. The windows cover every row the model returns: the first one also takes rows
before `begin` and rows whose event time is NULL, and the last one has no upper bound, so
the rebuilt table holds exactly what a full refresh would.

Progress is read back from the table itself: each chunk is one atomic INSERT and chunks
are written in time order, so the greatest event time in the table says which chunks are
committed. No bookkeeping commit can fall out of step with the data.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.sql.text import quote

CONFIG_KEY = "full_incremental_refresh"
CHUNK_UNITS = ("day", "week", "month")
CHUNK_SOURCE_ALIAS = "dbt_chunk_source"
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"


@dataclass(frozen=True)
class ChunkPlan:
    """How to chunk a rebuild: kept on the table while the rebuild is in progress, so a
    resumed run follows the plan it started with."""

    event_time: str
    chunk: str
    begin: str | None = None

    def to_property(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_property(cls, value: str) -> ChunkPlan:
        return cls(**json.loads(value))

    @property
    def spark_unit(self) -> str:
        return self.chunk.upper()


def _config_error(model_name: str, problem: str, fix: str) -> ModelConfigError:
    return ModelConfigError(model_name, CONFIG_KEY, problem, fix)


def chunk_plan(model_name: str, config: Mapping[str, Any]) -> ChunkPlan:
    """The model's `full_incremental_refresh` config, checked."""
    example = "{event_time: <column>, begin: '2024-01-01', chunk: day}"
    raw = config.get(CONFIG_KEY)
    if not isinstance(raw, Mapping):
        raise _config_error(
            model_name,
            "on_schema_change `full_incremental_refresh` needs this config as a mapping",
            f"set `{CONFIG_KEY}: {example}`",
        )
    unknown = sorted(set(raw) - {"event_time", "begin", "chunk"})
    if unknown:
        raise _config_error(
            model_name,
            f"unknown key(s) {', '.join(unknown)}",
            "use only event_time, begin and chunk",
        )
    event_time = raw.get("event_time")
    if not event_time or not isinstance(event_time, str):
        raise _config_error(
            model_name,
            "`event_time` is missing",
            "name the model's column that places each row in time",
        )
    chunk = str(raw.get("chunk", "day")).lower()
    if chunk not in CHUNK_UNITS:
        raise _config_error(
            model_name,
            f"unknown chunk `{raw.get('chunk')}`",
            f"use one of: {', '.join(CHUNK_UNITS)}",
        )
    begin = raw.get("begin")
    if begin is not None:
        try:
            begin = parse_timestamp(str(begin)).strftime(TIMESTAMP_FORMAT)
        except ValueError:
            raise _config_error(
                model_name,
                f"`begin` is `{begin}`, not a date",
                "write it as YYYY-MM-DD (or YYYY-MM-DD HH:MM:SS)",
            ) from None
    return ChunkPlan(event_time=event_time, chunk=chunk, begin=begin)


def parse_timestamp(value: str) -> datetime.datetime:
    text = value.strip()
    return (
        datetime.datetime.strptime(text, TIMESTAMP_FORMAT)
        if " " in text
        else datetime.datetime.strptime(text, "%Y-%m-%d")
    )


def next_chunk_start(start: datetime.datetime, chunk: str) -> datetime.datetime:
    """The start of the chunk after the one starting at `start`."""
    if chunk == "day":
        return start + datetime.timedelta(days=1)
    if chunk == "week":
        return start + datetime.timedelta(days=7)
    year, month = divmod(start.month, 12)
    return start.replace(year=start.year + year, month=month + 1)


@dataclass(frozen=True)
class Progress:
    """What the table already holds: nothing (a fresh rebuild), or every row before
    `resume_from` (None: only the first chunk's rows with a NULL event time)."""

    started: bool
    resume_from: str | None = None

    @classmethod
    def from_table(cls, row_count: int, last_chunk_start: str | None, chunk: str) -> Progress:
        """`last_chunk_start`: the start of the chunk holding the table's greatest event
        time. That chunk is committed whole, so the rebuild resumes at the next one."""
        if not row_count:
            return cls(started=False)
        if last_chunk_start is None:
            return cls(started=True)
        resume = next_chunk_start(parse_timestamp(last_chunk_start), chunk)
        return cls(started=True, resume_from=resume.strftime(TIMESTAMP_FORMAT))


def progress_sql(target: str, event_time: str, plan: ChunkPlan) -> str:
    column = quote(event_time)
    return (
        f"SELECT COUNT(*), CAST(date_trunc('{plan.spark_unit}', MAX({column})) AS STRING) "
        f"FROM {target}"
    )


def remaining_rows(event_time: str, progress: Progress) -> str | None:
    """The predicate selecting the rows a rebuild has still to write (None: all)."""
    if not progress.started:
        return None
    column = quote(event_time)
    if progress.resume_from is None:
        return f"{column} IS NOT NULL"
    return f"{column} >= TIMESTAMP '{progress.resume_from}'"


def chunk_starts_sql(source_sql: str, plan: ChunkPlan, progress: Progress) -> str:
    """The start of every chunk period holding rows still to write, from `begin` on."""
    column = quote(plan.event_time)
    conditions = [f"{column} IS NOT NULL"]
    if plan.begin:
        conditions.append(f"{column} >= TIMESTAMP '{plan.begin}'")
    remaining = remaining_rows(plan.event_time, progress)
    if remaining:
        conditions.append(remaining)
    return (
        f"SELECT DISTINCT CAST(date_trunc('{plan.spark_unit}', {column}) AS STRING) AS chunk_start "
        f"FROM (\n{source_sql}\n) AS {CHUNK_SOURCE_ALIAS} WHERE {' AND '.join(conditions)} "
        "ORDER BY chunk_start"
    )


@dataclass(frozen=True)
class ChunkWindow:
    """Rows with event time in [lower, upper) (None: unbounded), plus, in the first
    window of a fresh rebuild, the rows whose event time is NULL."""

    lower: str | None
    upper: str | None
    with_nulls: bool = False

    def predicate(self, event_time: str) -> str | None:
        column = quote(event_time)
        bounds = []
        if self.lower is not None:
            bounds.append(f"{column} >= TIMESTAMP '{self.lower}'")
        if self.upper is not None:
            bounds.append(f"{column} < TIMESTAMP '{self.upper}'")
        if self.with_nulls:
            return f"({' AND '.join(bounds)} OR {column} IS NULL)" if bounds else None
        return " AND ".join(bounds) or f"{column} IS NOT NULL"

    def describe(self) -> str:
        return f"[{self.lower or 'start'}, {self.upper or 'end'})"


def chunk_windows(chunk_starts: Sequence[str], progress: Progress) -> list[ChunkWindow]:
    """Consecutive windows, one per chunk start, covering every row still to write: the
    first is open below (or starts where the rebuild resumes), the last is open above."""
    starts = sorted(chunk_starts)
    fresh = not progress.started
    if not starts:
        # Nothing after `begin`: a fresh rebuild still writes every row, in one chunk.
        return [ChunkWindow(None, None, with_nulls=True)] if fresh else []
    windows = []
    for index, start in enumerate(starts):
        lower = start if index else progress.resume_from
        upper = starts[index + 1] if index + 1 < len(starts) else None
        windows.append(ChunkWindow(lower, upper, with_nulls=fresh and index == 0))
    return windows


def chunk_sql(source_sql: str, event_time: str, window: ChunkWindow) -> str:
    """The model's rows in one window."""
    predicate = window.predicate(event_time)
    where = f" WHERE {predicate}" if predicate else ""
    return f"SELECT * FROM (\n{source_sql}\n) AS {CHUNK_SOURCE_ALIAS}{where}"
