"""Which sessions the pool lends again (engines/session_pool.py), over stand-ins of the
py4j objects a SparkSession exposes (tests/functional/test_session_reuse.py runs it on
Spark)."""

from __future__ import annotations

from typing import Any

from py4j.protocol import Py4JNetworkError

from dbt.adapters.s3tables.engines.session_pool import SessionPool


class JavaSeq:
    def __init__(self, items: list[Any]) -> None:
        self.items = items

    def size(self) -> int:
        return len(self.items)

    def apply(self, i: int) -> Any:
        return self.items[i]

    def hashCode(self) -> int:  # noqa: N802 - Java's name
        return hash(tuple(sorted(self.items)))


class FakeSession:
    """What the pool reads of a session: settings, current catalog and namespace,
    temporary views and functions; `_jsparkSession.sessionState()` and `catalog` (PySpark's)
    answer as Spark's do."""

    def __init__(self) -> None:
        self.settings: dict[str, str] = {"spark.sql.shuffle.partitions": "4"}
        self.current: tuple[str, list[str]] = ("local", [])
        self.views: list[str] = []
        self.functions: list[str] = []
        self.stopped = ""
        self._jsparkSession = self
        self.catalog = PySparkCatalog(self)

    def sessionState(self) -> JavaState:  # noqa: N802 - Java's name
        if self.stopped == "network":
            raise Py4JNetworkError("the JVM stopped")
        if self.stopped == "socket":
            raise ConnectionRefusedError(111, "Connection refused")
        return JavaState(self)


class PySparkCatalog:
    def __init__(self, session: FakeSession) -> None:
        self.session = session

    def dropTempView(self, name: str) -> None:  # noqa: N802 - PySpark's name
        self.session.views.remove(name)


class JavaState:
    """SessionState, SQLConf, CatalogManager and SessionCatalog in one."""

    def __init__(self, session: FakeSession) -> None:
        self.session = session

    def conf(self) -> JavaState:
        return self

    def catalog(self) -> JavaState:
        return self

    def catalogManager(self) -> JavaState:  # noqa: N802 - Java's name
        return self

    def getAllConfs(self) -> JavaSeq:  # noqa: N802 - Java's name
        return JavaSeq(list(self.session.settings.items()))

    def currentCatalog(self) -> Any:  # noqa: N802 - Java's name
        name = self.session.current[0]
        return type("Catalog", (), {"name": lambda _: name})()

    def currentNamespace(self) -> list[str]:  # noqa: N802 - Java's name
        return self.session.current[1]

    def listTemporaryFunctions(self) -> JavaSeq:  # noqa: N802 - Java's name
        return JavaSeq(self.session.functions)

    def getTempViewNames(self) -> JavaSeq:  # noqa: N802 - Java's name
        return JavaSeq(list(self.session.views))


class FakeRoot:
    def __init__(self) -> None:
        self.made: list[FakeSession] = []

    def newSession(self) -> FakeSession:  # noqa: N802 - PySpark's name
        self.made.append(FakeSession())
        return self.made[-1]


def test_a_session_given_back_unchanged_is_lent_again_without_its_views() -> None:
    pool, root = SessionPool(), FakeRoot()
    first = pool.lend(root)  # type: ignore[arg-type]  # a stand-in
    first.session.views.append("dbt_source_1")
    pool.give_back(first)
    again = pool.lend(root)  # type: ignore[arg-type]  # a stand-in
    assert again.session is first.session and len(root.made) == 1
    assert again.session.views == []


def test_a_changed_session_is_let_go() -> None:
    pool, root = SessionPool(), FakeRoot()
    for change in (
        lambda s: s.settings.update({"spark.sql.ansi.enabled": "true"}),
        lambda s: setattr(s, "current", ("local", ["marts"])),
        lambda s: s.functions.append("my_udf"),
        lambda s: setattr(s, "stopped", "network"),
        lambda s: setattr(s, "stopped", "socket"),  # py4j's socket refused: no JVM
    ):
        lent = pool.lend(root)  # type: ignore[arg-type]  # a stand-in
        change(lent.session)
        pool.give_back(lent)
        assert pool.lend(root).session is not lent.session  # type: ignore[arg-type]  # a stand-in


def test_a_setting_restored_keeps_the_session() -> None:
    pool, root = SessionPool(), FakeRoot()
    lent = pool.lend(root)  # type: ignore[arg-type]  # a stand-in
    lent.session.settings["spark.wap.id"] = "x"
    del lent.session.settings["spark.wap.id"]
    pool.give_back(lent)
    assert pool.lend(root).session is lent.session  # type: ignore[arg-type]  # a stand-in


def test_sessions_of_another_root_or_made_before_the_settings_changed_are_not_lent() -> None:
    pool, root, restarted = SessionPool(), FakeRoot(), FakeRoot()
    lent = pool.lend(root)  # type: ignore[arg-type]  # a stand-in
    pool.give_back(lent)
    assert pool.lend(restarted).session is not lent.session  # type: ignore[arg-type]  # a stand-in
    lent = pool.lend(root)  # type: ignore[arg-type]  # a stand-in
    pool.forget()  # a catalog added while it was lent
    pool.give_back(lent)
    assert pool.lend(root).session is not lent.session  # type: ignore[arg-type]  # a stand-in
