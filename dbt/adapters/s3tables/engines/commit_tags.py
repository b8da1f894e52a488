"""Commit tags: every Iceberg commit a statement makes carries the dbt invocation and node
in its snapshot summary (`dbt.invocation_id`, `dbt.unique_id`), so a whole run can be
found, and undone, later (`catalogs/snapshots.py` names the keys; `lifecycle/undo.py` reads them).

Spark SQL has no per-statement snapshot properties (Iceberg 1.12 as 1.10). Iceberg's Spark writes
add the properties of `CommitMetadata`'s thread-local to every commit made on that JVM
thread (its public `withCommitProperties` takes a Java `Callable`, which from Python needs
py4j's callback server, whose thread kept processes from exiting). PySpark pins each
Python thread to one JVM thread, and a statement's commit runs on the thread that runs the
statement, so the thread-local is set here for exactly one statement and cleared after it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

T = TypeVar("T")


@functools.cache
def _commit_properties(gateway: Any) -> Any:
    """Iceberg's thread-local of commit properties (a private static field), looked up
    once per JVM: every statement then only sets and clears it."""
    holder = gateway.jvm.org.apache.iceberg.spark.CommitMetadata._java_lang_class
    field = holder.getDeclaredField("COMMIT_PROPERTIES")
    field.setAccessible(True)
    return field.get(None)


@functools.cache
def _hash_map_class(gateway: Any) -> Any:
    """`java.util.HashMap`, looked up once per JVM: py4j resolves `jvm.java.util.HashMap`
    by trying `java` and `java.util` as classes first, against each of PySpark's imported
    packages, and every failed try searches each jar (about 2 ms per statement)."""
    return gateway.jvm.java.util.HashMap


def run_tagged(spark: SparkSession, tags: dict[str, str], run: Callable[[], T]) -> T:
    """`run()` (which runs one statement on `spark`) with `tags` on every Iceberg commit
    it makes."""
    gateway = spark.sparkContext._gateway
    properties = _hash_map_class(gateway)()
    for key, value in tags.items():
        properties.put(key, value)
    thread_local = _commit_properties(gateway)
    thread_local.set(properties)
    try:
        return run()
    finally:
        thread_local.remove()
