"""The catalog DDL macros through `dbt run-operation`, and `persist_docs` through `dbt run`.

Every effect is read back independently, by Spark SQL (`DESCRIBE`, `SHOW ...`), which
goes through Java Iceberg while the macros write through PyIceberg. A failing operation
must fail the command, say why, and change nothing Spark can see.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.harness import (
    column_names,
    described,
    described_columns,
    query_rows,
    table_comment,
)

# --- helpers -------------------------------------------------------------------------


def operation_args(macro: str, args: dict) -> list[str]:
    # JSON is YAML: `--args` takes it as is.
    return ["run-operation", macro, "--args", json.dumps(args)]


def operation(macro: str, **args: object) -> None:
    run_dbt(operation_args(macro, args))


def failing_operation(macro: str, message: str, **args: object) -> None:
    """Run an operation that must fail, with `message` in its output."""
    _, log = run_dbt_and_capture(operation_args(macro, args), expect_pass=False)
    assert message in log, log[-2000:]


def namespaces(project) -> set[str]:
    return {row[0] for row in project.run_sql("show namespaces", fetch="all")}


def tables(project, namespace: str) -> list[str]:
    return sorted(row[1] for row in project.run_sql(f"show tables in {namespace}", fetch="all"))


def new_namespace(project, suffix: str) -> str:
    """A namespace name of this test, dropped (with its tables) when the class ends."""
    name = f"{project.test_schema}_{suffix}"
    project.created_schemas.append(name)
    return name


ORDERS_COLUMNS = [
    {"id": "bigint"},
    {"customer": "string"},
    {"amount": "decimal(12,2)"},
    {"tags": "array<string>"},
]
ORDERS_DESCRIBED = [
    ("id", "bigint", None),
    ("customer", "string", None),
    ("amount", "decimal(12,2)", None),
    ("tags", "array<string>", None),
]


def create_orders(project, suffix: str) -> tuple[str, str]:
    namespace = new_namespace(project, suffix)
    operation("s3tables_create_namespace", name=namespace)
    table = f"{namespace}.orders"
    operation("s3tables_create_table", name=table, columns=ORDERS_COLUMNS)
    return namespace, table


# --- run-operation macros ------------------------------------------------------------


class TestCatalogDdlOperations:
    def test_namespace_create_and_drop(self, project) -> None:
        namespace = new_namespace(project, "ops_ns")
        operation(
            "s3tables_create_namespace",
            name=namespace,
            comment="Reporting tables",
            properties={"owner_team": "bi"},
        )
        assert namespace in namespaces(project)
        info = described(project, f"describe namespace extended {namespace}")
        assert info["Comment"] == "Reporting tables"
        assert "owner_team" in info["Properties"] and "bi" in info["Properties"]

        failing_operation(
            "s3tables_create_namespace",
            f"namespace `{namespace}` already exists",
            name=namespace,
            comment="Other",
        )
        info = described(project, f"describe namespace extended {namespace}")
        assert info["Comment"] == "Reporting tables"

        operation("s3tables_drop_namespace", name=namespace)
        assert namespace not in namespaces(project)
        failing_operation(
            "s3tables_drop_namespace", f"namespace `{namespace}` does not exist", name=namespace
        )
        operation("s3tables_drop_namespace", name=namespace, ignore_not_found=True)
        assert namespace not in namespaces(project)

    def test_create_table(self, project) -> None:
        namespace = new_namespace(project, "ops_create")
        operation("s3tables_create_namespace", name=namespace)
        table = f"{namespace}.orders"
        operation(
            "s3tables_create_table",
            name=table,
            columns=ORDERS_COLUMNS,
            not_null=["id"],
            comment="One row per order",
        )
        assert tables(project, namespace) == ["orders"]
        assert described_columns(project, table) == ORDERS_DESCRIBED
        assert table_comment(project, table) == "One row per order"
        ddl = project.run_sql(f"show create table {table}", fetch="one")[0]
        assert "id BIGINT NOT NULL" in ddl
        assert "customer STRING NOT NULL" not in ddl

        # The table is a real Iceberg table Spark writes and reads.
        project.run_sql(f"insert into {table} values (1, 'ann', 12.50, array('x'))")
        assert query_rows(project, f"select id, customer, amount from {table}") == [
            (1, "ann", pytest.approx(12.5))
        ]

    def test_create_existing_table(self, project) -> None:
        _, table = create_orders(project, "ops_conflict")
        project.run_sql(f"insert into {table} values (1, 'ann', 12.50, array('x'))")
        failing_operation(
            "s3tables_create_table",
            f"table `{table}` already exists",
            name=table,
            columns=[{"other": "int"}],
            comment="new",
        )
        operation(
            "s3tables_create_table",
            name=table,
            columns=[{"other": "int"}],
            on_conflict="ignore",
            comment="new",
        )
        assert described_columns(project, table) == ORDERS_DESCRIBED
        assert table_comment(project, table) is None
        assert project.run_sql(f"select count(*) from {table}", fetch="one")[0] == 1

    def test_replace_table(self, project) -> None:
        _, table = create_orders(project, "ops_replace")
        project.run_sql(f"insert into {table} values (1, 'ann', 12.50, array('x'))")
        operation(
            "s3tables_create_table",
            name=table,
            columns=[{"order_id": "bigint"}, {"total": "double"}],
            on_conflict="replace",
            comment="Replaced",
        )
        assert described_columns(project, table) == [
            ("order_id", "bigint", None),
            ("total", "double", None),
        ]
        assert table_comment(project, table) == "Replaced"
        assert project.run_sql(f"select count(*) from {table}", fetch="one")[0] == 0

    def test_invalid_arguments_change_nothing(self, project) -> None:
        namespace = new_namespace(project, "ops_invalid")
        operation("s3tables_create_namespace", name=namespace)
        table = f"{namespace}.orders"
        failing_operation(
            "s3tables_create_table",
            "must be `<namespace>.<table>`",
            name="orders",
            columns=ORDERS_COLUMNS,
        )
        failing_operation(
            "s3tables_create_table",
            "column `price`: `money` is not a Spark SQL type: unknown type `money`",
            name=table,
            columns=[{"id": "bigint"}, {"price": "money"}],
        )
        failing_operation(
            "s3tables_create_table",
            "column `ID` is declared twice",
            name=table,
            columns=[{"id": "bigint"}, {"ID": "int"}],
        )
        failing_operation(
            "s3tables_create_table",
            "on_conflict `overwrite` is unknown",
            name=table,
            columns=ORDERS_COLUMNS,
            on_conflict="overwrite",
        )
        failing_operation(
            "s3tables_create_table",
            "not_null names unknown column(s): nope",
            name=table,
            columns=ORDERS_COLUMNS,
            not_null=["nope"],
        )
        missing = f"{project.test_schema}_ops_missing"
        failing_operation(
            "s3tables_create_table",
            f"namespace `{missing}` does not exist",
            name=f"{missing}.orders",
            columns=ORDERS_COLUMNS,
        )
        assert tables(project, namespace) == []
        assert missing not in namespaces(project)

    def test_a_decimal_spark_cannot_read_is_refused(self, project) -> None:
        """Spark refuses decimal(5,10) ("scale cannot be greater than precision"): a table
        declared with it would be created yet unreadable by `describe` and `select`."""
        namespace = new_namespace(project, "ops_decimal")
        operation("s3tables_create_namespace", name=namespace)
        failing_operation(
            "s3tables_create_table",
            "column `ratio`: `decimal(5,10)` is not a Spark SQL type",
            name=f"{namespace}.ratios",
            columns=[{"id": "bigint"}, {"ratio": "decimal(5,10)"}],
        )
        assert tables(project, namespace) == []

    def test_add_and_remove_columns(self, project) -> None:
        _, table = create_orders(project, "ops_columns")
        project.run_sql(f"insert into {table} values (1, 'ann', 12.50, array('x'))")

        operation(
            "s3tables_add_column", table=table, name="note", type="varchar(40)", comment="Free text"
        )
        operation("s3tables_add_column", table=table, name="shipped_at", type="timestamp")
        operation(
            "s3tables_add_column",
            table=table,
            name="address",
            type="struct<street:string,`zip code`:int>",
        )
        assert described_columns(project, table) == [
            *ORDERS_DESCRIBED,
            ("note", "string", "Free text"),
            ("shipped_at", "timestamp", None),
            ("address", "struct<street:string,zip code:int>", None),
        ]
        assert query_rows(project, f"select id, note, shipped_at, address from {table}") == [
            (1, None, None, None)
        ]

        failing_operation(
            "s3tables_add_column",
            f"table `{table}` already has a column `Customer`",
            table=table,
            name="Customer",
            type="int",
        )
        operation(
            "s3tables_add_column", table=table, name="Customer", type="int", if_not_exists=True
        )
        failing_operation(
            "s3tables_add_column",
            "column `bad`: `array<` is not a Spark SQL type",
            table=table,
            name="bad",
            type="array<",
        )
        assert column_names(project, table) == [
            "id",
            "customer",
            "amount",
            "tags",
            "note",
            "shipped_at",
            "address",
        ]

        operation("s3tables_remove_column", table=table, name="CUSTOMER")
        operation("s3tables_remove_column", table=table, name="tags")
        operation("s3tables_remove_column", table=table, name="address")
        failing_operation(
            "s3tables_remove_column",
            f"table `{table}` has no column `ghost`",
            table=table,
            name="ghost",
        )
        operation("s3tables_remove_column", table=table, name="ghost", if_exists=True)
        assert column_names(project, table) == ["id", "amount", "note", "shipped_at"]
        assert query_rows(project, f"select * from {table}") == [
            (1, pytest.approx(12.5), None, None)
        ]
        failing_operation(
            "s3tables_add_column",
            f"table `{table}_ghost` does not exist",
            table=f"{table}_ghost",
            name="x",
            type="int",
        )

    def test_drop_table_and_namespace(self, project) -> None:
        namespace, table = create_orders(project, "ops_drop")
        failing_operation(
            "s3tables_drop_namespace",
            f"namespace `{namespace}` still holds 1 table(s) or view(s) (orders)",
            name=namespace,
        )
        assert namespace in namespaces(project)
        assert described_columns(project, table) == ORDERS_DESCRIBED

        operation("s3tables_drop_table", name=table)
        assert tables(project, namespace) == []
        failing_operation("s3tables_drop_table", f"table `{table}` does not exist", name=table)
        operation("s3tables_drop_table", name=table, ignore_not_found=True)

        operation("s3tables_drop_namespace", name=namespace)
        assert namespace not in namespaces(project)

    def test_a_view_keeps_its_namespace(self, project) -> None:
        namespace = new_namespace(project, "ops_view")
        operation("s3tables_create_namespace", name=namespace)
        project.run_sql(f"create view {namespace}.answer as select 42 as value")
        failing_operation(
            "s3tables_drop_namespace",
            f"namespace `{namespace}` still holds 1 table(s) or view(s) (answer)",
            name=namespace,
        )
        assert project.run_sql(f"select value from {namespace}.answer", fetch="one")[0] == 42


# --- persist_docs --------------------------------------------------------------------

TABLE_MODEL = """
{{ config(materialized='table', persist_docs={'relation': true, 'columns': true}) }}
select cast(id as bigint) as id, cast(amount as decimal(10,2)) as amount, note
from values (1, 9.5, 'a'), (2, 3.25, 'b') as t(id, amount, note)
"""

INCREMENTAL_MODEL = """
{{ config(materialized='incremental', incremental_strategy='append',
          persist_docs={'relation': true, 'columns': true}) }}
