"""Every class of dbt's adapter test suite is exactly one of: run unchanged (a test class
in tests/functional/adapter/ derives from it and overrides none of its test methods or
helpers, only fixtures), run with a documented deviation (every test class deriving from
it overrides some, each listed with its reason in deviations.py and explained where it is
written), or not applicable (not_applicable.py, with its reason). The lists name only
classes that exist, and only the overrides there are."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from types import ModuleType

import dbt.tests.adapter as suite
from _pytest.fixtures import getfixturemarker

from tests.functional.adapter.deviations import DEVIATIONS
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


def our_test_classes() -> list[tuple[ModuleType, type]]:
    found = []
    for path in sorted(OUR_TESTS.glob("test_*.py")):
        module = importlib.import_module(f"tests.functional.adapter.{path.stem}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if name.startswith("Test") and cls.__module__ == module.__name__:
                found.append((module, cls))
    return found


def is_ours(cls: type) -> bool:
    return not cls.__module__.startswith("dbt.tests.")


def owner(cls: type, name: str) -> type:
    """The class of `cls`'s MRO whose `name` `cls` uses."""
    return next(c for c in cls.__mro__ if name in vars(c))


def runs(test_class: type, upstream: type) -> bool:
    """`test_class` runs `upstream`'s tests: it derives from it, and the suite itself
    does not replace every test method of it on the way (as PythonUDFNotSupported does
    UDFsBasic's: deriving from that runs the refusal, not UDFsBasic's test)."""
    if upstream not in test_class.__mro__:
        return False
    return any(
        owner(test_class, name) is owner(upstream, name) or is_ours(owner(test_class, name))
        for name in dir(upstream)
        if name.startswith("test_")
    )


def overrides(test_class: type, module: ModuleType, upstream: type) -> dict[str, type]:
    """The members of `upstream` our classes between `test_class` and it redefine, other
    than fixtures (a test method, a helper, an attribute its tests read), each with the
    class of ours defining it; a skip mark on the class or module counts as one."""
    below = test_class.__mro__[: test_class.__mro__.index(upstream)]
    found: dict[str, type] = {}
    for cls in reversed([c for c in below if is_ours(c)]):
        for name, value in vars(cls).items():
            if name == "pytestmark" or (
                hasattr(upstream, name)
                and not name.startswith("__")
                and getfixturemarker(value) is None
            ):
                found[name] = cls
    if hasattr(module, "pytestmark"):
        found["pytestmark"] = test_class
    return found


def says_why(cls: type, name: str) -> bool:
    """The override explains itself: the method's docstring or a comment above it, a
    comment above the attribute, or the docstring of the class defining it."""
    if vars(cls).get("__doc__"):
        return True
    value = vars(cls)[name]
    function = getattr(value, "__func__", value)
    if inspect.isfunction(function):
        return bool(function.__doc__ or inspect.getcomments(function))
    lines, _ = inspect.getsourcelines(cls)
    assignment = re.compile(rf"\s*{re.escape(name)}\s*[:=]")
    for before, line in zip(["", *lines], lines, strict=False):
        if assignment.match(line):
            return before.strip().startswith("#")
    return False


def classify() -> tuple[dict[str, type], set[str], dict[str, dict[str, type]]]:
    """The suite's classes; those run unchanged; those run only with overrides, with the
    overridden members (every test class deriving from one overrides something)."""
    classes = suite_classes()
    found_runs: dict[str, list[dict[str, type]]] = {}
    for module, test_class in our_test_classes():
        for name, upstream in classes.items():
            if runs(test_class, upstream):
                found_runs.setdefault(name, []).append(overrides(test_class, module, upstream))
    unchanged = {name for name, found in found_runs.items() if not all(found)}
    deviating = {
        name: {member: cls for found in found_runs[name] for member, cls in found.items()}
        for name in found_runs.keys() - unchanged
    }
    return classes, unchanged, deviating


def test_every_suite_class_runs_unchanged_with_a_deviation_or_has_a_reason() -> None:
    classes, unchanged, deviating = classify()

    missing = sorted(set(classes) - unchanged - set(deviating) - set(NOT_APPLICABLE))
    assert not missing, f"neither run nor listed as not applicable: {missing}"
    contradictions = sorted((unchanged | set(deviating)) & set(NOT_APPLICABLE))
    assert not contradictions, f"listed as not applicable but run: {contradictions}"
    unknown = sorted((set(NOT_APPLICABLE) | set(DEVIATIONS)) - set(classes))
    assert not unknown, f"not in dbt-tests-adapter: {unknown}"

    unlisted = {name: sorted(found) for name, found in deviating.items() if name not in DEVIATIONS}
    assert not unlisted, (
        f"run only with overridden test methods or helpers, but not listed in "
        f"deviations.py: {unlisted}"
    )
    stale = sorted(name for name in DEVIATIONS if name in unchanged)
    assert not stale, f"listed in deviations.py but run unchanged: {stale}"
    wrong = {
        name: (sorted(DEVIATIONS[name].overrides), sorted(found))
        for name, found in deviating.items()
        if DEVIATIONS[name].overrides != set(found)
    }
    assert not wrong, f"deviations.py lists other overrides than there are: {wrong}"
    silent = sorted(
        {
            f"{cls.__name__}.{member}"
            for found in deviating.values()
            for member, cls in found.items()
            if member != "pytestmark" and not says_why(cls, member)
        }
    )
    assert not silent, f"overrides that do not say what differs and why: {silent}"

    reasons = [*NOT_APPLICABLE.values(), *(d.reason for d in DEVIATIONS.values())]
    assert all(reason.strip() for reason in reasons)
    # The size of the suite as this checks it (README.md and docs/dbt-features.md quote it).
    print(
        f"{len(classes)} suite classes: {len(unchanged)} run unchanged, "
        f"{len(deviating)} run with deviation, {len(NOT_APPLICABLE)} not applicable"
    )
