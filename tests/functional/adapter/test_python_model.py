"""dbt-tests-adapter's Python model suite, run in the dbt process's SparkSession.

Adapted: BasePySparkTests returns four kinds of DataFrame; its Koalas model is left out,
because Koalas (`databricks.koalas`) ended at Spark 3.2, when it became pyspark.pandas,
which the suite's pandas-on-Spark model covers.
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.python_model.test_python_model import (
    BasePythonEmptyTests,
    BasePythonIncrementalTests,
    BasePythonMetaGetTests,
    BasePythonModelTests,
    BasePythonSampleTests,
)
from dbt.tests.adapter.python_model.test_spark import (
    PANDAS_MODEL,
    PANDAS_ON_SPARK_MODEL,
    PYSPARK_MODEL,
    BasePySparkTests,
)
from dbt.tests.util import run_dbt


class TestPythonModel(BasePythonModelTests):
    pass


class TestPythonIncremental(BasePythonIncrementalTests):
    pass


class TestPythonMetaGet(BasePythonMetaGetTests):
    pass


class TestPythonEmpty(BasePythonEmptyTests):
    pass


class TestPythonSample(BasePythonSampleTests):
    pass


class TestPySpark(BasePySparkTests):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "pandas_df.py": PANDAS_MODEL,
            "pyspark_df.py": PYSPARK_MODEL,
            "pandas_on_spark_df.py": PANDAS_ON_SPARK_MODEL,
        }

    def test_different_dataframes(self, project):
        """Three DataFrames, not the base's four: its Koalas model is left out (see the
        module docstring); each is checked row by row."""
        results = run_dbt(["run"])
        assert len(results) == 3
        # Each kind of DataFrame arrives whole, with its column names.
        for name in ("pandas_df", "pyspark_df", "pandas_on_spark_df"):
            rows = project.run_sql(
                f"select City, Country from {project.test_schema}.{name} order by City",
                fetch="all",
            )
            assert [tuple(r) for r in rows][0] == ("Bogota", "Colombia"), name
            assert len(rows) == 5, name
