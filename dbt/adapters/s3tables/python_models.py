"""dbt Python models in the dbt process's own SparkSession (`method: session`).

The model's DataFrame becomes a temporary view, and the SQL materializations write it:
`table` and every incremental strategy, with `on_schema_change`, behave exactly as for a
SQL model selecting from that view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dbt_common.exceptions import DbtRuntimeError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# dbt compiles a Python model into its code plus a `dbtObj` class (ref, source, config,
# this, is_incremental); this calls the model the way dbt's other adapters do.
ENTRY_POINT = """

dbt = dbtObj(session.table)
df = model(dbt, session)
"""


class PythonModelError(DbtRuntimeError):
    pass


def run_python_model(spark: SparkSession, model_name: str, compiled_code: str) -> DataFrame:
    """Run the compiled model and return its result as a Spark DataFrame."""
    from pyspark.sql import DataFrame

    namespace: dict[str, Any] = {"session": spark, "__name__": f"dbt_python_model_{model_name}"}
    try:
        code = compile(compiled_code + ENTRY_POINT, f"<python model {model_name}>", "exec")
        exec(code, namespace)
    except Exception as error:
        raise PythonModelError(
            f"Python model `{model_name}` failed: {type(error).__name__}: {error}"
        ) from error
    result = namespace.get("df")
    if isinstance(result, DataFrame):
        return result
    if type(result).__module__.startswith("pandas"):
        return spark.createDataFrame(result)
    raise PythonModelError(
        f"Python model `{model_name}`: model() returned {type(result).__name__}. Fix: return "
        "a Spark DataFrame (or a pandas DataFrame)"
    )
