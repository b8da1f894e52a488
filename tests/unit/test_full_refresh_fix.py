"""A fix naming `--full-refresh` says that dbt ignores it for a model whose config sets
`full_refresh: false`, and how to rebuild it anyway; other errors pass unchanged."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.s3tables.errors import FULL_REFRESH_IGNORED, fixes_dbt_honours

REFUSAL = "Model `m`: refused. Fix: rebuild it (`dbt run -s m --full-refresh`)"


@pytest.mark.parametrize("setting", [False, "false", "False"])
def test_a_fix_dbt_would_ignore_says_so(setting: object) -> None:
    with (
        pytest.raises(DbtRuntimeError) as raised,
        fixes_dbt_honours({"config": {"full_refresh": setting}}),
    ):
        raise DbtRuntimeError(REFUSAL)
    assert raised.value.msg == REFUSAL + FULL_REFRESH_IGNORED
    assert "set `full_refresh: true`" in str(raised.value)


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ({"config": {"full_refresh": None}}, REFUSAL),
        ({"config": {"full_refresh": True}}, REFUSAL),
        ({"config": {"full_refresh": False}}, "Model `m`: refused. Fix: rename the column"),
        (None, REFUSAL),
    ],
)
def test_other_errors_pass_unchanged(node: dict | None, message: str) -> None:
    with pytest.raises(DbtRuntimeError) as raised, fixes_dbt_honours(node):
        raise DbtRuntimeError(message)
    assert raised.value.msg == message
