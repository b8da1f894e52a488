"""dbt Python models in the connection's SparkSession: the dbt process's own (`method:
session`), or a Spark Connect server session (`method: connect`).

The model's DataFrame becomes a temporary view, and the SQL materializations write it:
`table` and every incremental strategy, with `on_schema_change`, behave exactly as for a
SQL model selecting from that view.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from dbt.adapters.s3tables.errors import PythonModelError
from dbt.adapters.s3tables.sql.text import quote

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# dbt compiles a Python model into its code plus a `dbtObj` class (ref, source, config,
# this, is_incremental); this calls the model the way dbt's other adapters do.
ENTRY_POINT = """

dbt = dbtObj(dbt_load_table)
df = model(dbt, session)
"""


_active_session_lock = threading.Lock()


@contextmanager
def _active_session(spark: SparkSession) -> Iterator[None]:
    """Make this connection's session the active one while a model runs: pandas-on-Spark
    creates its frames in the active session, and the result's temporary view must live
    in this connection's session. PySpark 3.5 keeps the active session in a class
    attribute, so models that set it run one at a time (their frames stay lazy)."""
    from pyspark.sql import SparkSession

    if is_connect_session(spark):
        # A Connect session has no JVM here; its frames belong to it already.
        yield
        return
    with _active_session_lock:
        previous = SparkSession._activeSession
        SparkSession._activeSession = spark
        jvm: Any = spark._jvm  # py4j's view of the JVM (None only once the JVM is gone)
        jvm.SparkSession.setActiveSession(spark._jsparkSession)
        try:
            yield
        finally:
            SparkSession._activeSession = previous


def is_connect_session(spark: Any) -> bool:
    """Whether `spark` is a Spark Connect client session (its own classes, not a JVM's)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _table_loader(spark: SparkSession) -> Any:
    """What `dbt.ref` and `dbt.source` read a relation with. Over Spark Connect, 3.5's
    server cannot resolve a column reference (`df.id`) on a `session.table` frame of an
    Iceberg table ("fail to find subplan with plan_id"); on a query's frame it can."""
    if is_connect_session(spark):
        return lambda relation: spark.sql(f"select * from {relation}")
    return spark.table


def run_python_model(spark: SparkSession, model_name: str, compiled_code: str) -> DataFrame:
    """Run the compiled model and return its result as a Spark DataFrame."""
    from pyspark.sql import DataFrame

    # `spark` too: Databricks notebooks name the session so, and models written there use it.
    namespace: dict[str, Any] = {
        "session": spark,
        "spark": spark,
        "dbt_load_table": _table_loader(spark),
        "__name__": f"dbt_python_model_{model_name}",
    }
    with _active_session(spark):
        try:
            code = compile(compiled_code + ENTRY_POINT, f"<python model {model_name}>", "exec")
            exec(code, namespace)
        except Exception as error:
            raise PythonModelError(
                f"Python model `{model_name}` failed: {type(error).__name__}: {error}"
            ) from error
        # Whatever the model returned: checked below, by its type.
        result: Any = namespace.get("df")
        module = type(result).__module__
        if isinstance(result, DataFrame) or module == "pyspark.sql.connect.dataframe":
            returned: DataFrame = result
            return returned
        if module.startswith("pyspark.pandas"):
            frame: DataFrame = result.to_spark()
            return frame
        if module.startswith("pandas"):
            return spark.createDataFrame(result)
    raise PythonModelError(
        f"Python model `{model_name}`: model() returned {type(result).__name__}. Fix: return "
        "a Spark DataFrame, a pandas-on-Spark DataFrame or a pandas DataFrame"
    )


def python_model_view_sql(spark: SparkSession, model_name: str, compiled_code: str) -> str:
    """Run a Python model in `spark` and return SQL selecting its DataFrame (a temporary
    view), for the SQL materializations to write."""
    frame = run_python_model(spark, model_name, compiled_code)
    view_name = f"dbt_python_{uuid.uuid4().hex}"
    frame.createOrReplaceTempView(view_name)
    return f"select * from {quote(view_name)}"
