"""Enforced model contracts: which columns are `not_null`, the query that writes them,
and the typed column list that declares them (pure functions).

Spark cannot declare a schema in `CREATE TABLE ... AS SELECT` and Iceberg refuses
`ALTER COLUMN ... SET NOT NULL`, so a `not_null` column is enforced twice: the writing
statement checks every row (a NULL raises inside the one statement, so nothing is
committed), and the table's field is required in the Iceberg schema, so every engine
reading or writing the table sees the constraint: made so after the build through
PyIceberg, or, where PyIceberg cannot write the table's metadata (format v3 on the embedded
catalog), declared in a `CREATE TABLE` with a typed column list (see
lifecycle/required_columns.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dbt_common.contracts.constraints import ColumnLevelConstraint, ModelLevelConstraint

from dbt.adapters.s3tables.sql.text import failing_when, quote, sql_string


def _constraint_type(constraint: Any) -> str:
    value = constraint.get("type") if isinstance(constraint, Mapping) else constraint.type
    return str(getattr(value, "value", value))


def _constraint_columns(constraint: Any) -> list[str]:
    value = constraint.get("columns") if isinstance(constraint, Mapping) else constraint.columns
    return [str(c) for c in value or []]


def not_null_columns(columns: Mapping[str, Any], model_constraints: Sequence[Any]) -> list[str]:
    """Names of the contract's columns with a `not_null` constraint, declared on the
    column or on the model, in the contract's column order."""
    named = {
        c.lower()
        for constraint in model_constraints
        if _constraint_type(constraint) == "not_null"
        for c in _constraint_columns(constraint)
    }
    result = []
    for key, column in columns.items():
        name = str(column.get("name", key))
        own = column.get("constraints") or []
        if name.lower() in named or any(_constraint_type(c) == "not_null" for c in own):
            result.append(name)
    return result


def contract_select_sql(
    model_name: str, sql: str, columns: Sequence[str], not_null: Sequence[str]
) -> str:
    """The model's rows in the contract's column order, each `not_null` column checked:
    a NULL fails the statement that writes them, with a message naming the column."""
    required = {c.lower() for c in not_null}
    selected = []
    for column in columns:
        name = quote(column)
        if column.lower() in required:
            message = sql_string(
                f"Contract of model `{model_name}`: column `{column}` is not_null, but the "
                "query returned NULL in it. Nothing was written."
            )
            selected.append(f"{failing_when(f'{name} IS NULL', message, name)} AS {name}")
        else:
            selected.append(name)
    return f"SELECT {', '.join(selected)}\nFROM (\n{sql}\n) AS model_subq"


def declared_columns_sql(columns: Sequence[tuple[str, str, bool]]) -> str:
    """The column list of a `CREATE TABLE` (without a query) from (name, Spark type,
    required) triples: `` `id` int NOT NULL, `note` string ``."""
    return ", ".join(
        f"{quote(name)} {type_text}{' NOT NULL' if required else ''}"
        for name, type_text, required in columns
    )


def contract_constraints(
    model: Mapping[str, Any],
) -> list[ColumnLevelConstraint | ModelLevelConstraint]:
    """Every constraint of the model's contract, its columns' first, as dbt's objects."""
    column_level = [
        ColumnLevelConstraint.from_dict(constraint)
        for column in model["columns"].values()
        for constraint in column.get("constraints") or []
    ]
    model_level = [ModelLevelConstraint.from_dict(c) for c in model.get("constraints") or []]
    return [*column_level, *model_level]


def model_contract_sql(model: Mapping[str, Any], sql: str) -> str:
    """`contract_select_sql` for dbt's model node."""
    columns = model["columns"]
    names = [str(c.get("name", key)) for key, c in columns.items()]
    not_null = not_null_columns(columns, model.get("constraints") or [])
    return contract_select_sql(model["name"], sql, names, not_null)
