"""The functional tests' shared harness: the one definition of each helper more than one
test file needs. It owns

- writing dbt projects: `write_project` (dbt_project.yml, profiles.yml, models and other
  files), `write_profiles`, `write_files`, `local_output` (a profile output on the embedded
  catalog), `batch_model` (a model whose query a var picks), `day` (test data dates),
  `conf_probe_project` (a project recording a session setting), and `Project`: a project
  in its own folder with its own warehouse, run in dbt subprocesses;
- running dbt as a subprocess: `DBT`, `dbt_env`, `dbt_command`, `run_dbt_process` (exit
  code and output), `dbt_in` (everything of the run in one folder) and
  `kill_while_running` (SIGKILL once a node's statement runs); what a run leaves:
  `read_run_results`, `passed_run_results`, `node_statuses`, `last_invocation_id`,
  `adapter_responses`;
- a long-running command (dbt, the watch) and its Spark JVM in the process table:
  `start_logged` (its console to a file), `wait_for_line`, `driver_jvm_of`,
  `process_state`, `jvm_alive`, `seconds_until_gone`;
- running dbt in process (dbt's `run_dbt`, on the `project` fixture of dbt's test
  framework): `run_vars`, `results_by_model`, `assert_all_passed`, `run_batches`,
  `assert_model_passed`;
- reading tables back through Spark on that fixture: `query_rows`, `table_rows`,
  `sort_rows` (by `nulls_first` unless told), `relation`, `described_columns`,
  `column_types`, `column_names`, `table_properties`, `described` (a `DESCRIBE ...
  EXTENDED` as a mapping), `table_comment`; and Iceberg snapshots as
  `<table>.snapshots` shows them: `snapshot_rows`, `snapshot_ids`, `snapshot_count`,
  `latest_snapshot_id`, `latest_snapshot_summary`;
- reading tables back through PyIceberg: `local_catalog`, `iceberg_rows`, `warehouse_tables`;
- the integration project (`integration_tests/`): `build_integration_project`, and
  `IntegrationBuilds`, what the `integration_builds` fixture (tests/conftest.py) holds;
- work done once per pytest run, however many worker processes (pytest-xdist) need it:
  `once_per_run`;
- checking what a person reads: `assert_readable`.

The emulators and Spark services the tests start are in `emulators.py`; a docs site in
headless Chromium is `docs_site.py`. pytest rewrites this module's asserts
(tests/conftest.py registers it), as it does a test file's.
"""

from __future__ import annotations

import datetime
import fcntl
import json
import os
import pickle
import pwd
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
import yaml
from dbt.tests.util import run_dbt
from pyiceberg.manifest import FileFormat
from pyiceberg.table import Table

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog

if TYPE_CHECKING:
    from dbt.tests.fixtures.project import TestProjInfo

# The dbt of this virtualenv.
DBT = str(Path(sys.executable).parent / "dbt")
# The project with a model and a data test for every feature (docs/contributing.md).
INTEGRATION_PROJECT = Path(__file__).resolve().parents[2] / "integration_tests"
# The project, profile and schema name of a `Project`.
SCHEMA = "faults"


# --- writing projects -------------------------------------------------------------------


