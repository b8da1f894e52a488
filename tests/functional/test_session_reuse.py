"""A dbt connection's SparkSession is lent to the next connection (engines/session_pool.py):
a run of many models keeps a few catalog clients open, not one per node, and nothing a
model set in its session (SQL settings, temporary views, the current namespace) reaches
a later model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from tests.functional.harness import spark_jvm_child

TABLES = 10


def open_catalog_files(pid: int, warehouse: str) -> int:
    """How many files of the embedded catalog's database the JVM holds open."""
    found = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        found += target.startswith(warehouse) and "catalog.db" in target
    return found


class TestSessionsAreLentAgain:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, dbt_profile_target: dict) -> dict:
        # One thread: each model takes the session the one before gave back.
        return {**dbt_profile_target, "threads": 1}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        files = {
            f"t_{i:02}.sql": f"{{{{ config(materialized='table') }}}}\nselect {i} as id"
            for i in range(TABLES)
        }
        # Sets a SQL setting in its header and moves its session to its own namespace:
        # its session is not lent again.
        files["a_changes_its_session.sql"] = (
            "{{ config(materialized='table', pre_hook='use ' ~ this.schema) }}\n"
            "{% call set_sql_header(config) %}set spark.sql.ansi.enabled = true;"
            "{% endcall %}\n"
            "select 1 as id"
        )
        # Leaves a temporary view: dropped when its session is given back.
        files["b_leaves_a_view.sql"] = (
            "{{ config(materialized='table', pre_hook='create or replace temporary view "
            "left_behind as select 1 as id') }}\n"
            "select l.id from left_behind l join {{ ref('a_changes_its_session') }} a "
            "on l.id = a.id"
        )
        # Runs after both: its view's name is free (a view of that name would fail its
        # hook), a bad cast gives null (no ANSI mode), and its namespace is not the first
        # model's.
        files["c_checks_its_session.sql"] = (
            "{{ config(materialized='table', pre_hook='create temporary view left_behind "
            "as select 2 as id') }}\n"
            "select cast('y' as int) is null as cast_gives_null, "
            "current_database() as namespace from {{ ref('b_leaves_a_view') }}"
        )
        return files

    def test_a_run_keeps_its_catalog_clients_and_models_keep_their_settings(
        self, project, warehouse_dir: str
    ) -> None:
        run_dbt(["run", "--select", "t_00"])  # the JVM is up (an earlier test's or this)
        jvm = spark_jvm_child(os.getpid())
        assert jvm is not None, "this process runs no Spark JVM"
        before = open_catalog_files(jvm, warehouse_dir)
        results = run_dbt(["run"])
        assert len(results) == TABLES + 3
        # A new session opens a catalog client of two files (the database and its
        # write-ahead log) that nothing closes: a session per node held 2 more per model.
        # Here at most two new sessions: the first, and the one after the session the
        # first model changed.
        grown = open_catalog_files(jvm, warehouse_dir) - before
        assert grown <= 4, f"{grown} more catalog files open after {TABLES + 3} models"
        row = project.run_sql(
            f"select * from {project.test_schema}.c_checks_its_session", fetch="one"
        )
        assert row[0] is True
        assert row[1] != project.test_schema
