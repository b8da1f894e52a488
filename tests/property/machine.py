"""The promises of docs/guarantees.md as a Hypothesis state machine that drives real dbt
like a user: it changes the upstreams of the project in project.py (appends, merges that
update and delete, a `table` model rebuilt, a seed reloaded, `--full-refresh`), runs the
readers (every strategy, reading style and model kind) with faults injected (a model's
query failing, a pre-hook committing before it, an audit test failing or erroring),
and applies lifecycle operations (`s3tables_rollback` of the last run, compaction,
snapshot expiry, `dbt retry`). After every step it checks every promise against the
oracle (world.py):

1. every table holds exactly what the oracle says: an upstream what the machine gave it;
   a reader what a full rebuild of it gives from its upstreams, as of its last run that
   succeeded (a failed or refused run changed nothing; an undone run's tables are as
   before it, and their next runs read again what it read);
2. a read the oracle says is exact is never refused, and a refused run says why in one
   sentence naming the fix (`Fix:`), with nothing written;
3. `main` holds no data whose audit test did not pass, and a green `dbt build` or `dbt
   retry` leaves no audited build unpublished;
4. nothing dbt prints is a Python traceback or a Java stack.

dbt runs through `Dbt` (in this process, or in subprocesses: `SubprocessDbt`, which the
soak's kill variant SIGKILLs at random moments, see bench/promises_soak.py).
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from dbt.adapters.factory import reset_adapters
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from tests.functional.harness import dbt_command, dbt_env, local_catalog
from tests.property.project import (
    DAYS,
    EVENT_TIME_WINDOW,
    READERS,
    REFUSAL_SENTENCES,
    REFUSED,
    SNAPSHOT_NAME,
    UPSTREAM_COLUMNS,
    UPSTREAMS,
    people_csv,
    write_project,
)
from tests.property.world import APPEND, CHANGE, REPLACE, Observed, State, World

AUDIT_TEST = "events_copy_audit"
# events_copy's test with two parents (events too): it gates the audit, and dbt does not
# make events_copy's children (its snapshot) wait for it.
TWO_PARENT_TEST = "events_copy_in_events"
# How a keyed upstream_changes() read a range of other commits than appends, by the
# adapter's log line: counted per example, so a soak shows that it took both paths.
READ_LINES = {
    "file by file": " read file by file: ",
    "two whole snapshots": " read as the difference of two whole snapshots",
}
# A build `skip_when_unchanged` skipped (dim_and_customers), as the adapter says it.
SKIP_LINE = ": not rebuilt (skip_when_unchanged): "
# What a person may never see in dbt's output.
RAW_TRACES = ("Traceback (most recent call last)", "\tat org.apache.", "\tat java.")


@dataclass
class Invocation:
    """What one dbt command did: its exit, what it printed, its run results."""

    args: list[str]
    success: bool
    output: str
    statuses: dict[str, str] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)
    invocation_id: str | None = None
    killed: bool = False


class Dbt(Protocol):
    root: Path

    def invoke(self, args: list[str]) -> Invocation: ...


def results_path(root: Path, args: list[str]) -> Path:
    """Where the command writes its run_results.json: `target/`, or its `--target-path`."""
    target = args[args.index("--target-path") + 1] if "--target-path" in args else "target"
    return root / target / "run_results.json"


def clear_results(root: Path, args: list[str]) -> int | None:
    """Before a command: its run_results.json removed, so that a command writing none
    is not read as the last one; but kept for `dbt retry`, which reads it (its time of
    writing returned, to tell a retry that wrote none)."""
    path = results_path(root, args)
    if args[0] == "retry" and path.exists():
        return path.stat().st_mtime_ns
    path.unlink(missing_ok=True)
    return None


def read_results(
    root: Path, args: list[str], success: bool, output: str, earlier: int | None = None
) -> Invocation:
    """The invocation as target/run_results.json records it, unless the command wrote none
    (the file is absent, or still the one written at `earlier`)."""
    path = results_path(root, args)
    if not path.exists() or path.stat().st_mtime_ns == earlier:
        return Invocation(args, success, output)
    data = json.loads(path.read_text())
    statuses, messages = {}, {}
    for result in data.get("results", []):
        name = result["unique_id"].split(".")[-1]
        statuses[name] = result["status"]
        messages[name] = result.get("message") or ""
    invocation_id = data.get("metadata", {}).get("invocation_id")
    return Invocation(args, success, output, statuses, messages, invocation_id)


class InProcessDbt:
    """dbt in this process (dbt's programmatic runner): one SparkSession for every step."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def invoke(self, args: list[str]) -> Invocation:
        from dbt.cli.main import dbtRunner

        earlier = clear_results(self.root, args)
        lines: list[str] = []

        def printed(event: Any) -> None:
            if event.info.level in ("info", "warn", "error"):
                lines.append(event.info.msg)

        where = ["--project-dir", str(self.root), "--profiles-dir", str(self.root)]
        result = dbtRunner(callbacks=[printed]).invoke([*args, *where])
        output = "\n".join(str(line) for line in lines)
        if result.exception is not None:
            output += f"\n{result.exception}"
        return read_results(self.root, args, bool(result.success), output, earlier)


class SubprocessDbt:
    """dbt in a process of its own per command; `kill_after` SIGKILLs the next command's
    process group after that many seconds (the soak's kill variant)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.kill_after: float | None = None

    def invoke(self, args: list[str]) -> Invocation:
        earlier = clear_results(self.root, args)
        process = start_dbt(self.root, args)
        kill_after, self.kill_after = self.kill_after, None
        try:
            output, _ = process.communicate(timeout=kill_after or 900)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            return Invocation(args, False, output, killed=True)
        return read_results(self.root, args, process.returncode == 0, output, earlier)


def start_dbt(root: Path, args: list[str]) -> subprocess.Popen[str]:
    """`dbt args` on the project in `root`, started in a process (group) of its own."""
    return subprocess.Popen(
        dbt_command(args, project_dir=root, profiles_dir=root),
        cwd=root,
        env=dbt_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def invoke_together(root: Path, commands: list[list[str]]) -> list[Invocation]:
    """The commands in processes of their own, all at once (each with its own target
    folder, as two schedulers' jobs have), each waited for."""
    started = []
    for index, args in enumerate(commands):
        args = [*args, "--target-path", f"target-together-{index}"]
        clear_results(root, args)
        started.append((args, start_dbt(root, args)))
    done = []
    for args, process in started:
        output, _ = process.communicate(timeout=900)
        done.append(read_results(root, args, process.returncode == 0, output))
    return done


@dataclass
class Plan:
    """What a command runs, as the oracle predicts it: the upstreams it writes (their new
    state), the readers it runs (in order), with which vars and flags."""

    args: list[str]
    upstreams: dict[str, State] = field(default_factory=dict)
    readers: list[str] = field(default_factory=list)
    vars: dict[str, Any] = field(default_factory=dict)
    full_refresh: bool = False
    # `dbt build` of events_copy with its audit test.
    audited: bool = False


@dataclass
class RunRecord:
    """A dbt command the machine may undo: its invocation, the oracle before it, and the
    tables whose snapshot it moved (with the snapshot each was at before)."""

    invocation_id: str
    changed: dict[str, int | None]


def event_rows() -> st.SearchStrategy[list[tuple[int, int]]]:
    """New events as (day, v); ids are given in order by the machine."""
    return st.lists(st.tuples(st.integers(1, DAYS), st.integers(0, 9)), min_size=1, max_size=3)


NAMES = st.sampled_from(["ann", "bob", "cy", "dee"])
IDS = st.integers(1, 6)


class PromisesMachine(RuleBasedStateMachine):
    """See the module docstring. `warehouse`, `workspace` and `make_dbt` are set by the
    runner (the bounded test, the soak) before the machine runs."""

    warehouse: Path
    workspace: Path
    make_dbt: Callable[[Path], Dbt] = InProcessDbt
    # The Spark server the project's profile names (`method`, `host`, `port`), on
    # `warehouse`'s catalog; none: dbt's own Spark.
    server: Mapping[str, object] | None = None
    examples = itertools.count()

    def __init__(self) -> None:
        super().__init__()
        self.schema = f"promises_{os.getpid()}_{next(self.examples)}"
        self.root = self.workspace / self.schema
        write_project(self.root, self.warehouse, self.schema, self.server)
        self.dbt = self.make_dbt(self.root)
        self.catalog = local_catalog(self.warehouse)
        self.world = World()
        self.next_id = 1
        self.runs: list[RunRecord] = []
        # The last command's plan and what it did, when it was a run, build, seed or retry
        # that did not pass.
        self.retryable: tuple[Plan, Invocation] | None = None
        self.probe = False
        self.steps: list[str] = []
        self.keyed_reads: Counter[str] = Counter()
        self.unchanged_skips = 0

    # --- running dbt and checking what it did ---------------------------------------

    def vars_of(self, extra: dict[str, Any]) -> list[str]:
        inputs = self.world.inputs
        values = {
            "dim_rows": [[i, n] for i, n in sorted(inputs.dim.items())],
            "life": self.world.life,
            **extra,
        }
        return ["--vars", json.dumps(values)]

    def observe(self, name: str) -> Observed:
        table = self.catalog.catalog.load_table((self.schema, name)) if self.exists(name) else None
        if table is None:
            return Observed(None, {})
        snapshot = table.current_snapshot()
        return Observed(
            snapshot.snapshot_id if snapshot else None,
            {s.snapshot_id: s.parent_snapshot_id for s in table.snapshots()},
        )

    def exists(self, name: str) -> bool:
        return self.catalog.catalog.table_exists((self.schema, name))

    def actual_rows(self, name: str, columns: Iterable[str]) -> Counter[tuple[Any, ...]]:
        table = self.catalog.catalog.load_table((self.schema, name))
        arrow = table.scan(selected_fields=tuple(columns)).to_arrow()
        return Counter(tuple(row[c] for c in columns) for row in arrow.to_pylist())

    def run(self, plan: Plan) -> Invocation:
        """Run the plan's command and settle every table it may have written."""
        before = {name: self.observe(name).current for name in self.tables()}
        retrying = plan.args[0] == "retry"  # dbt retry takes the last command's vars
        result = self.dbt.invoke(plan.args if retrying else [*plan.args, *self.vars_of(plan.vars)])
        vars_text = f" {json.dumps(plan.vars)}" if plan.vars else ""
        self.steps.append(" ".join(plan.args) + vars_text + (" (killed)" if result.killed else ""))
        self.check_output(result)
        for kind, line in READ_LINES.items():
            self.keyed_reads[kind] += result.output.count(line)
        self.unchanged_skips += result.output.count(SKIP_LINE)
        problems: list[str] = []
        for name, state in plan.upstreams.items():
            status = result.statuses.get(name)
            assert status in ("success", None) or result.killed, (name, status, result.output)
            problems += self.world.settle(name, self.observe(name), state if status else None)
        for reader in plan.readers:
            problems += self.settle_reader(reader, plan, result)
        assert not problems, problems
        changed = {
            name: earlier
            for name, earlier in before.items()
            if self.observe(name).current != earlier
        }
        if result.invocation_id and not result.killed:
            self.runs.append(RunRecord(result.invocation_id, changed))
        failed = not result.success and not result.killed
        self.retryable = (plan, result) if failed else None
        return result

    def settle_reader(self, reader: str, plan: Plan, result: Invocation) -> list[str]:
        status = result.statuses.get(reader)
        exact = self.world.readable(reader, plan.full_refresh)
        faulted = plan.vars.get("fail_model") == reader
        post_failed = plan.vars.get("post_fail_model") == reader
        if status is None:
            assert result.killed or reader not in plan.readers, (reader, result.output)
        elif faulted:
            assert status in ("error", "partial success"), (reader, status, result.output)
        elif self.hook_taken_for_another_run(reader, plan):
            # A server on Spark 3.5 tags no commit: the pre-hook's commit on the reader's
            # own table cannot be told from another run's, and the run is refused.
            message = result.messages.get(reader, "") + result.output
            assert status == "error", (reader, status, message[-3000:])
            assert "another run wrote from the same state" in message and "Fix:" in message
        elif post_failed and exact:
            # The data commit landed (with what it read); the post-hook after it failed.
            assert status == "error", (reader, status, result.output)
            return self.world.settle(reader, self.observe(reader), self.world.read_state(reader))
        elif not exact:
            if status != "success":  # refused: one sentence naming the fix
                message = result.messages.get(reader, "") + result.output
                assert "Fix:" in message and "--full-refresh" in message, message
        else:
            assert status == "success", (reader, status, result.messages.get(reader))
        new = self.world.read_state(reader) if status == "success" else None
        if new is not None and plan.audited and reader == "events_copy":
            passed = all(result.statuses.get(t) == "pass" for t in (AUDIT_TEST, TWO_PARENT_TEST))
            self.world.staged = None if passed else new
            new = new if passed else None
        if result.killed:
            return self.settle_killed(reader)
        return self.world.settle(reader, self.observe(reader), new)

    @property
    def commits_tagged(self) -> bool:
        """Whether the run's commits carry its invocation (what an undo finds a run by, and
        a run its own pre-hook's commit by): not over the tests' Spark servers, which run
        Spark 3.5 (a Spark 4 Connect server's do: a machine there would say so first)."""
        return self.server is None

    def hook_taken_for_another_run(self, reader: str, plan: Plan) -> bool:
        """Whether the run of `reader` is refused because its committing pre-hook (which
        commits on an incremental run of it) looks like another run's commit: over a
        Spark 3.5 server, where commits carry no tags (docs/guarantees.md, "Not checked")."""
        return (
            not self.commits_tagged
            and plan.vars.get("hook_model") == reader
            and not plan.full_refresh
            and READERS[reader].kind_in(self.world.life) == "incremental"
            and self.world.table(reader).state is not None
        )

    def settle_killed(self, reader: str) -> list[str]:
        """A command killed part-way: each table holds what it held before, or what the
        run would have written (never a mix); the oracle takes whichever it holds."""
        columns = READERS[reader].columns
        observed = self.observe(reader)
        if observed.current == self.world.table(reader).current:
            return self.world.settle(reader, observed, None)
        new = self.world.read_state(reader)
        held = self.actual_rows(reader, columns)
        if held != new.rows and held != self.world.rows(reader):
            return [f"{reader}: killed between two states: {sorted(held)}"]
        return self.world.settle(reader, observed, new if held == new.rows else None)

    def check_output(self, result: Invocation) -> None:
        for trace in RAW_TRACES:
            assert trace not in result.output, result.output[-6000:]

    def tables(self) -> list[str]:
        return [*UPSTREAMS, *READERS]

    # --- setup ------------------------------------------------------------------------

    @initialize()
    def build_everything(self) -> None:
        """The project's first `dbt seed` and `dbt run`; the audit test's probe table."""
        self.run(
            Plan(["seed"], upstreams={"people": self.world.upstream_state("people", REPLACE, {})})
        )
        self.create_probe()
        self.run(
            Plan(
                ["run", "--exclude", "tag:refused", *EVENT_TIME_WINDOW],
                upstreams={
                    "events": self.world.upstream_state("events", REPLACE, ()),
                    "customers": self.world.upstream_state("customers", REPLACE, {}),
                    "dim": self.world.upstream_state("dim", REPLACE, {}),
                },
                readers=list(READERS),
            )
        )
        self.runs.clear()  # the first build is not undone (it creates every table)

    def create_probe(self) -> None:
        self.sql(f"create table if not exists {self.schema}.audit_probe (id int)")
        self.probe = True

    def sql(self, statement: str) -> None:
        """One statement through dbt, as a user's `run-operation` would; its artifacts go to
        a target folder of its own, as a fix made outside the project's runs: `dbt retry`
        retries the last command in `target/`, and a run-operation there would be it."""
        args = json.dumps({"sql": statement})
        target = str(self.root / "target-machine")
        result = self.dbt.invoke(
            ["run-operation", "run_query", "--args", args, "--target-path", target]
        )
        assert result.success, result.output[-4000:]

    # --- the upstreams change -----------------------------------------------------------

    @rule(rows=event_rows(), full_refresh=st.booleans())
    def append_events(self, rows: list[tuple[int, int]], full_refresh: bool) -> None:
        """`dbt run -s events` with new events (or its --full-refresh: only those)."""
        new = []
        for day, value in rows:
            new.append((self.next_id, day, value))
            self.next_id += 1
        events = tuple(new) if full_refresh else (*self.world.inputs.events, *new)
        kind = REPLACE if full_refresh else APPEND
        args = ["run", "-s", "events", *(["--full-refresh"] if full_refresh else [])]
        self.run(
            Plan(
                args,
                upstreams={"events": self.world.upstream_state("events", kind, events)},
                vars={"events_new": [list(e) for e in new]},
            )
        )

    @rule(
        changes=st.lists(st.tuples(IDS, NAMES, st.booleans()), min_size=1, max_size=3),
        full_refresh=st.booleans(),
    )
    def change_customers(self, changes: list[tuple[int, str, bool]], full_refresh: bool) -> None:
        """`dbt run -s customers`: a merge that inserts, updates and deletes (its
        `merge_delete_when`); or its --full-refresh (the rows not deleted, alone)."""
        latest = {i: (name, deleted) for i, name, deleted in changes}  # one row per key
        customers = {} if full_refresh else dict(self.world.inputs.customers)
        for i, (name, deleted) in latest.items():
            if deleted:
                customers.pop(i, None)
            else:
                customers[i] = name
        args = ["run", "-s", "customers", *(["--full-refresh"] if full_refresh else [])]
        rows = [[i, name, deleted] for i, (name, deleted) in sorted(latest.items())]
        self.run(
            Plan(
                args,
                upstreams={
                    "customers": self.world.upstream_state(
                        "customers", REPLACE if full_refresh else CHANGE, customers
                    )
                },
                vars={"customer_changes": rows},
            )
        )

    @rule(rows=st.dictionaries(IDS, NAMES, max_size=4))
    def rebuild_dim(self, rows: dict[int, str]) -> None:
        """`dbt run -s dim`: the table model replaced (CREATE OR REPLACE) with new rows."""
        state = self.world.upstream_state("dim", REPLACE, rows)
        plan = Plan(["run", "-s", "dim"], upstreams={"dim": state})
        plan.vars["dim_rows"] = [[i, n] for i, n in sorted(rows.items())]
        self.run(plan)

    @rule(rows=st.dictionaries(IDS, NAMES, max_size=4))
    def reload_people(self, rows: dict[int, str]) -> None:
        """The seed's CSV rewritten, then `dbt seed`."""
        (self.root / "seeds" / "people.csv").write_text(people_csv(rows))
        self.run(
            Plan(["seed"], upstreams={"people": self.world.upstream_state("people", REPLACE, rows)})
        )

    @rule()
    def seed_people_empty(self) -> None:
        """`dbt seed --empty` (dbt 1.12): the seed replaced by its columns and no rows, as
        a reload of no rows would; its readers take it as a replaced upstream."""
        self.run(
            Plan(
                ["seed", "--empty"],
                upstreams={"people": self.world.upstream_state("people", REPLACE, {})},
            )
        )

    # --- the readers run ----------------------------------------------------------------

    @rule(
        readers=st.sets(st.sampled_from(sorted(READERS)), min_size=1, max_size=4),
        fault=st.sampled_from(["none", "fail", "hook", "hook_and_fail", "post_fail"]),
        victim=st.sampled_from(sorted(READERS)),
        full_refresh=st.booleans(),
    )
    def run_readers(self, readers: set[str], fault: str, victim: str, full_refresh: bool) -> None:
        """`dbt run -s <readers>`, a fault injected in one of them: its query fails,
        and/or its pre-hook commits on its own table first, or its post-hook fails after
        its data commit (not a microbatch model's: its batches each end on their own)."""
        chosen = [r for r in READERS if r in readers]
        extra: dict[str, Any] = {}
        if fault in ("fail", "hook_and_fail"):
            extra["fail_model"] = victim
        if fault in ("hook", "hook_and_fail"):
            extra["hook_model"] = victim
        if fault == "post_fail" and READERS[victim].kind_in(self.world.life) != "microbatch":
            extra["post_fail_model"] = victim
        args = ["run", "-s", *chosen, *EVENT_TIME_WINDOW]
        if full_refresh:
            args.append("--full-refresh")
        self.run(Plan(args, readers=chosen, vars=extra, full_refresh=full_refresh))

    @rule(outcome=st.sampled_from(["pass", "fail", "error", "fail_two_parent"]))
    def build_audited(self, outcome: str) -> None:
        """`dbt build -s events_copy events_copy_history`: the audited reader, its tests and
        its snapshot; its one-parent test passes, fails (`fail_audit`) or errors (the table
        it reads is dropped first), or its two-parent test fails (the snapshot does not
        wait for that one)."""
        if outcome == "error" and self.probe:
            self.sql(f"drop table {self.schema}.audit_probe")
            self.probe = False
        elif outcome != "error" and not self.probe:
            self.create_probe()
        extra = {"fail_audit": True} if outcome == "fail" else {}
        if outcome == "fail_two_parent":
            extra["fail_two_parent"] = True
        self.run(
            Plan(
                ["build", "-s", "events_copy", SNAPSHOT_NAME],
                readers=["events_copy"],
                vars=extra,
                audited=True,
            )
        )

    @precondition(lambda self: self.retryable is not None)
    @rule(fix=st.booleans())
    def retry(self, fix: bool) -> None:
        """`dbt retry` of the last command that did not pass, its cause fixed first or
        not (the audit test's table created; an injected fault stays in its vars): it
        reruns the nodes that did not pass. A test of a staged build that passes now
        publishes it."""
        assert self.retryable is not None
        previous, outcome = self.retryable
        if fix and not self.probe:
            self.create_probe()
        rerun = {n for n, status in outcome.statuses.items() if status not in ("success", "pass")}
        plan = Plan(
            ["retry"],
            readers=[r for r in previous.readers if r in rerun],
            vars=previous.vars,
            full_refresh=previous.full_refresh,
            audited=previous.audited,
        )
        staged = self.world.staged
        result = self.run(plan)
        gating = rerun & {AUDIT_TEST, TWO_PARENT_TEST}
        if previous.audited and gating and "events_copy" not in rerun:
            # Only its tests ran again: when they pass, the staged build publishes.
            passed = all(result.statuses.get(test) == "pass" for test in gating)
            if passed and staged is not None:
                self.world.staged = None
                problems = self.world.settle("events_copy", self.observe("events_copy"), staged)
                assert not problems, problems
        if result.success:
            self.assert_nothing_unpublished()

    # --- dbt's run modes and a model's life ------------------------------------------------

    @rule(readers=st.sets(st.sampled_from(sorted(READERS)), min_size=1, max_size=4))
    def run_readers_empty(self, readers: set[str]) -> None:
        """`dbt run --empty -s <readers>`: no row written, no read recorded, no state
        moved (a `table` and a microbatch model's windows replaced by no rows, as dbt's
        --empty does); the next run of every row reads what this one did not."""
        chosen = [r for r in READERS if r in readers]
        expected = {r: self.world.empty_run_state(r) for r in chosen}
        result = self.dbt.invoke(
            ["run", "--empty", "-s", *chosen, *EVENT_TIME_WINDOW, *self.vars_of({})]
        )
        self.steps.append(f"run --empty {' '.join(chosen)}")
        self.check_output(result)
        assert result.success, result.output[-4000:]
        problems: list[str] = []
        for reader in chosen:
            problems += self.world.settle(reader, self.observe(reader), expected[reader])
        assert not problems, problems
        self.retryable = None

    @rule(
        command=st.sampled_from(["show", "compile", "ls", "docs"]),
        reader=st.sampled_from(sorted(READERS)),
    )
    def look_without_running(self, command: str, reader: str) -> None:
        """`dbt show`, `dbt compile`, `dbt ls` or `dbt docs generate` of a reader: nothing
        is written or recorded (every table as it was), and the next run reads exactly."""
        args = {
            "show": ["show", "-s", reader, "--limit", "3"],
            "compile": ["compile", "-s", reader],
            "ls": ["ls", "-s", reader],
            "docs": ["docs", "generate"],
        }[command]
        before = {name: self.observe(name) for name in self.tables()}
        target = str(self.root / "target-looks")
        result = self.dbt.invoke([*args, "--target-path", target, *self.vars_of({})])
        self.steps.append(" ".join(args))
        self.check_output(result)
        for name, observed in before.items():
            assert self.observe(name) == observed, (name, command, result.output[-3000:])

    @rule(life=st.sampled_from(["append", "merge", "table"]))
    def change_life(self, life: str) -> None:
        """The project changes: events_life becomes an incremental append, an incremental
        merge or a `table` (its next runs build it so; its reads stay exact)."""
        self.world.life = life
        self.steps.append(f"events_life becomes {life}")

    # --- lifecycle operations -------------------------------------------------------------

    @precondition(lambda self: bool(self.runs))
    @rule()
    def rollback_last(self) -> None:
        """`dbt run-operation s3tables_rollback` of the last command: every table it
        changed back to its state before it, or refused in one sentence, nothing done (a
        run whose commits carry no tags is always refused: nothing finds its commits)."""
        record = self.runs.pop()
        expired = [
            name
            for name, snapshot in record.changed.items()
            if snapshot is not None and snapshot not in self.world.table(name).live
        ]
        args = json.dumps({"invocation_id": record.invocation_id})
        result = self.dbt.invoke(["run-operation", "s3tables_rollback", "--args", args])
        self.steps.append(f"rollback {record.invocation_id}")
        self.check_output(result)
        if not record.changed or expired or not self.commits_tagged:
            assert not result.success, (record, result.output[-3000:])
            assert "Fix:" in result.output, result.output[-3000:]
            # What stays done blocks every earlier run's undo: none is tried again.
            self.runs.clear()
            return
        assert result.success, result.output[-4000:]
        for name, snapshot in record.changed.items():
            self.world.restore(name, snapshot)
            observed = self.observe(name)
            assert observed.current == snapshot, (name, observed.current, snapshot)
            self.world.settle(name, observed, None)
        self.retryable = None

    @rule(table=st.sampled_from([*UPSTREAMS, *READERS]))
    def compact(self, table: str) -> None:
        """`s3tables_maintain` compaction of one table (rows unchanged)."""
        self.maintain(table, {"operations": ["compact"]})

    @rule(table=st.sampled_from([*UPSTREAMS, *READERS]))
    def expire(self, table: str) -> None:
        """`s3tables_maintain` expiry of every snapshot of one table but its current."""
        self.maintain(
            table,
            {"operations": ["expire_snapshots"], "snapshots_older_than_days": 0, "retain_last": 1},
        )

    @rule()
    def expire_every_table(self) -> None:
        """Every table's snapshots but its current expire, those of upstreams that did not
        change among them (as S3 Tables' own maintenance does, every few days)."""
        self.maintain(
            [*UPSTREAMS, *READERS],
            {"operations": ["expire_snapshots"], "snapshots_older_than_days": 0, "retain_last": 1},
        )

    def maintain(self, table: str | list[str], arguments: dict[str, Any]) -> None:
        tables = [table] if isinstance(table, str) else table
        tables = [t for t in tables if self.world.table(t).current is not None]
        if not tables:
            return
        args = json.dumps({"models": tables, **arguments})
        result = self.dbt.invoke(["run-operation", "s3tables_maintain", "--args", args])
        self.steps.append(f"maintain {' '.join(tables)} {arguments['operations']}")
        self.check_output(result)
        assert result.success, result.output[-4000:]
        problems: list[str] = []
        for name in tables:
            problems += self.world.settle(name, self.observe(name), None)
        assert not problems, problems

    @rule()
    def run_refused_readers(self) -> None:
        """upstream_changes() in an ephemeral model, a view and a microbatch model: each
        refused in one sentence on every run, and no table written."""
        result = self.dbt.invoke(["run", "-s", "tag:refused", *EVENT_TIME_WINDOW])
        self.steps.append("run refused readers")
        self.check_output(result)
        assert not result.success
        for sentence in REFUSAL_SENTENCES.values():
            assert sentence in result.output, (sentence, result.output[-4000:])
        for name in REFUSED:
            assert not self.exists(name), name
        assert result.statuses.get("reads_ephemeral") in ("error", "skipped")

    # --- the promises -------------------------------------------------------------------

    @invariant()
    def every_table_holds_what_the_oracle_says(self) -> None:
        for name in self.tables():
            expected = self.world.rows(name)
            if expected is None:
                continue
            columns = READERS[name].columns if name in READERS else UPSTREAM_COLUMNS[name]
            actual = self.actual_rows(name, columns)
            assert actual == expected, (
                f"{name} after {self.steps[-3:]}: holds {sorted(actual)}, "
                f"expected {sorted(expected)}"
            )

    @invariant()
    def no_snapshot_holds_unpublished_rows(self) -> None:
        """The snapshot of the audited reader holds, as its current rows, what the
        reader's main held at some point: never rows only its audit branch had."""
        if not self.exists(SNAPSHOT_NAME):
            return
        table = self.catalog.catalog.load_table((self.schema, SNAPSHOT_NAME))
        current = table.scan(
            row_filter="dbt_valid_to IS NULL", selected_fields=("id", "d", "v")
        ).to_arrow()
        held = Counter((row["id"], row["d"], row["v"]) for row in current.to_pylist())
        published = [state.rows for state in self.world.table("events_copy").states.values()]
        assert held in published or not held, (
            f"{SNAPSHOT_NAME} after {self.steps[-3:]}: holds {sorted(held)}, which "
            "events_copy's main never held"
        )

    def assert_nothing_unpublished(self) -> None:
        """A green build or retry leaves no audit branch of events_copy."""
        table = self.catalog.catalog.load_table((self.schema, "events_copy"))
        branches = [name for name in table.metadata.refs if name.startswith("dbt_audit_")]
        assert not branches, f"green, yet unpublished: {branches}"

    def teardown(self) -> None:
        """The steps this example ran: printed (pytest shows it with a failure), and a
        line in `PROMISES_LOG` when set (the soak counts them). dbt in this process left
        its adapter registered, with this project's profile: it goes, or the next test's
        dbt project would get it (dbt registers no second adapter of a type)."""
        reset_adapters()
        reads = ", ".join(f"{n} {kind}" for kind, n in sorted(self.keyed_reads.items()))
        print(
            f"{self.schema}: {len(self.steps)} dbt commands (keyed range reads: "
            f"{reads}; builds skipped as unchanged: {self.unchanged_skips}): "
            + "; ".join(self.steps)
        )
        log = os.environ.get("PROMISES_LOG")
        if log:
            example = {
                "example": self.schema,
                "commands": self.steps,
                "keyed_reads": dict(self.keyed_reads),
                "unchanged_skips": self.unchanged_skips,
            }
            with open(log, "a") as lines:
                lines.write(json.dumps(example) + "\n")


class KillingPromisesMachine(PromisesMachine):
    """The machine with dbt in processes of its own, and one more rule: a run of readers
    SIGKILLed (dbt and its Spark) at a random moment. Whatever it had committed stays,
    whatever it had not is not there: each table holds its rows before the run, or those
    the run would have written, never a mix; the next runs converge."""

    make_dbt = SubprocessDbt

    @rule(
        readers=st.sets(st.sampled_from(sorted(READERS)), min_size=1, max_size=4),
        after=st.floats(min_value=2.0, max_value=30.0),
    )
    def killed_run(self, readers: set[str], after: float) -> None:
        assert isinstance(self.dbt, SubprocessDbt)
        chosen = [r for r in READERS if r in readers]
        self.dbt.kill_after = after
        self.run(Plan(["run", "-s", *chosen, *EVENT_TIME_WINDOW], readers=chosen))


# The conflict loser's sentence (incremental/run_branch.py).
CONFLICT_SENTENCE = "so another run wrote from the same state; nothing was written"


class OverlappingPromisesMachine(PromisesMachine):
    """The machine with two more rules, each two dbt processes at once on the same
    tables: two runs of the same readers (a scheduler starting a run before the last one
    ended), and an upstream's run racing its readers'. Every promise is checked after
    each, as after any step: the tables hold what the two runs one after the other would
    give, and a run that lost says so in one sentence, having written nothing."""

    @rule(readers=st.sets(st.sampled_from(sorted(READERS)), min_size=1, max_size=4))
    def overlapping_runs(self, readers: set[str]) -> None:
        chosen = [r for r in READERS if r in readers]
        exact = {r: self.world.readable(r, False) for r in chosen}
        args = ["run", "-s", *chosen, *EVENT_TIME_WINDOW, *self.vars_of({"pause_ms": 2000})]
        results = invoke_together(self.root, [args, args])
        self.steps.append(f"two runs at once of {' '.join(chosen)}")
        problems: list[str] = []
        for reader in chosen:
            statuses = [r.statuses.get(reader) for r in results]
            for result, status in zip(results, statuses, strict=True):
                self.check_output(result)
                if status not in ("success", None) and exact[reader]:
                    message = result.messages.get(reader, "") + result.output
                    assert CONFLICT_SENTENCE in message, (reader, message[-4000:])
            if exact[reader]:
                assert "success" in statuses, (reader, statuses)
            new = self.world.read_state(reader) if "success" in statuses else None
            problems += self.world.settle(reader, self.observe(reader), new)
        assert not problems, problems
        self.runs.clear()  # which of the two runs to undo is not the machine's to know
        self.retryable = None

    @rule(
        rows=event_rows(),
        readers=st.sets(
            st.sampled_from(sorted(r for r, s in READERS.items() if s.upstream == "events")),
            min_size=1,
            max_size=3,
        ),
    )
    def upstream_races_readers(self, rows: list[tuple[int, int]], readers: set[str]) -> None:
        """`dbt run -s events` (new events) while its readers run: each reader reads the
        upstream as it was before the new commit or after it, never a part of it, and
        its next run reads the rest."""
        chosen = [r for r in READERS if r in readers]
        before = {r: self.world.read_state(r) for r in chosen}
        new_events = []
        for day, value in rows:
            new_events.append((self.next_id, day, value))
            self.next_id += 1
        events = (*self.world.inputs.events, *new_events)
        upstream = self.world.upstream_state("events", APPEND, events)
        append = [
            "run",
            "-s",
            "events",
            *self.vars_of({"events_new": [list(e) for e in new_events]}),
        ]
        read = ["run", "-s", *chosen, *EVENT_TIME_WINDOW, *self.vars_of({"pause_ms": 1500})]
        exact = {r: self.world.readable(r, False) for r in chosen}
        appended, readers_run = invoke_together(self.root, [append, read])
        self.steps.append(f"events appended while {' '.join(chosen)} ran")
        self.check_output(appended)
        self.check_output(readers_run)
        assert appended.statuses.get("events") == "success", appended.output[-4000:]
        problems = self.world.settle("events", self.observe("events"), upstream)
        for reader in chosen:
            status = readers_run.statuses.get(reader)
            if exact[reader]:
                assert status == "success", (reader, status, readers_run.output[-4000:])
            if status != "success":
                problems += self.world.settle(reader, self.observe(reader), None)
                continue
            after = self.world.read_state(reader)
            held = self.actual_rows(reader, READERS[reader].columns)
            # The older read when both give the same rows: it is the pessimistic record.
            new = before[reader] if held == before[reader].rows else after
            problems += self.world.settle(reader, self.observe(reader), new)
        assert not problems, problems
        self.runs.clear()
        self.retryable = None
