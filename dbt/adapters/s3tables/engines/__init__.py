"""Engines: where the SQL runs, one per profile `method`.

The adapter talks to an engine only through `base.Engine` (run a statement, analyse a
query's schema, scoped settings, seeds' temporary views, Python models' session, a
description for `dbt debug`); the connection manager opens one per dbt connection with
the opener registered for the profile's `method`. Which catalog the tables live in is
the other, independent axis.

- `session.py`: `method: session`, the process's own SparkSession (a local JVM), which
  `spark_session.py` starts (settings, secrets, JVM log and post-mortem); `jvm_process.py`
  launches the JVM and ends it with dbt (`jvm_reaper.py` if dbt dies first), and
  `class_archive.py` keeps its class-data-sharing archives.
- `thrift.py`: `method: thrift`, a Spark Thrift Server over dbt-spark's PyHive connection.
- `connect.py`: `method: connect`, a Spark Connect server (the DataFrame API over gRPC).
- `local_services.py`: local servers and a cluster for those methods, which the
  `dbt-s3tables-engine` command (`engine_command.py`) starts, reports and stops.

To add an engine: one module with a class implementing `Engine` and its `EngineOpener`,
registered in `ENGINES` under its `method` (the profile accepts every registered method;
the keys an engine needs are checked in `credentials.py`).
"""

from __future__ import annotations

from dbt.adapters.s3tables.engines.base import EngineKind
from dbt.adapters.s3tables.engines.connect import open_connect_engine
from dbt.adapters.s3tables.engines.session import open_session_engine
from dbt.adapters.s3tables.engines.thrift import open_thrift_engine

ENGINES: dict[str, EngineKind] = {
    "session": EngineKind(open_session_engine, writes_from_this_process=True),
    "thrift": EngineKind(open_thrift_engine, writes_from_this_process=False),
    "connect": EngineKind(open_connect_engine, writes_from_this_process=False),
}
