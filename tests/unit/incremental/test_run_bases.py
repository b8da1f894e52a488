"""The snapshot each run planned from: the first read of the table's state wins, a run that
read none is not validated, and each microbatch window is a run of its own."""

from __future__ import annotations

from dbt.adapters.s3tables.incremental.run_bases import RunBases, run_key


def test_the_first_read_is_the_base_and_later_reads_do_not_load_again() -> None:
    bases, loads = RunBases(), []

    def snapshot(value: int) -> int:
        loads.append(value)
        return value

    key = run_key({"unique_id": "model.p.m"})
    assert not bases.read_state(key)
    bases.note(key, "is_incremental()", lambda: snapshot(1))
    bases.note(key, "last_processed_value()", lambda: snapshot(2))
    assert bases.read_state(key) and loads == [1]
    base = bases.noted(key, 3, "the run's plan")
    assert (base.snapshot_id, base.read_by) == (1, "is_incremental()")


def test_a_run_whose_sql_read_nothing_is_based_on_its_plan() -> None:
    bases = RunBases()
    key = run_key({"unique_id": "model.p.m"})
    assert bases.noted(key, 7, "the run's plan").snapshot_id == 7


def test_each_microbatch_window_is_a_run_of_its_own() -> None:
    first = run_key({"unique_id": "model.p.m", "batch": {"event_time_start": "2024-01-01"}})
    second = run_key({"unique_id": "model.p.m", "batch": {"event_time_start": "2024-01-02"}})
    assert first != second != run_key({"unique_id": "model.p.m"})
