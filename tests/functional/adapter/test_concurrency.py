"""dbt-tests-adapter's concurrency suite: models built on 4 threads, one failing and its
dependant skipped while the others build, twice. No adaptation needed."""

from dbt.tests.adapter.concurrency.test_concurrency import BaseConcurrency


class TestConcurrency(BaseConcurrency):
    pass
