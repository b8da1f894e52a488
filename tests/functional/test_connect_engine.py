"""`method: connect`: a small project on a Spark Connect server that the test starts
(`dbt-s3tables-engine start connect`, the embedded catalog): a seed, a table, an
incremental merge run twice, a Python model (DataFrame API over Connect), `dbt debug`; the
results are read back with PyIceberg. An unreachable server fails in one sentence, and
pyspark 3.5's client warnings go to dbt's log file, not the console. The command reports
the server it started, listens where it says, and refuses a taken port.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest

from dbt.adapters.s3tables.catalogs.jars import installed_spark_line
from dbt.adapters.s3tables.engines.local_services import connect_binds_an_address
from tests.functional.emulators import (
    connect_bind,
    connect_output,
    engine_command,
    listening_addresses,
    services,
    services_alive,
)
from tests.functional.harness import (
    conf_probe_project,
    dbt_in,
    iceberg_rows,
    local_catalog,
    write_profiles,
    write_project,
)
from tests.property.walks import machine_on_server, walk_keyed_reads

MODELS = {
    "numbers.sql": "{{ config(materialized='table') }}\n"
    "select id, cast(id * 2 as bigint) as doubled from range(1, 101)",
    "merged.sql": "{{ config(materialized='incremental', unique_key='id', "
    "incremental_strategy='merge') }}\n"
    "select id, doubled + {{ 1000 if is_incremental() else 0 }} as value "
    "from {{ ref('numbers') }} where id <= {{ 60 if is_incremental() else 50 }}",
    "seed_copy.sql": "{{ config(materialized='table') }}\n"
    "select code, amount, day from {{ ref('prices') }}",
    # `df.id` (a column of the referenced frame) is what Spark 3.5's server cannot resolve
    # on a `session.table` frame; the adapter reads relations through SQL over Connect.
    # upstream_changes() over Connect: its appends, read once each (the read is recorded
    # in a table property after the commit: at least once, see the docs).
    "appended.sql": "{{ config(materialized='incremental', incremental_strategy='append') }}\n"
    "select id from range({{ var('start', 0) }}, {{ var('start', 0) }} + 3)",
    "appended_copy.sql": "{{ config(materialized='incremental', "
    "incremental_strategy='append') }}\n"
    "select id from {{ upstream_changes(ref('appended')) }}",
    # The same read merged on its key: a range read twice changes nothing.
    "appended_merged.sql": "{{ config(materialized='incremental', unique_key='id') }}\n"
    "select id from {{ upstream_changes(ref('appended')) }}",
    # The same read, audited: published when its test passes, with the record of its read.
    "audited_copy.sql": "{{ config(materialized='incremental', incremental_strategy='append', "
    "audit_before_publish=true) }}\n"
    "select id from {{ upstream_changes(ref('appended')) }}",
    "audited_copy.yml": "version: 2\nmodels:\n  - name: audited_copy\n    columns:\n"
    "      - name: id\n        data_tests: [not_null]\n",
    "tripled.py": "def model(dbt, session):\n"
    "    df = dbt.ref('numbers')\n"
    "    return df.filter(df.id <= 5).withColumn('tripled', df.id * 3)\n",
}
SEED = "code,amount,day\na,1.50,2024-01-02\nb,20.25,2024-03-04\n"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("connect-run")


@pytest.fixture(scope="module")
def server(run_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    warehouse = tmp_path_factory.mktemp("connect-warehouse")
    state = services("start", "connect", run_dir, "--warehouse", str(warehouse))
    yield state
    assert services("stop", "connect", run_dir) == {"stopped": state["pids"], "not_signalled": []}
    assert not services_alive(run_dir, "connect")


def write_connect_project(root: Path, output: dict) -> Path:
    files = {f"models/{name}": text for name, text in MODELS.items()}
    files["seeds/prices.csv"] = SEED
    return write_project(
        root / "project",
        "connect_project",
        profile="connect",
        output=output,
        profiles_dir=root,
        target="warm",
        settings={"config-version": 2},
        files=files,
    )


def rows(warehouse: str, table: str) -> list[dict]:
    return iceberg_rows(local_catalog(warehouse), "analytics", table, sort=True)


@pytest.fixture(scope="module")
def first_build(
    server: dict, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    """The project's first `dbt build`: its folder, project and result."""
    folder = tmp_path_factory.mktemp("connect-build")
    project = write_connect_project(folder, connect_output(server))
    return folder, project, dbt_in(folder, project, "build", "--vars", "{}")


