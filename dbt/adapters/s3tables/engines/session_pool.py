"""The SparkSessions lent to dbt connections over the process's SparkContext.

Each dbt connection (one thread's node at a time) runs in a session of its own, so SQL
settings and temporary views never pass between models that run at the same time. A new
session builds its own catalogs, and an Iceberg catalog opens its own clients (a JDBC pool
on the embedded catalog, an HTTP client on REST) that nothing closes: a session per node
kept two catalog files open per node for as long as the process lived, and paid for the
catalogs' start in the node's first statement. So a session a connection gives back is
lent to the next one, once it is as it was when first lent: its temporary views dropped
(with their cache). A session whose SQL settings, current catalog or namespace changed, or
that holds temporary functions, is not lent again: nothing of a model passes to the next.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger
from py4j.protocol import Py4JError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

logger = AdapterLogger("s3tables")


@dataclass(frozen=True)
class SessionState:
    """What a session must hold again to be lent again: its SQL settings (their hash),
    its current catalog and namespace."""

    settings_hash: int
    catalog: str
    namespace: tuple[str, ...]

    @staticmethod
    def of(session: SparkSession) -> SessionState:
        state: Any = session._jsparkSession.sessionState()  # py4j's view of the JVM
        manager = state.catalogManager()
        return SessionState(
            settings_hash=int(state.conf().getAllConfs().hashCode()),
            catalog=str(manager.currentCatalog().name()),
            namespace=tuple(str(part) for part in manager.currentNamespace()),
        )


@dataclass
class Lent:
    """A session lent to a connection, with the root session it came from and its state
    when it was first lent."""

    session: SparkSession
    root: SparkSession
    state: SessionState
    generation: int


@dataclass
class SessionPool:
    """Sessions given back, ready to be lent again."""

    _idle: list[Lent] = field(default_factory=list)
    # Bumped when the running JVM's settings change (a catalog added, secrets given):
    # a session made before holds the earlier settings.
    _generation: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def lend(self, root: SparkSession) -> Lent:
        """A session over `root`'s SparkContext: one given back, else a new one."""
        with self._lock:
            while self._idle:
                lent = self._idle.pop()
                if lent.root is root and lent.generation == self._generation:
                    return lent
            generation = self._generation
        session = root.newSession()
        return Lent(session, root, SessionState.of(session), generation)

    def give_back(self, lent: Lent) -> None:
        """Take the session back for the next connection when it is as it was when first
        lent (its temporary views are dropped first); else let it go."""
        try:
            reason = _kept_state(lent)
        except (Py4JError, OSError) as error:
            # The JVM stopped (the statement that met it says so): nothing to lend.
            reason = f"it cannot be read ({type(error).__name__})"
        if reason is not None:
            logger.debug(f"A SparkSession is not lent again: {reason}")
            return
        with self._lock:
            if lent.generation == self._generation:
                self._idle.append(lent)

    def forget(self) -> None:
        """Lend no session made before now (the JVM's settings changed)."""
        with self._lock:
            self._generation += 1
            self._idle.clear()


def _kept_state(lent: Lent) -> str | None:
    """Drop the session's temporary views; what a model left in it that the next must not
    see (None: nothing)."""
    session = lent.session
    catalog: Any = session._jsparkSession.sessionState().catalog()
    if catalog.listTemporaryFunctions().size():
        return "it holds temporary functions"
    if SessionState.of(session) != lent.state:
        return "its SQL settings, current catalog or namespace changed"
    views = catalog.getTempViewNames()
    for name in [str(views.apply(i)) for i in range(views.size())]:
        session.catalog.dropTempView(name)
    return None


# The process's sessions.
SESSIONS = SessionPool()
