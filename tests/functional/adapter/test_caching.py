"""dbt-tests-adapter's caching suite: the relation cached after a model builds matches the
one found when the next run populates the cache (lower/upper-case model names,
--cache-selected-only, --no-populate-cache).

Adapted: the base compares database, schema and identifier case- and quote-insensitively;
Spark relations have no database (it is None on both), so that part is compared as is.
"""

from dbt.tests.adapter.caching.test_caching import (
    BaseCachingLowercaseModel,
    BaseCachingSelectedSchemaOnly,
    BaseCachingUppercaseModel,
    BaseNoPopulateCache,
)
from dbt.tests.util import run_dbt


class SparkCacheInspection:
    def run_and_inspect_cache(self, project, run_args=None):
        """The base's check, except the database: the base lower-cases it, and Spark
        relations have none (None on both runs), so that is asserted instead."""
        run_dbt(run_args)

        # The cache was empty at the start of the run; the materialization added its
        # relation to it.
        adapter = project.adapter
        assert len(adapter.cache.relations) == 1
        relation = list(adapter.cache.relations).pop()
        assert relation.schema == project.test_schema
        assert relation.schema == project.test_schema.lower()

        # On the second run the relation comes from listing the schema.
        run_dbt(run_args)
        adapter = project.adapter
        assert len(adapter.cache.relations) == 1
        second_relation = list(adapter.cache.relations).pop()

        assert relation.database is None
        assert second_relation.database is None
        # case-insensitive + quote-insensitive comparison
        for key in ["schema", "identifier"]:
            assert getattr(relation, key).lower() == getattr(second_relation, key).lower()


class TestCachingLowercaseModel(SparkCacheInspection, BaseCachingLowercaseModel):
    pass


class TestCachingUppercaseModel(SparkCacheInspection, BaseCachingUppercaseModel):
    pass


class TestCachingSelectedSchemaOnly(SparkCacheInspection, BaseCachingSelectedSchemaOnly):
    pass


class TestNoPopulateCache(SparkCacheInspection, BaseNoPopulateCache):
    pass
