"""Incremental models: one run of one model as one object, its plan and its execution,
and the pure pieces they use.

- `run.py`: `IncrementalRun`, built once per model run from the model's parsed config
  (`model_config.ModelConfig`), its output schema (Spark analyses the SQL once) and the
  table's state: what the adapter and the materialization call.
- `plan.py`: the pure planner, `plan_run`: the run's `Action` (the state machine is in
  its docstring) and everything decided before anything is written, as a `RunPlan`.
- `execute.py`: one executor per kind of action, picked once (`executor_for`); `apply.py`
  is APPLY's (evolution, then the strategy's one statement), `chunk_loop.py` the loop of
  a chunked rebuild, `state_record.py` the state written after the run.
- `context.py`, `warehouse.py`: what the executors work with (the model's query, the
  table, the engine and catalog).
- `strategies.py`: the one statement of each strategy, a pure function of names, and the
  registry `STRATEGIES`: one record per strategy (`strategy_traits.Strategy`: its
  statement, its fallback without MERGE, every trait a run reads); `statement_parts.py`
  what every statement is built from (`IncrementalWrite`); `custom_statement.py` a custom
  strategy's macro (dbt's `get_incremental_<name>_sql` hook) rendered and run.
- `key_uniqueness.py`: whether merge and delete+insert may skip the source dedup (the
  key declared unique by `unique_key_is_unique` or a primary_key/unique constraint).
- `schema_evolution.py`: what `on_schema_change` asks of the table for a schema diff.
- `partition_evolution.py`: `partition_by` as Iceberg partition fields, and what the
  table's spec drops and adds to match them.
- `chunked_refresh.py`: `full_incremental_refresh`, the whole history in time chunks.
- `model_state.py`: what the last run looked like, kept as table properties.
- `commit_counts.py`: the rows a commit inserted, updated and deleted, from its summary.

To add a strategy: its builder and its record in `strategies.py` (every trait is a
required field; `model_config` then accepts its name, and no other code names it), the
row `tests/unit/incremental/test_strategy_registry.py` prints into docs/incremental.md,
and a functional test.
"""
