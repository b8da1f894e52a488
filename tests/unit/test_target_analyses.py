"""When a table build's `typed_sql` takes the columns its `check_target_rules` analysed
(model_build.TargetAnalyses): the same node, connection and query, once."""

from __future__ import annotations

from pyspark.sql.types import StringType, StructField

from dbt.adapters.s3tables.model_build import TargetAnalyses

FIELDS = [StructField("id", StringType())]


def test_the_same_build_takes_its_analysis_once() -> None:
    analyses, engine = TargetAnalyses(), object()
    analyses.keep("model.p.a", engine, "select 1", FIELDS)
    assert analyses.take("model.p.a", engine, "select 1") == FIELDS
    assert analyses.take("model.p.a", engine, "select 1") is None


def test_another_connection_query_or_build_analyses_again() -> None:
    analyses, engine = TargetAnalyses(), object()
    analyses.keep("model.p.a", engine, "select 1", FIELDS)
    assert analyses.take("model.p.a", object(), "select 1") is None  # a later node run
    analyses.keep("model.p.a", engine, "select 1", FIELDS)
    assert analyses.take("model.p.a", engine, "select 2") is None  # another query
    analyses.keep("model.p.a", engine, "select 1", FIELDS)
    analyses.forget("model.p.a")  # the node's next build began
    assert analyses.take("model.p.a", engine, "select 1") is None