def test_upstream_changes_reads_each_append_once_over_connect(
    server: dict, first_build: tuple[Path, Path, subprocess.CompletedProcess[str]]
) -> None:
    folder, project, first = first_build
    assert first.returncode == 0, first.stdout[-6000:]
    warehouse = server["warehouse"]
    key = "dbt.read.local.analytics.appended"
    first_read = local_catalog(warehouse).load_table("analytics", "appended_merged").properties[key]
    added = dbt_in(folder, project, "run", "-s", "appended", "--vars", "{start: 3}")
    assert added.returncode == 0, added.stdout[-6000:]
    for _ in range(2):  # the second run finds nothing new
        copied = dbt_in(folder, project, "run", "-s", "appended_copy", "--vars", "{}")
        assert copied.returncode == 0, copied.stdout[-6000:]
        assert sorted(r["id"] for r in rows(warehouse, "appended_copy")) == list(range(6))
    assert "cannot record the read in the model's commit" in copied.stdout
    properties = local_catalog(warehouse).load_table("analytics", "appended_copy").properties
    upstream = local_catalog(warehouse).load_table("analytics", "appended")
    snapshot = upstream.current_snapshot()
    assert snapshot is not None
    recorded = properties[key]
    copy = local_catalog(warehouse).load_table("analytics", "appended_copy")
    copied = copy.current_snapshot()
    assert copied is not None
    # Bound to the copy's snapshot it describes (an undo of that build makes it void).
    assert recorded == (
        f"{upstream.metadata.table_uuid}@{snapshot.snapshot_id};on={copied.snapshot_id}"
    )

    # At least once: a build whose property write was lost (killed between its commit and
    # the write) leaves the record of the read before; the range is read again, and the
    # merge makes the second read harmless.
    merged = dbt_in(folder, project, "run", "-s", "appended_merged", "--vars", "{}")
    assert merged.returncode == 0, merged.stdout[-6000:]
    table = local_catalog(warehouse).load_table("analytics", "appended_merged")
    table.transaction().set_properties({key: first_read}).commit_transaction()
    again = dbt_in(folder, project, "run", "-s", "appended_merged", "--vars", "{}")
    assert again.returncode == 0, again.stdout[-6000:]
    assert "reads local.analytics.appended: 3 appended rows" in again.stdout
    assert sorted(r["id"] for r in rows(warehouse, "appended_merged")) == list(range(6))


def test_project_builds_over_spark_connect(
    server: dict, first_build: tuple[Path, Path, subprocess.CompletedProcess[str]]
) -> None:
    folder, project, first = first_build
    assert first.returncode == 0, first.stdout[-6000:]
    second = dbt_in(folder, project, "run", "--select", "merged")
    assert second.returncode == 0, second.stdout[-6000:]

    warehouse = server["warehouse"]
    assert len(rows(warehouse, "numbers")) == 100
    merged = {row["id"]: row["value"] for row in rows(warehouse, "merged")}
    # 1..50 from the first run, 1..60 rewritten (and 51..60 added) by the merge.
    assert merged == {i: 2 * i + 1000 for i in range(1, 61)}
    assert [(r["id"], r["tripled"]) for r in rows(warehouse, "tripled")] == [
        (i, 3 * i) for i in range(1, 6)
    ]
    prices = [(r["code"], float(r["amount"]), str(r["day"])) for r in rows(warehouse, "prices")]
    assert prices == [("a", 1.5, "2024-01-02"), ("b", 20.25, "2024-03-04")]
    assert len(rows(warehouse, "seed_copy")) == 2


def test_client_release_warnings_go_to_the_log_file_not_the_console(
    first_build: tuple[Path, Path, subprocess.CompletedProcess[str]],
) -> None:
    folder, _, build = first_build
    assert build.returncode == 0, build.stdout[-6000:]
    assert "ReleaseExecute failed" not in build.stdout + build.stderr
    # pyspark 3.5's client warns when a finished operation's release runs after dbt closed
    # that connection's channel, which depends on timing (pyspark 4 logs it to its own
    # logger, off by default); where it did, the warning is in the log file. The routing
    # itself is tests/unit/engines/test_connect.py's.
    log = (folder / "logs" / "dbt.log").read_text()
    warned = "ReleaseExecute failed" in log
    assert not warned or "Spark Connect client (harmless): ReleaseExecute failed" in log


def test_the_server_listens_where_the_command_says(run_dir: Path, server: dict) -> None:
    listening = listening_addresses(server["port"])
    if connect_binds_an_address(installed_spark_line()):
        assert server["bind"] == "127.0.0.1" and listening == {"127.0.0.1"}
    else:  # Spark 3.5's server: every interface, as the command's warning says
        assert server["bind"] == "0.0.0.0" and listening == {"::"}
    status = engine_command("status", "connect", run_dir)
    assert status.returncode == 0
    where = "127.0.0.1" if server["bind"] == "127.0.0.1" else "every interface"
    assert status.stdout == (
        f"connect: running at 127.0.0.1:{server['port']} (Spark {pyspark.__version__}; pid "
        f"{server['pids'][0]}), listening on {where}, warehouse {server['warehouse']}; logs "
        f"in {run_dir}\n"
    )


