"""dbt's function nodes (UDFs, `functions/`): where Spark can keep one, and the one sentence
`dbt build` refuses a selected one with when it cannot, before anything runs.

No Spark line this adapter runs can keep a SQL function: Spark 3.5 has none (its
`CREATE FUNCTION` registers JVM classes), and Spark 4.1's `CREATE FUNCTION ... RETURNS ...
RETURN ...` fails under Iceberg 1.12's SQL extensions, which MERGE INTO, branches and the
procedures need: their parser does not implement Spark 4.1's `parseRoutineParam`, so every
such statement (a temporary function's, one in `spark_catalog`'s) ends in a message-less
`UnsupportedOperationException`. And the Iceberg catalogs hold no functions (`Catalog ...
does not support CREATE FUNCTION`). A Jinja macro that returns the expression does what a
SQL scalar function would, inlined. Python functions and other function types are refused
by dbt itself, with its own messages.
"""

from __future__ import annotations

from dbt.adapters.s3tables.errors import FunctionNodeError

# dbt's `FunctionConfig.type` and node language this module speaks for.
SQL_SCALAR = ("sql", "scalar")


def is_sql_scalar_function(node: object) -> bool:
    if str(getattr(node, "resource_type", "")) != "function":
        return False
    config = getattr(node, "config", None)
    function_type = getattr(getattr(config, "type", None), "value", None) or "scalar"
    return (str(getattr(node, "language", "sql")), str(function_type)) == SQL_SCALAR


def why_no_function(spark_line: str) -> str:
    """Why Spark `spark_line` (`3.5`, `4.1`) cannot keep a SQL function here."""
    if spark_line.startswith("3."):
        return "Spark 3.5 has no SQL functions (`CREATE FUNCTION ... RETURN` is Spark 4.1's)"
    return (
        f"Spark {spark_line}'s `CREATE FUNCTION ... RETURN` fails under Iceberg 1.12's SQL "
        "extensions, which MERGE, branches and procedures need, and Iceberg catalogs hold "
        "no functions"
    )


def refuse_function(node: object, spark_line: str) -> FunctionNodeError:
    """The one sentence a selected SQL function of `dbt build` is refused with."""
    name = getattr(node, "name", "?")
    arguments = ", ".join(getattr(a, "name", "?") for a in getattr(node, "arguments", []) or [])
    return FunctionNodeError(
        f"Function `{name}`: this adapter cannot build it, because {why_no_function(spark_line)}. "
        f"Fix: write it as a macro that returns the expression "
        f"(`{{% macro {name}({arguments}) %}}...{{% endmacro %}}`, called as "
        f"`{{{{ {name}(...) }}}}`), or deselect it (`--exclude {name}`); nothing was built."
    )
