"""Engines: where the SQL runs, one per profile `method`.

The adapter talks to an engine only through `base.Engine` (run a statement, analyse a
query's schema, scoped settings, seeds' temporary views, Python models' session, a
description for `dbt debug`). Each engine module declares its `EngineKind` (`ENGINE_KIND`:
its opener, whether its Spark writes from this process, the profile keys it checks);
`registry.py` names the module of each `method` and imports it when that method is first
asked for, so importing an engine loads only the engines it builds on (`connect` reuses
`session`'s and `thrift`'s parts; those two load no other). This package face imports
nothing.
Which catalog the tables live in is the other, independent axis.

- `base.py`: the `Engine` interface, `EngineKind` and `ServerEngineKind` (a server's
  host, port, user, connect timeout; no `spark_ui` and no secret in `spark_conf`),
  typed against the profile's keys (`EngineKeys`), never the profile class.
- `session.py`: `method: session`, the process's own SparkSession (a local JVM), which
  `spark_session.py` starts (settings, secrets, JVM log and post-mortem); `jvm_process.py`
  launches the JVM and ends it with dbt (`jvm_reaper.py` if dbt dies first), and
  `class_archive.py` keeps its class-data-sharing archives.
- `thrift.py`: `method: thrift`, a Spark Thrift Server over dbt-spark's PyHive connection.
- `connect.py`: `method: connect`, a Spark Connect server (the DataFrame API over gRPC).
- `local_services.py`: local servers and a cluster for those methods, which the
  `dbt-s3tables-engine` command (`engine_command.py`) starts, reports and stops.

To add an engine: one module with a class implementing `Engine`, its `EngineOpener`, and
its `ENGINE_KIND` (an `EngineKind`, or a `ServerEngineKind` with its default port; a
subclass overriding `check_profile` for keys of its own); then its line in
`registry.ENGINE_MODULES` under its `method` (the profile accepts every registered method).
A key no engine reads yet is a field of the profile class and of `EngineSettings`.
"""
