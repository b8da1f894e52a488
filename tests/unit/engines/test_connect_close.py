"""Closing or collecting one Connect session leaves pyspark's process-wide release pool
running for the other dbt threads' sessions."""

from __future__ import annotations

import gc

from dbt.adapters.s3tables.engines.connect import close_only_own_channel


def release_pool() -> object:
    from pyspark.sql.connect.client.reattach import ExecutePlanResponseReattachableIterator

    ExecutePlanResponseReattachableIterator._initialize_pool_if_necessary()
    return ExecutePlanResponseReattachableIterator._release_thread_pool


def collect_session(guarded: bool) -> None:
    from pyspark.sql.connect.session import SparkSession

    # No server: gRPC opens the channel on the first call, which is never made.
    session = SparkSession(connection="sc://127.0.0.1:1")
    if guarded:
        close_only_own_channel(session.client)
    session.client.close()
    del session
    gc.collect()


def test_pyspark_alone_shuts_the_shared_pool_when_a_session_goes() -> None:
    """What the guard is for: without it, one collected session stops the pool."""
    from pyspark.sql.connect.client.reattach import ExecutePlanResponseReattachableIterator

    release_pool()
    collect_session(guarded=False)
    assert ExecutePlanResponseReattachableIterator._release_thread_pool is None


def test_a_guarded_session_closes_only_its_channel() -> None:
    from pyspark.sql.connect.client.reattach import ExecutePlanResponseReattachableIterator

    pool = release_pool()
    collect_session(guarded=True)
    assert ExecutePlanResponseReattachableIterator._release_thread_pool is pool
