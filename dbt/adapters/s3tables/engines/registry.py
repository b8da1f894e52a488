"""The engines by profile `method`: each names the module that declares its `EngineKind`
(`ENGINE_KIND`), imported the first time that method is asked for.

Nothing here imports an engine module, and no module of engines/ imports this one:
reading a profile loads its own engine (and those it builds on) only.
"""

from __future__ import annotations

from importlib import import_module

from dbt.adapters.s3tables.engines.base import EngineKind
from dbt.adapters.s3tables.errors import ProfileError

ENGINE_MODULES: dict[str, str] = {
    "session": "dbt.adapters.s3tables.engines.session",
    "thrift": "dbt.adapters.s3tables.engines.thrift",
    "connect": "dbt.adapters.s3tables.engines.connect",
}

# Every `method` the profile accepts.
METHODS = tuple(ENGINE_MODULES)


def engine_kind(method: str) -> EngineKind:
    """The engine of a profile `method`, or ProfileError listing the methods."""
    if method not in ENGINE_MODULES:
        raise ProfileError.unknown_value("method", method, METHODS)
    kind: EngineKind = import_module(ENGINE_MODULES[method]).ENGINE_KIND
    return kind
