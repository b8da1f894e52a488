"""Loading the plugin (what `dbt parse` and `dbt ls` do) imports none of the libraries
only the catalog, seeds and table writes need: PyIceberg's catalog, table and type modules
(pydantic), SQLAlchemy, pyarrow and strictyaml cost some 0.6 s together and are imported
where first used. Nor does it import an engine (the registry imports each when its
`method` is first asked for), and importing the thrift engine loads no other."""

from __future__ import annotations

import json
import subprocess
import sys

# Top-level packages the plugin must not load, and PyIceberg's modules except the two
# small ones it may (`pyiceberg` itself and its exceptions).
DEFERRED_PACKAGES = ("sqlalchemy", "pyarrow", "strictyaml", "pyparsing", "boto3")
PYICEBERG_ALLOWED = ("pyiceberg", "pyiceberg.exceptions")

LOAD_PLUGIN = """
import json, sys
from dbt.adapters.factory import FACTORY
from dbt.adapters.s3tables import Plugin
print(json.dumps(sorted(sys.modules)))
"""

ENGINES = "dbt.adapters.s3tables.engines"
ENGINE_MODULES = {f"{ENGINES}.{name}" for name in ("session", "thrift", "connect")}


def loaded_modules(code: str) -> list[str]:
    output = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    modules: list[str] = json.loads(output)
    return modules


def deferred(modules: list[str]) -> list[str]:
    return [
        m
        for m in modules
        if m.split(".")[0] in DEFERRED_PACKAGES
        or (m.startswith("pyiceberg") and m not in PYICEBERG_ALLOWED)
    ]


def test_loading_the_plugin_imports_no_catalog_library() -> None:
    assert deferred(loaded_modules(LOAD_PLUGIN)) == []


def test_the_check_sees_a_catalog_library_when_one_is_loaded() -> None:
    # The same check, on a process that does import PyIceberg's types: it must fail there.
    modules = loaded_modules(
        LOAD_PLUGIN.replace("import json, sys", "import json, sys, pyiceberg.types")
    )
    assert "pyiceberg.types" in deferred(modules)


def test_loading_the_plugin_imports_no_engine() -> None:
    assert ENGINE_MODULES.isdisjoint(loaded_modules(LOAD_PLUGIN))


def test_importing_the_thrift_engine_loads_no_other() -> None:
    thrift = f"{ENGINES}.thrift"
    modules = loaded_modules(
        LOAD_PLUGIN.replace("from dbt.adapters.s3tables import Plugin", f"import {thrift}")
    )
    assert [m for m in modules if m in ENGINE_MODULES] == [thrift]
