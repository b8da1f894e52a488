"""The classes of dbt's adapter test suite (`dbt-tests-adapter`) that cannot apply to
Spark + Iceberg (3.5, and 4.1 where it says so), each with its reason. Every other class
runs in tests/functional/adapter/, unchanged or with a deviation listed in deviations.py
(tests/unit/test_conformance_coverage.py checks all three ways)."""

from __future__ import annotations

_GRANTS = (
    "Iceberg catalogs (S3 Tables, Glue, REST, the embedded one) have no SQL GRANT: IAM "
    "policies and Lake Formation govern access, and the adapter refuses `grants`"
)
_MATERIALIZED_VIEWS = (
    "Spark 3.5 has no materialized views; Spark 4.1 has them only inside its declarative "
    "pipelines (4.1.4: `[UNSUPPORTED_FEATURE.CREATE_PIPELINE_DATASET_QUERY_EXECUTION] The "
    "feature is not supported: Direct execution of a CREATE ... MATERIALIZED VIEW query`)"
)
_JS_UDF = "JavaScript UDFs are a BigQuery/Snowflake feature; Spark runs no JavaScript"
_PYTHON_UDF = (
    "dbt function nodes in Python need a catalog that stores Python functions; Spark's "
    "CREATE FUNCTION registers JVM classes (3.5) or SQL expressions (4.1), and 4.1 "
    "refuses `LANGUAGE PYTHON` (`[PARSE_SYNTAX_ERROR] Syntax error at or near 'AS': "
    "missing 'RETURN'`). The classes checking that dbt refuses such a function run"
)
_SQL_UDF = (
    "dbt function nodes in SQL need a catalog that stores SQL functions. Spark 3.5 has "
    "no SQL functions (`CREATE FUNCTION f(x FLOAT) RETURNS FLOAT RETURN x * 2`: "
    "`[PARSE_SYNTAX_ERROR] Syntax error at or near '('`). Spark 4.1.4 has them, but not "
    "with Iceberg: Iceberg 1.12.0's SQL extensions (which MERGE INTO, branches and "
    "procedures need) refuse every such statement, even a TEMPORARY one or one in "
    "`spark_catalog`, with a message-less `java.lang.UnsupportedOperationException` from "
    "`IcebergSparkSqlExtensionsParser.parseRoutineParam`; the Iceberg catalogs store no "
    "functions (`AnalysisException: Catalog local does not support CREATE FUNCTION.`); "
    "and `spark_catalog` is Spark's in-memory session catalog here, so a function built "
    "by `dbt build` would be gone for the next command"
)
_SQL_UDAF = (
    "SQL aggregate functions (`CREATE AGGREGATE FUNCTION`) exist in neither Spark 3.5 nor "
    "4.1 (4.1.4: `[PARSE_SYNTAX_ERROR] Syntax error at or near 'AGGREGATE'`)"
)

NOT_APPLICABLE: dict[str, str] = {
    "utils.test_current_timestamp.BaseCurrentTimestampAware": (
        "Spark's TIMESTAMP reaches Python as a naive datetime (the session's wall time); "
        "the suite asks an adapter to run one of Aware and Naive, and Naive runs"
    ),
    "utils.test_escape_single_quotes.BaseEscapeSingleQuotesQuote": (
        "Spark escapes a quote in a string literal with a backslash ('they\\'re'); "
        "doubled quotes are two adjacent literals. The Backslash variant runs"
    ),
    "grants.test_incremental_grants.BaseIncrementalGrants": _GRANTS,
    "grants.test_invalid_grants.BaseInvalidGrants": _GRANTS,
    "grants.test_model_grants.BaseModelGrants": _GRANTS,
    "grants.test_seed_grants.BaseSeedGrants": _GRANTS,
    "grants.test_snapshot_grants.BaseSnapshotGrants": _GRANTS,
    "materialized_view.basic.MaterializedViewBasic": _MATERIALIZED_VIEWS,
    "materialized_view.changes.MaterializedViewChanges": _MATERIALIZED_VIEWS,
    "materialized_view.changes.MaterializedViewChangesApplyMixin": _MATERIALIZED_VIEWS,
    "materialized_view.changes.MaterializedViewChangesContinueMixin": _MATERIALIZED_VIEWS,
    "materialized_view.changes.MaterializedViewChangesFailMixin": _MATERIALIZED_VIEWS,
    "functions.test_js_udfs.BasicJSAggregateUDF": _JS_UDF,
    "functions.test_js_udfs.BasicJSUDF": _JS_UDF,
    "functions.test_js_udfs.JSAggregateUDFVolatilityIgnored": _JS_UDF,
    "functions.test_js_udfs.JSUDFDefaultArgSupport": _JS_UDF,
    "functions.test_js_udfs.JSUDFDeterministicVolatility": _JS_UDF,
    "functions.test_js_udfs.JSUDFMultiLineBody": _JS_UDF,
    "functions.test_js_udfs.JSUDFNonDeterministicVolatility": _JS_UDF,
    "functions.test_js_udfs.JSUDFStableVolatilityWarns": _JS_UDF,
    "functions.test_udafs.BasicPythonUDAF": _PYTHON_UDF,
    "functions.test_udafs.PythonUDAFDefaultArgSupport": _PYTHON_UDF,
    "functions.test_udafs.BasicSQLUDAF": _SQL_UDAF,
    "functions.test_udafs.UDAFBase": (
        "the base of the SQL and Python aggregate-function classes (its `functions` "
        "fixture raises NotImplementedError); none of them applies: " + _SQL_UDAF
    ),
    "functions.test_udfs.PythonUDFDefaultArgSupport": _PYTHON_UDF,
    "functions.test_udfs.PythonUDFSupported": _PYTHON_UDF,
    "functions.test_udfs.PythonUDFVolatilitySupport": _PYTHON_UDF,
    "functions.test_udfs.PythonUDFWithPackagesSupported": _PYTHON_UDF,
    "functions.test_udfs.CanFindScalarFunctionRelation": _SQL_UDF,
    "functions.test_udfs.DeterministicUDF": _SQL_UDF,
    "functions.test_udfs.NonDeterministicUDF": _SQL_UDF,
    "functions.test_udfs.SqlUDFDefaultArgSupport": _SQL_UDF,
    "functions.test_udfs.StableUDF": _SQL_UDF,
    "functions.test_udfs.UDFsBasic": _SQL_UDF,
}
