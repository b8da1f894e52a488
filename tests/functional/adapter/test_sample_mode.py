"""dbt-tests-adapter's sample_mode suite: `--sample` filters a ref by its `event_time`.

The base test runs dbt under freezegun: the adapter imports PyIceberg's Arrow file IO when
it opens the catalog, before any clock is frozen (importing those C extensions under
freezegun fails or never returns)."""

from dbt.tests.adapter.sample_mode.test_sample_mode import BaseSampleModeTest


class TestSampleMode(BaseSampleModeTest):
    pass