def write_files(root: Path, files: Mapping[str, str]) -> None:
    """Each text of `files` at its path relative to `root` (folders made as needed)."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def write_profiles(
    folder: Path, profile: str, output: Mapping[str, object], target: str = "dev"
) -> None:
    """`folder`/profiles.yml with one profile of one target, `output`."""
    folder.mkdir(parents=True, exist_ok=True)
    profiles = {profile: {"target": target, "outputs": {target: dict(output)}}}
    (folder / "profiles.yml").write_text(yaml.safe_dump(profiles))


def write_project(
    root: Path,
    name: str,
    *,
    profile: str | None = None,
    output: Mapping[str, object] | None = None,
    profiles_dir: Path | None = None,
    target: str = "dev",
    files: Mapping[str, str] | None = None,
    settings: Mapping[str, object] | None = None,
) -> Path:
    """A dbt project in `root` (returned): dbt_project.yml naming it `name` and its profile
    `profile` (`name` unless given), with `settings` added; `files` (paths relative to
    `root`: `models/x.sql`, `seeds/y.csv`...). With `output`, the profile too, in
    `profiles_dir` (`root` unless given)."""
    root.mkdir(parents=True, exist_ok=True)
    profile = profile or name
    project = {"name": name, "version": "1.0", "profile": profile, **(settings or {})}
    (root / "dbt_project.yml").write_text(yaml.safe_dump(project))
    if output is not None:
        write_profiles(profiles_dir or root, profile, output, target)
    write_files(root, files or {})
    return root


def local_output(warehouse: Path | str, schema: str, **keys: object) -> dict[str, object]:
    """A profile output on the embedded catalog in `warehouse`, Spark in process
    (`local[2]`) with one thread; `keys` add to it or replace."""
    return {
        "type": "s3tables",
        "schema": schema,
        "warehouse": str(warehouse),
        "master": "local[2]",
        "threads": 1,
        **keys,
    }


def batch_model(config: str, batches: Mapping[int, str]) -> str:
    """A model whose query is chosen by `var('batch', 1)`; `config` is the text inside
    `config(...)`."""
    lines = ["{{ config(" + config + ") }}"]
    for index, (batch, sql) in enumerate(sorted(batches.items())):
        keyword = "if" if index == 0 else "elif"
        lines.append(f"{{% {keyword} var('batch', 1) | int == {batch} %}}")
        lines.append(sql.strip())
    lines.append("{% endif %}")
    return "\n".join(lines) + "\n"


def day(n: int) -> datetime.date:
    """January `n`, 2024."""
    return datetime.date(2024, 1, n)


# --- dbt in a subprocess ------------------------------------------------------------------


def dbt_env(**extra: str) -> dict[str, str]:
    """This process's environment with dbt's usage statistics and colours off, and `extra`."""
    return {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "NO_COLOR": "1", **extra}


def dbt_command(
    args: Iterable[str],
    *,
    project_dir: Path,
    profiles_dir: Path,
    target_path: Path | None = None,
    log_path: Path | None = None,
    dbt: str | Path = DBT,
) -> list[str]:
    """The command line of `dbt args` on the project in `project_dir`; `--target-path` and
    `--log-path` only when given (dbt's defaults are `target/` and `logs/` there)."""
    command = [str(dbt), *args, "--project-dir", str(project_dir)]
    command += ["--profiles-dir", str(profiles_dir)]
    if target_path is not None:
        command += ["--target-path", str(target_path)]
    if log_path is not None:
        command += ["--log-path", str(log_path)]
    return command


# The tests' own long-lived Spark JVMs (one per test process, and the servers the tests
# start) evaluate expressions without generating code: on a test's few rows, compiling
# code for each query costs more CPU than it saves (the snapshot conformance classes: 126
# CPU seconds down to 105). Spark's results are the same either way. A dbt process's
# short-lived JVM keeps Spark's default: no gain was measured there.
TEST_SPARK_SQL_SETTINGS = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}
# Every JVM the tests start (each test process's own, each dbt process's, each server's)
# compiles with C1 alone: on the tests' small data, C2's compilations cost more CPU than
# they save, and `make test` is bound by CPU. Measured in CPU seconds: the integration
# project's build in a dbt process 104 with C2 and 68 with C1 only; a Thrift Server's
# two builds of it 95 and 57; a test process running the incremental and snapshot
# conformance files 369 and 287, in the same wall time. The results are the same. C1's
# code takes more room than the default code cache leaves on Spark 4.1. tests/conftest.py
# puts them in `SPARK_SUBMIT_OPTS`, which Spark's launcher adds to the JVM it starts.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=256m"

# For a server's spark-submit: Spark reads `spark.*` Java system properties as settings.
TEST_SPARK_SUBMIT_OPTS = " ".join(
    [*(f"-D{k}={v}" for k, v in TEST_SPARK_SQL_SETTINGS.items()), TEST_JVM_OPTIONS]
)


