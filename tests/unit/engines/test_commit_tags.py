"""Commit tags (engines/commit_tags.py) against stand-ins for py4j's view of the JVM: the
tags reach Iceberg's thread-local for one statement, and the JVM classes are resolved
once per JVM, not per statement."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from dbt.adapters.s3tables.engines.commit_tags import run_tagged


class ThreadLocal:
    def __init__(self) -> None:
        self.value: dict[str, str] | None = None
        self.history: list[dict[str, str] | None] = []

    def set(self, value: dict[str, str]) -> None:
        self.value = value
        self.history.append(dict(value))

    def remove(self) -> None:
        self.value = None
        self.history.append(None)


class HashMap(dict):
    def put(self, key: str, value: str) -> None:
        self[key] = value


class JvmView:
    """py4j's `jvm`: counts the lookups of `jvm.java` (each resolved in the JVM)."""

    def __init__(self, thread_local: ThreadLocal) -> None:
        self.java_lookups = 0
        field = SimpleNamespace(setAccessible=lambda flag: None, get=lambda owner: thread_local)
        holder = SimpleNamespace(getDeclaredField=lambda name: field)
        metadata = SimpleNamespace(_java_lang_class=holder)
        self.org = SimpleNamespace(
            apache=SimpleNamespace(
                iceberg=SimpleNamespace(spark=SimpleNamespace(CommitMetadata=metadata))
            )
        )

    @property
    def java(self) -> Any:
        self.java_lookups += 1
        return SimpleNamespace(util=SimpleNamespace(HashMap=HashMap))


class Gateway:
    """py4j's gateway; hashable by identity, as the lookups are cached per gateway (JVM)."""

    def __init__(self, jvm: JvmView) -> None:
        self.jvm = jvm


def spark_with(jvm: JvmView) -> Any:
    return SimpleNamespace(sparkContext=SimpleNamespace(_gateway=Gateway(jvm)), _jvm=jvm)


def test_each_statement_carries_its_tags_and_the_classes_are_resolved_once() -> None:
    thread_local = ThreadLocal()
    jvm = JvmView(thread_local)
    spark = spark_with(jvm)

    seen = [
        run_tagged(spark, {"dbt.unique_id": f"model.m{n}"}, lambda: thread_local.value)
        for n in (1, 2)
    ]
    assert seen == [{"dbt.unique_id": "model.m1"}, {"dbt.unique_id": "model.m2"}]
    assert thread_local.value is None  # cleared after each statement
    assert jvm.java_lookups == 1


def test_the_tags_are_cleared_when_the_statement_fails() -> None:
    thread_local = ThreadLocal()
    spark = spark_with(JvmView(thread_local))

    def failing() -> None:
        raise RuntimeError("statement failed")

    with pytest.raises(RuntimeError):
        run_tagged(spark, {"dbt.invocation_id": "abc"}, failing)
    assert thread_local.history == [{"dbt.invocation_id": "abc"}, None]
