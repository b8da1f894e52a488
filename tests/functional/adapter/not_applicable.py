"""The classes of dbt's adapter test suite (`dbt-tests-adapter`) that cannot apply to
Spark 3.5 + Iceberg, each with its reason. Every other class runs in
tests/functional/adapter/ (tests/unit/test_conformance_coverage.py checks both ways)."""

from __future__ import annotations

_GRANTS = (
    "Iceberg catalogs (S3 Tables, Glue, REST, the embedded one) have no SQL GRANT: IAM "
    "policies and Lake Formation govern access, and the adapter refuses `grants`"
)
_MATERIALIZED_VIEWS = "Spark 3.5 has no materialized views"
_JS_UDF = "JavaScript UDFs are a BigQuery/Snowflake feature; Spark runs no JavaScript"
_PYTHON_UDF = (
    "dbt function nodes in Python need a warehouse that stores Python functions in its "
    "catalog; Spark 3.5's CREATE FUNCTION only registers JVM classes"
)
_SQL_UDF = (
    "dbt function nodes in SQL need `CREATE FUNCTION ... RETURN <expr>`, which Spark 3.5 "
    "does not have (SQL UDFs arrived in Spark 4)"
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
    "functions.test_udafs.BasicSQLUDAF": _SQL_UDF,
    "functions.test_udafs.UDAFBase": _SQL_UDF,
    "functions.test_udfs.PythonUDFDefaultArgSupport": _PYTHON_UDF,
    "functions.test_udfs.PythonUDFEntryPointRequired": _PYTHON_UDF,
    "functions.test_udfs.PythonUDFNotSupported": _PYTHON_UDF,
    "functions.test_udfs.PythonUDFRuntimeVersionRequired": _PYTHON_UDF,
    "functions.test_udfs.PythonUDFSupported": _PYTHON_UDF,
    "functions.test_udfs.PythonUDFVolatilitySupport": _PYTHON_UDF,
    "functions.test_udfs.PythonUDFWithPackagesSupported": _PYTHON_UDF,
    "functions.test_udfs.CanFindScalarFunctionRelation": _SQL_UDF,
    "functions.test_udfs.DeterministicUDF": _SQL_UDF,
    "functions.test_udfs.ErrorForUnsupportedType": _SQL_UDF,
    "functions.test_udfs.NonDeterministicUDF": _SQL_UDF,
    "functions.test_udfs.SqlUDFDefaultArgSupport": _SQL_UDF,
    "functions.test_udfs.StableUDF": _SQL_UDF,
    "functions.test_udfs.UDFsBasic": _SQL_UDF,
}
