"""Every engine implements `Engine`: each member the interface declares, with a signature
that accepts every call the interface allows; and every profile `method` has an engine."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from dbt.adapters.s3tables.engines.base import Engine
from dbt.adapters.s3tables.engines.connect import ConnectEngine
from dbt.adapters.s3tables.engines.registry import METHODS, engine_kind
from dbt.adapters.s3tables.engines.session import SessionEngine
from dbt.adapters.s3tables.engines.thrift import ThriftEngine

IMPLEMENTATIONS = [SessionEngine, ThriftEngine, ConnectEngine]

# Declared in the Protocol's own body: methods and properties, not typing's machinery.
MEMBERS = sorted(
    name
    for name, value in vars(Engine).items()
    if not name.startswith("_") and (callable(value) or isinstance(value, property))
)

EXPECTED_MEMBERS = [
    "cancel",
    "close",
    "create_appended_rows_view",
    "create_changed_rows_views",
    "create_text_view",
    "cursor",
    "description",
    "drop_temp_view",
    "engine_description",
    "execute",
    "fetchall",
    "fetchone",
    "has_iceberg_extensions",
    "query_inputs",
    "query_schema",
    "rollback",
    "session",
    "settings",
    "tag_next_write",
    "tag_node_commits",
]

VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def incompatibility(implementation: type, name: str) -> str | None:
    """Why `implementation` does not provide `Engine.<name>` as declared, or None."""
    declared = inspect.getattr_static(Engine, name)
    try:
        provided = inspect.getattr_static(implementation, name)
    except AttributeError:
        return "missing"
    if isinstance(declared, property):
        return None if isinstance(provided, property) else "not a property"
    if isinstance(provided, (classmethod, staticmethod)) or not callable(provided):
        return "not an instance method"
    wanted = list(inspect.signature(declared).parameters.values())[1:]
    given = list(inspect.signature(provided).parameters.values())[1:]
    by_name = {p.name: p for p in given if p.kind not in VARIADIC}
    variadic = {p.kind for p in given if p.kind in VARIADIC}
    for position, parameter in enumerate(wanted):
        match = by_name.get(parameter.name)
        if match is None:
            if variadic != set(VARIADIC):
                return f"does not take `{parameter.name}`"
            continue
        if given.index(match) != position:
            return f"takes `{parameter.name}` at another position"
        if parameter.default is not inspect.Parameter.empty and match.default is match.empty:
            return f"requires `{parameter.name}`, which the interface makes optional"
    for parameter in given:
        required = parameter.kind not in VARIADIC and parameter.default is parameter.empty
        if required and parameter.name not in {p.name for p in wanted}:
            return f"requires `{parameter.name}`, which the interface does not pass"
    return None


def test_the_interface_declares_what_the_adapter_and_dbt_use() -> None:
    assert MEMBERS == EXPECTED_MEMBERS


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", EXPECTED_MEMBERS)
def test_engine_implements_member(implementation: type, name: str) -> None:
    assert incompatibility(implementation, name) is None


class IncompleteEngine:
    """An engine that forgot a member, got two signatures wrong and has a plain
    attribute where the interface has a property."""

    def execute(self, sql: str) -> None: ...

    def query_schema(self, sql: str, strict: bool) -> Any: ...

    description = None


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("drop_temp_view", "missing"),
        ("execute", "does not take `bindings`"),
        ("query_schema", "requires `strict`, which the interface does not pass"),
        ("description", "not a property"),
    ],
)
def test_the_check_names_what_an_engine_gets_wrong(name: str, problem: str) -> None:
    assert incompatibility(IncompleteEngine, name) == problem


def test_only_the_in_process_engine_writes_from_this_process() -> None:
    assert {m: engine_kind(m).writes_from_this_process for m in METHODS} == {
        "session": True,
        "thrift": False,
        "connect": False,
    }


@pytest.mark.parametrize(
    ("method", "server"), [("thrift", "Spark Thrift Server"), ("connect", "Spark Connect server")]
)
def test_server_engines_refuse_catalogs_yml_naming_them_and_the_fix(method, server):
    from dbt_common.exceptions import DbtRuntimeError

    from dbt.adapters.s3tables.catalogs.config import CatalogConfig
    from dbt.adapters.s3tables.engines.base import EngineSetup

    default = CatalogConfig(name="local", catalog_type="local", warehouse="/tmp/wh")
    declared = CatalogConfig(name="lake", catalog_type="local", warehouse="/tmp/lake")
    alone = EngineSetup(None, default, None, lambda _: None)  # type: ignore[arg-type]
    alone.refuse_declared_catalogs(method, server)  # nothing declared: nothing refused
    with pytest.raises(DbtRuntimeError) as refused:
        EngineSetup(None, default, None, lambda _: None, (declared,)).refuse_declared_catalogs(  # type: ignore[arg-type]
            method, server
        )
    message = str(refused.value)
    assert "catalogs.yml declares `lake`" in message
    assert f"`method: {method}` uses the catalogs the {server} was started with" in message
    assert "Fix: use `method: session`" in message


class FakeServerSession:
    """What `apply_spark_conf` talks to: a session whose launch-only keys refuse a SET."""

    def __init__(self, launch_settings: dict[str, str]) -> None:
        self.launch_settings = launch_settings
        self.values: dict[str, str] = dict(launch_settings)

    def set(self, key: str, value: str) -> None:
        if key == "spark.broken":
            raise ConnectionError("server gone")
        if key in self.launch_settings:
            raise RuntimeError(f"Cannot modify the value of a static config: {key}.")
        self.values[key] = value


def setup_with_conf(conf: dict[str, str]) -> Any:
    from types import SimpleNamespace

    from dbt.adapters.s3tables.engines.base import EngineSetup

    credentials = SimpleNamespace(spark_conf=conf)
    return EngineSetup(credentials, None, None, lambda _: None)  # type: ignore[arg-type]


def test_spark_conf_is_set_per_session_and_launch_only_keys_are_refused() -> None:
    from dbt_common.exceptions import DbtRuntimeError

    session = FakeServerSession({"spark.sql.extensions": "iceberg", "spark.executor.memory": "1g"})
    fine = {"spark.sql.shuffle.partitions": "2", "spark.sql.extensions": "iceberg"}
    setup_with_conf(fine).apply_spark_conf("X server", session.set, session.values.get, str)
    assert session.values["spark.sql.shuffle.partitions"] == "2"

    wrong = {**fine, "spark.executor.memory": "3g", "spark.sql.extensions": "other"}
    with pytest.raises(DbtRuntimeError) as refused:
        setup_with_conf(wrong).apply_spark_conf("X server", session.set, session.values.get, str)
    assert (
        "The X server refused `spark_conf` `spark.sql.extensions`, `spark.executor.memory`: "
        "Spark reads them only when it starts" in str(refused.value)
    )
    assert "Fix: set them where the server starts" in str(refused.value)

    # Any other failure is the failure itself, not a refusal.
    with pytest.raises(ConnectionError):
        setup_with_conf({"spark.broken": "1"}).apply_spark_conf(
            "X server", session.set, session.values.get, str
        )