def run_dbt_process(
    args: Iterable[str],
    *,
    project_dir: Path,
    profiles_dir: Path,
    target_path: Path | None = None,
    log_path: Path | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 600,
    dbt: str | Path = DBT,
) -> subprocess.CompletedProcess[str]:
    """`dbt args` in a process of its own, waited for: its exit code (`returncode`) and
    output (`stdout`, `stderr`). `env`: the whole environment (this process's when None)."""
    command = dbt_command(
        args,
        project_dir=project_dir,
        profiles_dir=profiles_dir,
        target_path=target_path,
        log_path=log_path,
        dbt=dbt,
    )
    return subprocess.run(
        command,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def dbt_in(
    folder: Path,
    project_dir: Path,
    *args: str,
    profiles_dir: Path | None = None,
    target: bool = True,
    env: Mapping[str, str] | None = None,
    timeout: float = 1200,
    dbt: str | Path = DBT,
) -> subprocess.CompletedProcess[str]:
    """`dbt args` on the project in `project_dir`, its profiles (unless `profiles_dir`),
    `target/` (unless `target` is False: `dbt debug` takes no --target-path) and `logs/`
    in `folder`."""
    return run_dbt_process(
        args,
        project_dir=project_dir,
        profiles_dir=profiles_dir or folder,
        target_path=folder / "target" if target else None,
        log_path=folder / "logs",
        env=env,
        timeout=timeout,
        dbt=dbt,
    )


def read_run_results(target_path: Path) -> dict[str, Any]:
    """run_results.json of the last dbt command that wrote to `target_path`."""
    return json.loads((target_path / "run_results.json").read_text())


def passed_run_results(
    result: subprocess.CompletedProcess[str],
    target_path: Path,
    *,
    stderr_tail: int = 3000,
    prefix: str = "",
) -> dict[str, Any]:
    """The run results of a dbt process that must have exited 0; if it did not, the
    failure says `prefix` and the tail of its output (the last 6000 characters of stdout,
    `stderr_tail` of stderr)."""
    assert result.returncode == 0, prefix + result.stdout[-6000:] + result.stderr[-stderr_tail:]
    return read_run_results(target_path)


def node_statuses(results: Mapping[str, Any]) -> dict[str, str]:
    """Status of each node of run results, by unique id."""
    return {r["unique_id"]: r["status"] for r in results["results"]}


def assert_readable(output: str) -> None:
    """No Python traceback and no Java stack in what dbt printed."""
    assert "Traceback" not in output, output
    assert "\tat org.apache" not in output and "at java." not in output, output


class Project:
    """A dbt project in its own folder, with its own warehouse, run in subprocesses: project,
    profile and schema `SCHEMA`, Spark in process, one thread unless `profile` says
    otherwise."""

    def __init__(self, root: Path, warehouse: Path | str, **profile: object) -> None:
        self.root = root
        self.warehouse = Path(warehouse)
        (root / "models").mkdir(parents=True, exist_ok=True)
        write_project(root, SCHEMA, output=local_output(warehouse, SCHEMA, **profile))

    def model(self, name: str, sql: str) -> None:
        (self.root / "models" / f"{name}.sql").write_text(sql)

    def command(self, *args: str, log_path: str = "logs") -> list[str]:
        """`dbt args`, its logs in `log_path` and its target in `target-<log_path>`."""
        return dbt_command(
            args,
            project_dir=self.root,
            profiles_dir=self.root,
            target_path=self.root / f"target-{log_path}",
            log_path=self.root / log_path,
        )

    @staticmethod
    def env() -> dict[str, str]:
        return dbt_env()

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`dbt args`, waited for (logs in `logs/`, target in `target-logs/`)."""
        return run_dbt_process(
            args,
            project_dir=self.root,
            profiles_dir=self.root,
            target_path=self.root / "target-logs",
            log_path=self.root / "logs",
            env=self.env(),
            cwd=self.root,
            timeout=600,
        )

    def start(self, *args: str, log_path: str) -> subprocess.Popen[str]:
        """dbt started in the background, stderr into stdout (a pipe)."""
        return subprocess.Popen(
            self.command(*args, log_path=log_path),
            cwd=self.root,
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def catalog(self) -> IcebergCatalog:
        return local_catalog(self.warehouse)

    def rows(self, table: str) -> list[dict[str, Any]]:
        return iceberg_rows(self.catalog(), SCHEMA, table)

    def ids(self, table: str) -> list[int]:
        rows = self.catalog().load_table(SCHEMA, table).scan().to_arrow()
        return sorted(rows.column("id").to_pylist())


def kill_while_running(job: subprocess.Popen[str], node: str) -> None:
    """SIGKILL `job` (a dbt process started by `Project.start`, its profile with
    `progress_interval_seconds`) once it says `node`'s statement is running."""
    deadline = time.monotonic() + 300
    seen = []
    assert job.stdout is not None
    for line in job.stdout:
        seen.append(line)
        if f"{node}: running for" in line:
            break
        assert time.monotonic() < deadline, "".join(seen)
    else:
        raise AssertionError("dbt ended before the statement ran:\n" + "".join(seen))
    job.send_signal(signal.SIGKILL)
    job.wait(timeout=60)


# --- a long-running command and its JVM in the process table ----------------------------------


def start_logged(
    command: list[str], cwd: Path, env: Mapping[str, str], console: Path
) -> subprocess.Popen[bytes]:
    """`command` started in the background, its stdout and stderr going to `console`."""
    with open(console, "wb") as output:
        return subprocess.Popen(command, cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT)


def wait_for_line(
    process: subprocess.Popen[bytes],
    console: Path,
    text: str,
    count: int = 1,
    limit: float = 300,
) -> str:
    """Wait until `console` holds `text` `count` times (the process still running, within
    `limit` seconds); the console's text."""
    deadline = time.monotonic() + limit
    while (output := console.read_text()).count(text) < count:
        assert process.poll() is None and time.monotonic() < deadline, output
        time.sleep(0.1)
    return output


def process_state(pid: int) -> str | None:
    """The state letter of a process (Z for a zombie), None when there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def jvm_alive(pid: int) -> bool:
    return process_state(pid) not in (None, "Z")  # a zombie holds no memory


def spark_jvm_child(parent: int) -> int | None:
    """The adapter's Spark JVM that process `parent` started (its child running
    SparkSubmit for `dbt-s3tables`), None while there is none."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if (
            int(stat.rsplit(")", 1)[1].split()[1]) == parent
            and b"org.apache.spark.deploy.SparkSubmit" in command
        ):
            assert b"spark.app.name=dbt-s3tables" in command
            return int(entry.name)
    return None