def test_a_second_start_reports_the_running_server_or_refuses_its_port(
    tmp_path: Path, run_dir: Path, server: dict
) -> None:
    port = server["port"]
    again = engine_command("start", "connect", run_dir, "--warehouse", server["warehouse"])
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(
        f"The Spark Connect server was already running at 127.0.0.1:{port}"
    )
    assert f"      method: connect\n      host: 127.0.0.1\n      port: {port}\n" in again.stdout
    elsewhere = ("--warehouse", str(tmp_path / "wh"), "--port", str(port), *connect_bind())
    taken = engine_command("start", "connect", tmp_path / "run", *elsewhere)
    assert taken.returncode == 1 and taken.stdout == ""
    on = "" if server["bind"] == "0.0.0.0" else " on 127.0.0.1"
    assert taken.stderr.startswith(f"Port {port}{on} is taken (by another Spark Connect server")
    assert "choose another port with `--port N`" in taken.stderr


def test_dbt_debug_names_the_server(tmp_path: Path, server: dict) -> None:
    project = write_connect_project(tmp_path, connect_output(server))
    result = dbt_in(tmp_path, project, "debug", target=False, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:]
    assert "(Spark Connect server)" in result.stdout
    assert "method: connect" in result.stdout


def test_unreachable_connect_server_fails_in_one_sentence(tmp_path: Path) -> None:
    output = connect_output({"host": "127.0.0.1", "port": 9, "warehouse": str(tmp_path / "wh")})
    project = write_connect_project(tmp_path, output)
    result = dbt_in(tmp_path, project, "run", "--select", "numbers")
    assert result.returncode != 0
    assert "Cannot reach the Spark Connect server at 127.0.0.1:9 within 3 s" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_a_token_against_a_server_without_tls_fails_in_one_sentence(
    tmp_path: Path, server: dict
) -> None:
    # A token makes the client speak TLS; the local server does not. This used to hang
    # `dbt debug` for about ten minutes in pyspark's retries, printing gRPC's handshake log.
    token = "tok-5e3c-not-for-logs"
    project = write_connect_project(tmp_path, connect_output(server, token=token))
    started = time.monotonic()
    result = dbt_in(tmp_path, project, "debug", target=False, timeout=300)
    assert time.monotonic() - started < 60
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "with a `token`, Spark Connect's client speaks TLS" in output
    assert "Fix: remove `token`" in output
    assert not re.search(r"^[IEW]\d{4} ", output, re.MULTILINE), output  # gRPC's log lines
    assert token not in output and "Traceback" not in output


def test_spark_conf_reaches_the_connect_session(tmp_path: Path, server: dict) -> None:
    project = conf_probe_project(tmp_path)
    conf = {"spark.sql.shuffle.partitions": 2}
    write_profiles(tmp_path, "integration_tests", connect_output(server, spark_conf=conf), "engine")
    result = dbt_in(tmp_path, project, "run")
    assert result.returncode == 0, result.stdout[-4000:]
    assert rows(server["warehouse"], "conf_probe") == [{"shuffle_partitions": "2"}]

    output = connect_output(server, spark_conf={"spark.executor.memory": "3g"})
    write_profiles(tmp_path, "integration_tests", output, "engine")
    refused = dbt_in(tmp_path, project, "run")
    assert refused.returncode != 0
    assert (
        "The Spark Connect server refused `spark_conf` `spark.executor.memory`: Spark reads it "
        "only when it starts" in refused.stdout
    ), refused.stdout[-4000:]


def test_an_audited_build_records_its_read_at_its_publish_over_connect(
    server: dict, first_build: tuple[Path, Path, subprocess.CompletedProcess[str]]
) -> None:
    """Spark 3.5's Connect server cannot tag a commit: an audited build's read is recorded
    when the build publishes, so the next build reads only what is new (it used to record
    nothing, and every later build was refused)."""
    folder, project, first = first_build
    assert first.returncode == 0, first.stdout[-6000:]
    warehouse = server["warehouse"]

    def ids(table: str) -> list[int]:
        return sorted(r["id"] for r in rows(warehouse, table))

    # The first build published the copy with the record of its read.
    copy = local_catalog(warehouse).load_table("analytics", "audited_copy")
    assert "dbt.read.local.analytics.appended" in copy.properties
    added = dbt_in(folder, project, "run", "-s", "appended", "--vars", "{start: 100}")
    assert added.returncode == 0, added.stdout[-6000:]
    for _ in range(2):  # the second build finds nothing new
        built = dbt_in(folder, project, "build", "-s", "audited_copy", "--vars", "{}")
        assert built.returncode == 0, built.stdout[-6000:]
        assert "audited_copy: staged on branch" in built.stdout
        assert ids("audited_copy") == ids("appended")


def test_the_promises_keyed_walk_holds_over_connect(tmp_path: Path, server: dict) -> None:
    """The promises' state machine (tests/property) over the Connect server: its keyed
    walk, every promise checked after every step (test_engines.py walks it over thrift),
    its keyed mirrors read file by file (before, a keyed read over a server compared two
    whole snapshots). The reads of an upstream's files of an older schema, by field id,
    run over thrift (test_engines.py): the same SQL, from the same planner."""
    connect = {"method": "connect", "host": server["host"], "port": server["port"]}
    walk_keyed_reads(machine_on_server(server["warehouse"], tmp_path, connect))
