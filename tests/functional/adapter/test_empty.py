"""dbt-tests-adapter's `--empty` suite: models built from zero-row refs and sources,
seeds with columns and no rows under `dbt build --empty`, and every metadata macro
(columns, comments, type changes, truncation) handed an `--empty` ref."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.empty.test_empty import (
    BaseTestEmpty,
    BaseTestEmptyInlineSourceRef,
    BaseTestEmptySeedFlag,
    MetadataWithEmptyFlag,
)
from dbt.version import __version__ as dbt_version

# `dbt seed --empty` is an option of dbt-core 1.12: on the 1.11 line (`.venv-dbt111`) the
# class is skipped, on 1.12 (the whole suite's line) it runs.
NEEDS_SEED_EMPTY_OPTION = pytest.mark.skipif(
    tuple(int(part) for part in dbt_version.split(".")[:2]) < (1, 12),
    reason="`dbt seed --empty` does not exist in dbt-core 1.11 (added in 1.12)",
)


class TestEmpty(BaseTestEmpty):
    pass


class TestEmptyInlineSourceRef(BaseTestEmptyInlineSourceRef):
    pass


@NEEDS_SEED_EMPTY_OPTION
class TestEmptySeedFlag(BaseTestEmptySeedFlag):
    pass


class TestMetadataWithEmptyFlag(MetadataWithEmptyFlag):
    pass
