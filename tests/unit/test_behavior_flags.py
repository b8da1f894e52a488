"""The adapter's behavior flags are rendered without dbt_common's stack walk, and name the
source dbt_common's walk would name (this adapter's module)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from dbt.adapters.base.impl import DEFAULT_BASE_BEHAVIOR_FLAGS

from dbt.adapters.s3tables.impl import _Behavior
from dbt.adapters.s3tables.keys.config_keys import FAIL_FLAG, FAIL_FLAG_SPEC


def test_flags_render_without_a_stack_walk_and_name_the_adapter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def walk(*args: Any, **kwargs: Any) -> list[Any]:
        raise AssertionError("a behavior flag walked the Python stack")

    monkeypatch.setattr(inspect, "stack", walk)
    behavior = _Behavior([*DEFAULT_BASE_BEHAVIOR_FLAGS, FAIL_FLAG_SPEC], {FAIL_FLAG: True})
    assert getattr(behavior, FAIL_FLAG).no_warn is True
    flags = [FAIL_FLAG, *(flag["name"] for flag in DEFAULT_BASE_BEHAVIOR_FLAGS)]
    sources = {name: getattr(behavior, name)._behavior_change_event.flag_source for name in flags}
    assert sources == dict.fromkeys(flags, "dbt.adapters.s3tables.impl")


def test_each_behavior_says_once_that_a_flag_is_at_its_default() -> None:
    first, second = (_Behavior([FAIL_FLAG_SPEC], {}) for _ in range(2))
    assert getattr(first, FAIL_FLAG).setting is False
    assert getattr(first, FAIL_FLAG).fired and not getattr(second, FAIL_FLAG).fired
