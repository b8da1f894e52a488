"""Every class of dbt's adapter test suite either runs here (a test class in
tests/functional/adapter/ derives from it) or is listed as not applicable with a reason;
nothing is both, and the list names only classes that exist."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import dbt.tests.adapter as suite

from tests.functional.adapter.not_applicable import NOT_APPLICABLE

SUITE_ROOT = Path(suite.__path__[0])
OUR_TESTS = Path(__file__).parent.parent / "functional" / "adapter"


def suite_classes() -> dict[str, type]:
    """The suite's test classes, by path relative to dbt.tests.adapter: classes with
    test methods, not counting the suite's own `Test*` instances of them."""
    classes: dict[str, type] = {}
    for path in sorted(SUITE_ROOT.rglob("*.py")):
        module_name = ".".join(path.relative_to(SUITE_ROOT).with_suffix("").parts)
        module = importlib.import_module(f"dbt.tests.adapter.{module_name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or name.startswith("Test"):
                continue
            if any(attr.startswith("test_") for attr in dir(cls)):
                classes[f"{module_name}.{name}"] = cls
    return classes


def classes_we_run() -> set[type]:
    ran: set[type] = set()
    for path in sorted(OUR_TESTS.glob("test_*.py")):
        module = importlib.import_module(f"tests.functional.adapter.{path.stem}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if name.startswith("Test") and cls.__module__ == module.__name__:
                ran.update(cls.__mro__)
    return ran


def test_every_suite_class_runs_or_has_a_reason() -> None:
    classes = suite_classes()
    ran = classes_we_run()
    running = {name for name, cls in classes.items() if cls in ran}
    missing = sorted(set(classes) - running - set(NOT_APPLICABLE))
    assert not missing, f"neither run nor listed as not applicable: {missing}"
    contradictions = sorted(running & set(NOT_APPLICABLE))
    assert not contradictions, f"listed as not applicable but run: {contradictions}"
    unknown = sorted(set(NOT_APPLICABLE) - set(classes))
    assert not unknown, f"not in dbt-tests-adapter: {unknown}"
    assert all(reason.strip() for reason in NOT_APPLICABLE.values())
    # The size of the suite as this checks it (the closing note quotes it).
    print(f"{len(classes)} suite classes: {len(running)} run, {len(NOT_APPLICABLE)} not applicable")
