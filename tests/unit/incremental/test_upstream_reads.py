"""The range an `upstream_changes()` read covers, and every range it refuses."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.s3tables.catalogs.snapshots import Ancestor, Lineage
from dbt.adapters.s3tables.incremental.strategies import STRATEGIES
from dbt.adapters.s3tables.incremental.upstream_reads import (
    RangeKind,
    ReadMark,
    last_read,
    plan_range,
    read_tag,
    refused_reader,
)

UUID = "0b6e2c1e-0000-4000-8000-000000000001"


def lineage(
    *operations: str,
    known: tuple[int, ...] = (),
    expired_before: bool = False,
    schema_from: int | None = None,
) -> Lineage:
    """A history of snapshots 1, 2, ... with these operations (the last is current);
    from snapshot `schema_from` on, written with a second schema."""
    ancestors = tuple(
        Ancestor(
            n,
            n - 1 if n > 1 or expired_before else None,
            op,
            op != "empty",
            10 * n,
            {},
            1 if schema_from is not None and n >= schema_from else 0,
        )
        for n, op in reversed(list(enumerate(operations, start=1)))
    )
    ids = {a.snapshot_id for a in ancestors}
    columns = {
        a.snapshot_id: ("id bigint", "amount double", *(("note string",) if a.schema_id else ()))
        for a in ancestors
    }
    columns.update({n: ("id bigint", "amount double") for n in known})
    return Lineage(UUID, ancestors, frozenset(ids | set(known)), {}, ("id", "amount"), columns)


def test_a_first_build_reads_the_whole_upstream_at_its_current_snapshot() -> None:
    planned = plan_range("m", "local.s.orders", lineage("append", "append"), None, False)
    assert (planned.kind, planned.start, planned.end) == (RangeKind.WHOLE, None, 2)
    assert planned.mark == ReadMark(UUID, 2)
    assert planned.describe() == "local.s.orders: the whole table at snapshot 2"


def test_an_upstream_without_snapshot_is_read_whole_and_records_nothing() -> None:
    planned = plan_range("m", "u", Lineage(UUID, (), frozenset(), {}), None, False)
    assert planned.end is None and planned.mark is None


def test_an_incremental_run_reads_the_commits_after_the_last_read() -> None:
    history = lineage("append", "append", "replace", "append")
    planned = plan_range("m", "u", history, ReadMark(UUID, 1), True)
    assert (planned.kind, planned.start, planned.end) == (RangeKind.CHANGES, 1, 4)
    assert planned.operations == ("append", "replace", "append")
    assert planned.rows == 20 + 40  # the appends' rows; the compaction adds none
    assert planned.describe() == (
        "u: 60 appended rows, snapshots after 1 up to 4 (3 commits: append, replace, append)"
    )
    assert planned.as_response() == {
        "upstream": "u",
        "read": "changes",
        "after_snapshot": 1,
        "up_to_snapshot": 4,
        "commits": ["append", "replace", "append"],
        "rows": 60,
        "unique_key": None,
    }


def test_a_commit_that_changed_no_file_is_read_past() -> None:
    # An empty MERGE upstream commits an `overwrite` without a file: nothing to read.
    history = Lineage(
        UUID,
        (Ancestor(2, 1, "overwrite", False, 0, {}), Ancestor(1, None, "append", True, 5, {})),
        frozenset({1, 2}),
        {},
    )
    planned = plan_range("m", "u", history, ReadMark(UUID, 1), True)
    assert (planned.kind, planned.operations) == (RangeKind.CHANGES, ("overwrite",))


def test_nothing_new_reads_nothing() -> None:
    planned = plan_range("m", "u", lineage("append", "append"), ReadMark(UUID, 2), True)
    assert planned.kind is RangeKind.NOTHING
    assert planned.describe() == "u: nothing new since snapshot 2"


@pytest.mark.parametrize(
    ("history", "mark", "problem"),
    [
        (lineage("append"), None, "holds no record of what it last read"),
        (lineage("append"), ReadMark("another-uuid", 1), "dropped and created again"),
        (lineage("append", "append", known=(7,)), ReadMark(UUID, 7), "unique_key='<key>'"),
        (lineage("append", "append", expired_before=True), ReadMark(UUID, 0), "has expired"),
        (lineage("append", "overwrite", "delete"), ReadMark(UUID, 1), "(delete, overwrite)"),
    ],
)
def test_ranges_that_cannot_be_read_exactly_are_refused_naming_the_fix(
    history: Lineage, mark: ReadMark | None, problem: str
) -> None:
    with pytest.raises(DbtRuntimeError) as refused:
        plan_range("events", "local.s.orders", history, mark, True)
    message = str(refused.value)
    assert problem in message
    assert "Model `events`, upstream_changes(local.s.orders)" in message
    assert "`dbt run -s events --full-refresh`" in message


def test_the_last_read_is_the_later_of_the_newest_tag_and_the_property() -> None:
    key = read_tag("u")
    upstream = lineage("append", "append", "append")  # snapshots 3 (newest), 2, 1

    def target(tags: tuple[int, ...], recorded: int | None) -> Lineage:
        ancestors = tuple(
            Ancestor(10 + n, None, "append", True, 1, {key: f"{UUID}@{snapshot}"})
            for n, snapshot in enumerate(tags)
        )
        properties = {key: f"{UUID}@{recorded}"} if recorded is not None else {}
        return Lineage(UUID, ancestors, frozenset(), properties)

    # The newest tag wins over older tags; the property over an older tag (a build that
    # committed nothing, or an engine that cannot tag); a newer tag over a stale property.
    assert last_read(target((2, 1), None), "u", upstream) == ReadMark(UUID, 2)
    assert last_read(target((1,), 3), "u", upstream) == ReadMark(UUID, 3)
    assert last_read(target((3,), 2), "u", upstream) == ReadMark(UUID, 3)
    assert last_read(target((), 2), "u", upstream) == ReadMark(UUID, 2)
    assert last_read(target((), None), "u", upstream) is None


def test_a_keyed_range_with_updates_and_deletes_is_read_as_a_difference() -> None:
    history = lineage("append", "overwrite", "append", "delete")
    planned = plan_range("m", "u", history, ReadMark(UUID, 1), True, ["id"])
    assert (planned.kind, planned.start, planned.end) == (RangeKind.CHANGES, 1, 4)
    assert planned.by_difference and planned.keys == ("id",)
    assert planned.describe() == (
        "u: row changes per id (INSERT, UPDATE, DELETE), snapshots after 1 up to 4 "
        "(3 commits: overwrite, append, delete), the difference of the two snapshots"
    )
    response = planned.as_response()
    assert (response["read"], response["rows"], response["unique_key"]) == (
        "row_changes",
        None,
        ["id"],
    )


def test_a_keyed_range_of_appends_is_read_as_its_appended_rows() -> None:
    planned = plan_range("m", "u", lineage("append", "append"), ReadMark(UUID, 1), True, ["id"])
    assert not planned.by_difference and planned.rows == 20


def test_row_changes_without_a_key_are_refused_naming_the_keyed_read() -> None:
    with pytest.raises(DbtRuntimeError, match=r"unique_key='<key>'.*--full-refresh"):
        plan_range("m", "u", lineage("append", "overwrite"), ReadMark(UUID, 1), True)


def test_a_keyed_difference_across_a_schema_change_is_refused() -> None:
    history = lineage("append", "append", "overwrite", schema_from=3)
    with pytest.raises(DbtRuntimeError, match="columns changed after snapshot 1"):
        plan_range("m", "u", history, ReadMark(UUID, 1), True, ["id"])
    # Appends alone are read in the upstream's current columns, whatever they were.
    appended = lineage("append", "append", "append", schema_from=3)
    assert plan_range("m", "u", appended, ReadMark(UUID, 1), True, ["id"]).rows == 50
    assert plan_range("m", "u", appended, ReadMark(UUID, 1), True).rows == 50


def test_a_key_the_upstream_lacks_is_refused_on_every_build() -> None:
    with pytest.raises(DbtRuntimeError, match=r"order_id not among the upstream's columns"):
        plan_range("m", "u", lineage("append"), None, False, ["order_id"])


def test_a_keyed_read_of_a_replaced_upstream_is_the_difference_of_its_two_snapshots() -> None:
    # Snapshot 7 is no ancestor of the current one (a table model rebuilt, a seed
    # reloaded, a rollback), but still exists: comparing it with the current one is exact.
    history = lineage("append", "append", known=(7,))
    planned = plan_range("m", "u", history, ReadMark(UUID, 7), True, ["id"])
    assert (planned.kind, planned.start, planned.end) == (RangeKind.CHANGES, 7, 2)
    assert planned.by_difference
    assert planned.describe() == (
        "u: row changes per id (INSERT, UPDATE, DELETE), snapshot 7 to 2 (the upstream was "
        "replaced or rolled back), the difference of the two snapshots"
    )
    # Without a key, appended rows cannot be told apart: refused, naming the keyed read.
    with pytest.raises(DbtRuntimeError, match="no longer in the upstream's history"):
        plan_range("m", "u", history, ReadMark(UUID, 7), True)


def test_a_replaced_upstream_whose_columns_changed_is_refused() -> None:
    history = lineage("append", "append", schema_from=2)
    replaced = Lineage(
        UUID,
        history.ancestors[:1],
        history.known | {9},
        {},
        ("id", "amount", "note"),
        {**history.snapshot_columns, 9: ("id bigint", "amount double")},
    )
    with pytest.raises(DbtRuntimeError, match="columns changed after snapshot 9"):
        plan_range("m", "u", replaced, ReadMark(UUID, 9), True, ["id"])


def test_a_property_bound_to_a_snapshot_the_model_no_longer_holds_records_nothing() -> None:
    key = read_tag("u")
    upstream = lineage("append", "append", "append")
    # The model's history: 11 then 12; snapshot 13 (the undone build) is known, not current.
    ancestors = (Ancestor(11, None, "append", True, 1, {key: f"{UUID}@1"}),)

    def target(bound_to: int) -> Lineage:
        properties = {key: ReadMark(UUID, 3).property_text(bound_to)}
        return Lineage(UUID, ancestors, frozenset({11, 13}), properties)

    # Bound to the current snapshot: the property is the later record.
    assert last_read(target(11), "u", upstream) == ReadMark(UUID, 3, on=11)
    # Bound to the undone build's snapshot: no record; the tag in the history stands.
    assert last_read(target(13), "u", upstream) == ReadMark(UUID, 1)
    # Bound to a snapshot that expired since: it was in the history, so it stands, older
    # than every snapshot still held (a tag on one of those is newer).
    assert last_read(target(5), "u", upstream) == ReadMark(UUID, 1)
    untagged = (Ancestor(11, None, "replace", True, 0, {}),)
    compacted = Lineage(UUID, untagged, frozenset({11}), target(5).properties)
    assert last_read(compacted, "u", upstream) == ReadMark(UUID, 3, on=5)


def test_a_read_mark_round_trips_as_text() -> None:
    assert ReadMark.parse(f"{UUID}@12") == ReadMark(UUID, 12)
    assert ReadMark.parse(ReadMark(UUID, 12).property_text(34)) == ReadMark(UUID, 12, 34)
    assert ReadMark(UUID, 12).property_text(None) == f"{UUID}@12"
    assert ReadMark.parse("garbage") is None
    assert ReadMark.parse(f"{UUID}@12;on=x") is None


@pytest.mark.parametrize(
    ("materialized", "strategy", "on_schema_change", "keyed", "problem"),
    [
        ("view", None, None, False, "a view has no table of its own"),
        ("ephemeral", None, None, False, "an ephemeral model has no table"),
        ("test", None, None, False, "a test has no table"),
        ("incremental", "microbatch", "ignore", False, "microbatch replaces each batch"),
        ("incremental", "insert_overwrite", "ignore", True, "insert_overwrite replaces whole"),
        ("incremental", "merge", "full_incremental_refresh", True, "rebuilds in time chunks"),
        ("incremental", "append", "recreate_empty", False, "with only this run's rows"),
    ],
)
def test_models_no_read_can_be_exact_in_are_refused_in_one_sentence(
    materialized: str, strategy: str | None, on_schema_change: str | None, keyed: bool, problem: str
) -> None:
    refused = refused_reader(
        "copy", materialized, STRATEGIES.get(strategy or ""), on_schema_change, keyed
    )
    assert refused is not None
    message = refused.msg
    assert message.startswith("Model `copy`") and "Fix: " in message
    assert "nothing was read or written" in message
    assert problem in message


@pytest.mark.parametrize(
    ("materialized", "strategy", "keyed"),
    [
        ("table", None, False),
        ("incremental", "append", False),
        ("incremental", "merge", True),
        ("incremental", "delete+insert", True),
        ("incremental", "insert_overwrite", False),
        ("incremental", "scd2", True),
    ],
)
def test_the_models_a_read_can_be_exact_in_are_not_refused(
    materialized: str, strategy: str | None, keyed: bool
) -> None:
    assert (
        refused_reader("copy", materialized, STRATEGIES.get(strategy or ""), "ignore", keyed)
        is None
    )


def test_the_later_record_is_read_in_the_models_history_not_the_upstreams() -> None:
    """A build committed (its tag) but failed before its property was written, after the
    upstream was rolled back and set forward again: the upstream's order says the
    property's read is the later one, the model's history says the commit is."""
    key = read_tag("u")
    upstream = lineage("append", "append")  # snapshots 2 (newest), 1
    ancestors = (
        Ancestor(20, 10, "append", True, 1, {key: f"{UUID}@1"}),  # the failed build's
        Ancestor(10, None, "append", True, 1, {key: f"{UUID}@2"}),
    )
    stale_property = {key: ReadMark(UUID, 2).property_text(10)}
    target = Lineage(UUID, ancestors, frozenset({10, 20}), stale_property)
    assert last_read(target, "u", upstream) == ReadMark(UUID, 1)
    # A property bound to the newest snapshot (a later build that committed nothing).
    newest = {key: ReadMark(UUID, 2).property_text(20)}
    assert last_read(Lineage(UUID, ancestors, frozenset({10, 20}), newest), "u", upstream) == (
        ReadMark(UUID, 2, on=20)
    )


def test_a_key_is_read_as_the_upstream_spells_it() -> None:
    planned = plan_range("m", "u", lineage("append", "overwrite"), ReadMark(UUID, 1), True, ["ID"])
    assert planned.keys == ("id",)