def driver_jvm_of(dbt: subprocess.Popen[bytes], console: Path) -> int:
    """The driver JVM `dbt` (or the watch) started."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        jvm = spark_jvm_child(dbt.pid)
        if jvm is not None:
            return jvm
        assert dbt.poll() is None, console.read_text()
        time.sleep(0.05)
    raise AssertionError("dbt started no Spark JVM within 300 s")


def seconds_until_gone(pid: int, limit: float) -> float:
    started = time.monotonic()
    while jvm_alive(pid) and time.monotonic() - started < limit:
        time.sleep(0.05)
    return time.monotonic() - started


# Reads the server session's value while the model compiles, on the model's own connection.
CONF_PROBE = (
    "{{ config(materialized='table') }}\n"
    "{% set value = run_query('SET spark.sql.shuffle.partitions').columns[1].values()[0]"
    " if execute else '' %}\n"
    "select '{{ value }}' as shuffle_partitions\n"
)


def conf_probe_project(root: Path) -> Path:
    """A project (profile `integration_tests`, written apart) whose one model records the
    session's `spark.sql.shuffle.partitions`."""
    return write_project(
        root / "conf-probe",
        "conf_probe",
        profile="integration_tests",
        settings={"config-version": 2},
        files={"models/conf_probe.sql": CONF_PROBE},
    )


# --- dbt in process (dbt's test framework) ---------------------------------------------------


def run_vars(**values: object) -> list[str]:
    """`--vars` with `values`."""
    return ["--vars", json.dumps(values)]


def results_by_model(results: Iterable[Any]) -> dict[str, Any]:
    return {r.node.name: r for r in results}


def assert_all_passed(results: Any, count: int) -> None:
    assert len(results) == count
    failed = [(r.node.name, r.status, r.message) for r in results if r.status != "success"]
    assert not failed


def run_batches(batches: Iterable[int]) -> list[dict[str, tuple[str, str | None]]]:
    """Run every model once per batch, whatever fails; (status, message) per model."""
    outcomes = []
    for batch in batches:
        results = run_dbt(["run", *run_vars(batch=batch)], expect_pass=None)
        outcomes.append({r.node.name: (str(r.status), r.message) for r in results})
    return outcomes


def assert_model_passed(outcomes: list[dict[str, tuple[str, str | None]]], name: str) -> None:
    """A test about one model fails on that model's own error, not on another's."""
    for batch, outcome in enumerate(outcomes, start=1):
        assert outcome[name][0] == "success", (batch, outcome[name])