select cast(1 as bigint) as id, 'x' as label
"""


def schema_yml(orders_description: str, id_description: str) -> str:
    return f"""
version: 2
models:
  - name: docs_orders
    description: "{orders_description}"
    columns:
      - name: id
        description: "{id_description}"
      # Matched to the table's `amount` case-insensitively.
      - name: AMOUNT
        description: "Amount in EUR, tax included"
      - name: note
  - name: docs_events
    description: "Events, appended"
    columns:
      - name: id
        description: "Event key"
"""


class TestPersistDocs:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "docs_orders.sql": TABLE_MODEL,
            "docs_events.sql": INCREMENTAL_MODEL,
            "schema.yml": schema_yml("Orders, one row per order (it's tested)", "Order key"),
        }

    def test_descriptions_reach_the_catalog(self, project) -> None:
        results = run_dbt(["run"])
        assert len(results) == 2
        orders = f"{project.test_schema}.docs_orders"
        events = f"{project.test_schema}.docs_events"

        assert table_comment(project, orders) == "Orders, one row per order (it's tested)"
        assert described_columns(project, orders) == [
            ("id", "bigint", "Order key"),
            ("amount", "decimal(10,2)", "Amount in EUR, tax included"),
            ("note", "string", None),
        ]
        assert table_comment(project, events) == "Events, appended"
        assert described_columns(project, events) == [
            ("id", "bigint", "Event key"),
            ("label", "string", None),
        ]

        # A second run (replace and append) keeps them.
        run_dbt(["run"])
        assert table_comment(project, orders) == "Orders, one row per order (it's tested)"
        assert [c[2] for c in described_columns(project, orders)] == [
            "Order key",
            "Amount in EUR, tax included",
            None,
        ]
        assert described_columns(project, events)[0] == ("id", "bigint", "Event key")
        assert project.run_sql(f"select count(*) from {events}", fetch="one")[0] == 2

        # Changed descriptions replace the old ones.
        schema_path = Path(project.project_root) / "models" / "schema.yml"
        schema_path.write_text(schema_yml("Orders, revised", "The order key"))
        run_dbt(["run"])
        assert table_comment(project, orders) == "Orders, revised"
        assert described_columns(project, orders)[0] == ("id", "bigint", "The order key")