def last_invocation_id(project: TestProjInfo) -> str:
    """The invocation id of the project's last dbt command."""
    return read_run_results(Path(project.project_root, "target"))["metadata"]["invocation_id"]


def adapter_responses(project: TestProjInfo) -> dict[str, dict[str, Any]]:
    """The adapter response of each node of the last dbt command, by node name."""
    data = read_run_results(Path(project.project_root, "target"))
    return {r["unique_id"].split(".")[-1]: r["adapter_response"] for r in data["results"]}


# --- reading tables through Spark ------------------------------------------------------------


def nulls_first(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A sort key: None before any value, values in their natural order (what `sorted`
    gives wherever it can compare the rows)."""
    return tuple((value is not None, value) for value in row)


def sort_rows(
    rows: Iterable[Iterable[Any]], key: Callable[[tuple[Any, ...]], Any] = nulls_first
) -> list[tuple[Any, ...]]:
    """The rows as tuples, sorted by `key`."""
    return sorted((tuple(r) for r in rows), key=key)


def query_rows(
    project: TestProjInfo, sql: str, *, key: Callable[[tuple[Any, ...]], Any] = nulls_first
) -> list[tuple[Any, ...]]:
    """The rows of a Spark SQL query, as tuples sorted by `key`."""
    return sort_rows(project.run_sql(sql, fetch="all"), key)


def relation(project: TestProjInfo, name: str) -> str:
    """`<test schema>.<name>`."""
    return f"{project.test_schema}.{name}"


def table_rows(
    project: TestProjInfo,
    table: str,
    columns: str = "*",
    *,
    order_by: str | None = None,
    branch: str | None = None,
    key: Callable[[tuple[Any, ...]], Any] = nulls_first,
) -> list[tuple[Any, ...]]:
    """`columns` of each row of `table` in the test schema (on its Iceberg `branch` if
    given), as tuples: in the order of SQL `order_by` when given, else sorted by `key`."""
    suffix = f".`branch_{branch}`" if branch else ""
    sql = f"select {columns} from `{project.test_schema}`.`{table}`{suffix}"
    if order_by is None:
        return query_rows(project, sql, key=key)
    return [tuple(r) for r in project.run_sql(f"{sql} order by {order_by}", fetch="all")]


def described_columns(project: TestProjInfo, table: str) -> list[tuple[str, str, str | None]]:
    """(name, type, comment) of each column of `table` (a name as SQL takes it), as Spark's
    `DESCRIBE` reports them; the partition information after them left out."""
    columns = []
    for row in project.run_sql(f"describe {table}", fetch="all"):
        if not row[0] or row[0].startswith("#"):
            break
        columns.append((row[0], row[1], row[2] or None))
    return columns


def column_types(project: TestProjInfo, table: str) -> list[tuple[str, str]]:
    """(name, type) of each column, as `described_columns`."""
    return [(name, data_type) for name, data_type, _ in described_columns(project, table)]


def column_names(project: TestProjInfo, table: str) -> list[str]:
    return [name for name, _, _ in described_columns(project, table)]


def described(project: TestProjInfo, sql: str) -> dict[str, str]:
    """First two fields of each row of a `DESCRIBE ... EXTENDED`, as a mapping."""
    return {row[0]: row[1] for row in project.run_sql(sql, fetch="all") if row[0]}


def table_comment(project: TestProjInfo, table: str) -> str | None:
    """The table's comment, as Spark's `DESCRIBE TABLE EXTENDED` shows it."""
    return described(project, f"describe table extended {table}").get("Comment")


def table_properties(project: TestProjInfo, table: str) -> dict[str, str]:
    """The table's properties, as Spark's `SHOW TBLPROPERTIES` lists them."""
    return dict(project.run_sql(f"show tblproperties {table}", fetch="all"))


def snapshot_rows(
    project: TestProjInfo, table: str, columns: str = "snapshot_id"
) -> list[tuple[Any, ...]]:
    """`columns` of each snapshot of `table` (Iceberg's `<table>.snapshots`), oldest first."""
    sql = f"select {columns} from {table}.snapshots order by committed_at"
    return [tuple(r) for r in project.run_sql(sql, fetch="all")]


def snapshot_ids(project: TestProjInfo, table: str) -> list[int]:
    """The ids of the table's snapshots, oldest first."""
    return [row[0] for row in snapshot_rows(project, table)]


def snapshot_count(project: TestProjInfo, table: str) -> int:
    return project.run_sql(f"select count(*) from {table}.snapshots", fetch="one")[0]


def latest_snapshot_id(project: TestProjInfo, table: str) -> int | None:
    """The id of the table's newest snapshot, None when it has none."""
    row = project.run_sql(
        f"select snapshot_id from {table}.snapshots order by committed_at desc limit 1",
        fetch="one",
    )
    return row[0] if row else None


def latest_snapshot_summary(project: TestProjInfo, table: str) -> dict[str, str]:
    """The summary of the table's newest snapshot."""
    row = project.run_sql(
        f"select summary from {table}.snapshots order by committed_at desc limit 1",
        fetch="one",
    )
    return dict(row[0])


# --- reading tables through PyIceberg -----------------------------------------------------


def local_catalog(warehouse: Path | str, name: str = "local") -> IcebergCatalog:
    """The adapter's PyIceberg catalog of the embedded catalog in `warehouse`."""
    return IcebergCatalog(CatalogConfig(name=name, catalog_type="local", warehouse=str(warehouse)))


def iceberg_rows(
    catalog: IcebergCatalog, namespace: str, table: str, *, sort: bool = False
) -> list[dict[str, Any]]:
    """Every row of the table as a dict, read with PyIceberg: as the scan returns them, or
    with `sort` in the order of their values' text."""
    rows = catalog.load_table(namespace, table).scan().to_arrow().to_pylist()
    if sort:
        rows.sort(key=lambda row: tuple(str(v) for v in row.values()))
    return rows


def warehouse_tables(warehouse: Path | str) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """Every table of the embedded catalog in `warehouse` (`catalog_tables`)."""
    return catalog_tables(local_catalog(warehouse))


def catalog_tables(catalog: IcebergCatalog) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """Every table of `catalog` (the adapter's PyIceberg catalog object), by
    `<namespace>.<table>`: its schema as PyIceberg prints it and its rows as dicts (in no
    particular order)."""
    found = {}
    for namespace in catalog.list_namespaces():
        for relation in catalog.list_relations(namespace):
            if relation.kind != "table":
                continue
            table = catalog.load_table(namespace, relation.name)
            rows = table.scan().to_arrow().to_pylist()
            found[f"{namespace}.{relation.name}"] = (str(table.schema()), rows)
    return found


# --- the integration project ------------------------------------------------------------------


def build_integration_project(
    folder: Path,
    *extra: str,
    s3tables_rules: bool = False,
    dbt: str | Path = DBT,
    profiles_dir: Path = INTEGRATION_PROJECT,
) -> dict[str, Any]:
    """`dbt build` of integration_tests/ into `folder` (warehouse, target, logs) by `dbt`,
    with the project's own profile (or the one in `profiles_dir`, which may read the same
    variables); every node must pass. Its run results."""
    env = {
        **os.environ,
        "DBT_S3TABLES_WAREHOUSE": str(folder / "warehouse"),
        "DBT_S3TABLES_RULES": str(s3tables_rules).lower(),
    }
    result = dbt_in(
        folder,
        INTEGRATION_PROJECT,
        "build",
        *extra,
        profiles_dir=profiles_dir,
        env=env,
        timeout=900,
        dbt=dbt,
    )
    results = passed_run_results(result, folder / "target", prefix=f"{dbt}: ")
    statuses = node_statuses(results)
    assert statuses, "dbt build ran nothing"
    assert set(statuses.values()) <= {"success", "pass"}, statuses
    return results


# The integration project's Python model: built only by `method: session` (no thrift).
PYTHON_MODEL = "customer_balances_py"
# The Python model and the model reading it: the tables a build over a server leaves out.
PYTHON_MODEL_TABLES = (PYTHON_MODEL, f"{PYTHON_MODEL}_values")
WITHOUT_PYTHON_MODEL = ("--exclude", *PYTHON_MODEL_TABLES)
# A build's arguments that leave out the data tests.
WITHOUT_DATA_TESTS = ("--exclude-resource-type", "test")

# Columns whose values come from the clock of the build (scd2 validity, snapshot
# bookkeeping, events relative to the build's day): not the same on two builds, whatever
# the engine.
CLOCK_COLUMN_PREFIXES = ("dbt_", "valid_")
CLOCK_COLUMNS = {"event_ts"}


def table_contents(tables: dict[str, tuple[str, list[dict]]]) -> dict[str, list[tuple]]:
    """The rows of each table of the integration project's namespace (`warehouse_tables`),
    without clock columns, by table name: what two engines' builds must agree on."""
    contents = {}
    for name, (_, rows) in tables.items():
        namespace, table = name.split(".", 1)
        if namespace != "analytics":
            continue
        kept = [
            {
                k: v
                for k, v in row.items()
                if k not in CLOCK_COLUMNS and not k.startswith(CLOCK_COLUMN_PREFIXES)
            }
            for row in rows
        ]
        contents[table] = sorted(tuple(sorted(r.items())) for r in kept)
    return contents


# The second build's arguments: `schema_phase: 2` evolves the schemas of the models that
# read it, and the incremental models run incrementally.
PHASE_2 = ("--vars", "{schema_phase: 2}")

# The integration project's models that between them make every kind of catalog call a
# build makes (seeds; CREATE TABLE AS with partition transforms, a contract and comments;
# CREATE OR REPLACE; incremental append, MERGE, delete+insert and insert_overwrite commits;
# a schema evolved through PyIceberg; a snapshot; views as ephemeral models). The rest of
# the project adds Spark SQL, not catalog calls: it is built whole in process
# (`IntegrationBuilds`), over thrift (test_engines.py on dbt 1.11, and tests/functional/
# test_spark_package.py on dbt-spark) and on Spark 4.1 through Iceberg's REST server; the
# emulated S3 Tables and a cluster build these.
CATALOG_OPERATIONS = (
    "customers orders tier_changes stg_customers customer_view customer_order_summary "
    "orders_partitioned orders_appended customers_evolving orders_delete_insert orders_by_day "
    "customer_tiers orders_full_refresh_on_change customers_snapshot"
)
# `dbt build` arguments for those models with the data tests whose every parent they are.
CATALOG_OPERATIONS_ONLY = ("--select", CATALOG_OPERATIONS, "--indirect-selection", "cautious")


@dataclass(frozen=True)
class IntegrationBuilds:
    """integration_tests/ built twice in process (`local[2]`, the embedded catalog) by this
    virtualenv's dbt: from an empty warehouse, then with `PHASE_2` and the S3 Tables rules
    on. The run results of each build and every table (`warehouse_tables`) after each.
    The first build runs under `--warn-error`: it warns of nothing (the second does, of
    the columns its schema changes keep)."""

    results: tuple[dict[str, Any], dict[str, Any]]
    tables: tuple[
        dict[str, tuple[str, list[dict[str, Any]]]], dict[str, tuple[str, list[dict[str, Any]]]]
    ]

    @staticmethod
    def make(folder: Path) -> IntegrationBuilds:
        first = build_integration_project(folder, "--warn-error")
        after_first = warehouse_tables(folder / "warehouse")
        second = build_integration_project(folder, *PHASE_2, s3tables_rules=True)
        return IntegrationBuilds(
            (first, second), (after_first, warehouse_tables(folder / "warehouse"))
        )


# Values that depend on the moment of the build, not on the engine or the dbt line: the
# events of `recent_events` (and `orders_microbatch`) are dated relative to the build's day,
# and a snapshot and the `scd2` strategy stamp their rows with the build's time (a snapshot
# hashes it into `dbt_scd_id`). Only whether they are set is compared.
BUILD_TIME_COLUMNS = frozenset(
    {
        "event_ts",
        "dbt_valid_from",
        "dbt_valid_to",
        "dbt_updated_at",
        "dbt_scd_id",
        "valid_from",
        "valid_to",
    }
)
# The builds of `IntegrationBuilds` as another install repeats them: their dbt arguments and
# S3 Tables rules. The first build's data tests are left out (every table they read is
# compared after it); the second build runs them.
INTEGRATION_BUILD_STEPS = {
    "build": (WITHOUT_DATA_TESTS, False),
    "incremental build": (PHASE_2, True),
}


def comparable_tables(
    tables: dict[str, tuple[str, list[dict[str, Any]]]],
) -> dict[str, tuple[str, list[tuple]]]:
    """Each table (`warehouse_tables`): its schema and its rows, sorted, with the
    `BUILD_TIME_COLUMNS` only as set or not."""

    def comparable(value: object, column: str) -> object:
        return value is not None if column in BUILD_TIME_COLUMNS else repr(value)

    return {
        name: (schema, sorted(tuple(comparable(row[c], c) for c in sorted(row)) for row in rows))
        for name, (schema, rows) in tables.items()
    }


def assert_tables_match(
    step: str,
    built: dict[str, tuple[str, list[dict[str, Any]]]],
    reference: dict[str, tuple[str, list[dict[str, Any]]]],
    other: str,
    ours: str,
    left_out: Collection[str] = (),
) -> None:
    """The tables another build made (`built`, by `other`) and the reference's (by `ours`),
    both as `warehouse_tables` gives them: the same tables, each with the same schema and
    rows (`comparable_tables`), but for the tables named in `left_out`, which the other
    build does not make."""
    theirs = comparable_tables(built)
    mine = comparable_tables(
        {name: table for name, table in reference.items() if name.split(".")[-1] not in left_out}
    )
    assert theirs, f"{step}: no tables"
    assert sorted(theirs) == sorted(mine), step
    differing = [name for name in theirs if theirs[name] != mine[name]]
    assert not differing, f"{step}: tables differ between {other} and {ours}: {differing}"


def assert_integration_tables_match(
    folder: Path,
    dbt: Path,
    reference: IntegrationBuilds,
    other: str,
    ours: str,
    *,
    profiles_dir: Path,
    catalog: IcebergCatalog,
) -> list[dict[str, Any]]:
    """integration_tests/ built by `dbt` (another install: `other`) with the profile in
    `profiles_dir` into `catalog`, as `reference` was built by this virtualenv's (`ours`):
    after each build, every table's schema and rows, read with PyIceberg, the same. The
    run results of each build."""
    results = []
    for (step, (extra, s3tables_rules)), expected in zip(
        INTEGRATION_BUILD_STEPS.items(), reference.tables, strict=True
    ):
        results.append(
            build_integration_project(
                folder, *extra, s3tables_rules=s3tables_rules, dbt=dbt, profiles_dir=profiles_dir
            )
        )
        assert_tables_match(step, catalog_tables(catalog), expected, other, ours)
    return results


# --- once per pytest run -----------------------------------------------------------------------

Made = TypeVar("Made")


def once_per_run(
    tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], Made]
) -> Made:
    """`make(folder)` once per pytest run, in a folder `name` of the run's temporary folder,
    its result kept (pickled) there. pytest-xdist's workers share that folder: the first to
    ask makes it under a lock while the others wait, then read it; a failure is kept too,
    and every later asker fails with its message."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # each worker's is `<the run's>/popen-gw<n>`
    folder = root / name
    folder.mkdir(exist_ok=True)
    made, failed = folder / "made.pickle", folder / "failed.txt"
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if made.exists():
            return pickle.loads(made.read_bytes())
        if failed.exists():
            pytest.fail(f"{name}, made by another test, failed:\n{failed.read_text()}")
        (folder / "work").mkdir(exist_ok=True)
        try:
            result = make(folder / "work")
        except BaseException as error:
            failed.write_text(f"{type(error).__name__}: {error}"[-8000:])
            raise
        made.write_bytes(pickle.dumps(result))
        return result


def delete_file_formats(table: Table) -> list[FileFormat]:
    """The file format of each delete file of the table's current snapshot."""
    snapshot = table.current_snapshot()
    assert snapshot is not None
    return [
        entry.data_file.file_format
        for manifest in snapshot.manifests(table.io)
        if manifest.content.value == 1  # deletes
        for entry in manifest.fetch_manifest_entry(table.io)
    ]


def not_null_id_tests(model: str) -> str:
    """A properties file giving `model`'s `id` column a not_null test."""
    return f"""
version: 2
models:
  - name: {model}
    columns:
      - name: id
        data_tests: [not_null]
"""


def iceberg_table(project: TestProjInfo, name: str) -> Table:
    """The test schema's table `name`, loaded through the adapter's PyIceberg catalog."""
    return project.adapter.iceberg.load_table(project.test_schema, name)


def spark_user() -> str:
    """The user Spark records as a new table's `owner`: `SPARK_USER`, else Hadoop's user
    (`HADOOP_USER_NAME`, else the process's login name, as Java reads it)."""
    return (
        os.environ.get("SPARK_USER")
        or os.environ.get("HADOOP_USER_NAME")
        or pwd.getpwuid(os.getuid()).pw_name
    )
