"""What an incremental strategy is, as one record (`Strategy`): its statement and every
trait a run reads of it. The built-in records sit beside their statements in
strategies.py (`STRATEGIES`); a project's or package's `get_incremental_<name>_sql` macro
(dbt's custom-strategy hook) becomes a record here (`custom_strategy`), with the default
traits below or those its model declares in `incremental_strategy_traits`.

No code outside these two modules tests a strategy's name: it reads the record.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.keys.spelling import did_you_mean

if TYPE_CHECKING:
    from dbt.adapters.s3tables.incremental.statement_parts import IncrementalWrite

# A strategy's statement from what it writes (names only).
Builder = Callable[["IncrementalWrite"], str]

# A custom strategy's macro as dbt's context holds it: called with dbt's `arg_dict`, it
# renders the strategy's SQL.
StrategyMacro = Callable[[dict[str, Any]], object]

# The model config key declaring a custom strategy's traits.
TRAITS_CONFIG_KEY = "incremental_strategy_traits"


class Replaces(enum.Enum):
    """What a strategy's statement replaces in the table with the run's rows."""

    NOTHING = "nothing"  # rows are only added
    ROWS_BY_KEY = "rows_by_key"  # the rows of the keys the run's rows hold
    PARTITIONS = "partitions"  # every row of the partitions the run's rows fall in
    TIME_WINDOW = "time_window"  # every row of the batch's event_time window
    UNDECLARED = "undeclared"  # a custom strategy that does not say


class Counting(enum.Enum):
    """How a strategy's commit is counted from its snapshot summary."""

    APPENDED = "appended"  # every added row is inserted
    PARTITIONS_REPLACED = "partitions_replaced"  # rows added, the replaced partitions' removed
    ROWS_REPLACED = "rows_replaced"  # rows added and rows deleted; nothing is updated
    MERGED = "merged"  # an updated row is a delete plus an added row


class Reading(enum.Enum):
    """A way of reading an upstream with `upstream_changes()`."""

    KEYLESS = "upstream_changes(ref(...))"
    KEYED = "upstream_changes(ref(...), unique_key=...)"


def readings_for(replaces: Replaces) -> frozenset[Reading]:
    """The readings a statement replacing `replaces` keeps exact: one that touches only
    the rows it is given (or their keys) takes the new rows or their changes; one that
    replaces whole partitions takes new rows only (the partitions they reach are read
    whole); one that replaces a window, or says not what it replaces, takes none."""
    if replaces in (Replaces.NOTHING, Replaces.ROWS_BY_KEY):
        return frozenset(Reading)
    if replaces is Replaces.PARTITIONS:
        return frozenset({Reading.KEYLESS})
    return frozenset()


@dataclass(frozen=True)
class Strategy:
    """One incremental strategy: every field is declared by each record (no defaults but
    the custom macro's name), so a new strategy cannot forget a trait."""

    name: str
    # Its one statement, and the same without MERGE INTO (None: it needs no MERGE). A
    # custom strategy has neither: its macro renders the statement.
    statement: Builder | None
    fallback: Builder | None
    # Its statement is a MERGE INTO (Iceberg's SQL extensions), and `fallback` none.
    uses_merge: bool
    # Its statement (and fallback) on a table holding files of earlier partition specs,
    # where `statement` would leave their rows in place (None: right on any spec).
    across_specs: tuple[Builder, Builder] | None
    # Spark settings its statement runs with (for that statement only).
    statement_settings: Mapping[str, str]
    # It needs `unique_key`.
    keyed: bool
    # Its statement makes the model's rows unique per key (one row per key is written).
    deduplicates: bool
    # Its statement uses the model's rows as they are when the key is declared unique
    # (key_uniqueness.py), skipping its dedup or its DISTINCT of keys.
    trusts_declared_key: bool
    # The run counts the model's rows per key (a repeated key is said) unless declared unique.
    counts_keys: bool
    replaces: Replaces
    # A run whose model returns no rows commits nothing (else the statement runs anyway).
    skipped_when_empty: bool
    counted_as: Counting
    # What it writes into a column the model no longer returns (rows it leaves in place
    # keep their values); docs/incremental.md, "Schema evolution".
    kept_column_values: str
    # Its table holds history rows, with validity columns beyond the model's (scd2).
    keeps_history: bool
    # `merge_delete_when` deletes rows in its statement.
    takes_delete_when: bool
    # dbt runs it batch by batch, each with its event_time window (microbatch).
    batched: bool
    # The macro rendering its statement: dbt's custom-strategy hook (None: built in).
    custom_macro: str | None = field(default=None)

    @property
    def readings(self) -> frozenset[Reading]:
        """The `upstream_changes()` readings a run of it keeps exact (by what it replaces)."""
        return readings_for(self.replaces)

    @property
    def prunes_by_key_span(self) -> bool:
        """Its built-in statement matches target rows by key equality (`key_match`), so
        the run's key span bounds the target rows it reads (key_span.py); a custom
        strategy's macro renders its own statement."""
        return self.replaces is Replaces.ROWS_BY_KEY and self.custom_macro is None

    @property
    def rerun_changes_nothing(self) -> bool:
        """Run again over the same rows, it leaves the table as the run before did: it
        replaces rows (by key or by partition) rather than adds them, keeps no history
        and has no time window (`skip_when_unchanged`)."""
        return (
            self.replaces in (Replaces.ROWS_BY_KEY, Replaces.PARTITIONS)
            and not self.keeps_history
            and not self.batched
        )

    @property
    def needs_partition_by(self) -> bool:
        return self.replaces is Replaces.PARTITIONS

    @property
    def needs_event_time(self) -> bool:
        return self.replaces is Replaces.TIME_WINDOW


def macro_name(strategy: str) -> str:
    """dbt's name for a strategy's macro (`get_incremental_delete_insert_sql` for
    `delete+insert`)."""
    return f"get_incremental_{strategy.replace('+', '_')}_sql"


# What a model may declare of a custom strategy, and the values each takes.
DECLARABLE_TRAITS: dict[str, tuple[str, ...]] = {
    "replaces": tuple(r.value for r in Replaces if r is not Replaces.UNDECLARED),
    "keyed": ("true", "false"),
    "skipped_when_empty": ("true", "false"),
    "counted_as": tuple(c.value for c in Counting),
}

# A custom strategy's traits when its model declares none.
CUSTOM_KEPT_COLUMN_VALUES = (
    "a custom strategy's macro gets NULL in them in its temp_relation's rows"
)


def custom_strategy(
    model_name: str, name: str, built_in: Strategy | None, declared: object
) -> Strategy:
    """The record of a custom strategy `name` (its macro `get_incremental_<name>_sql`):
    a built-in one's traits when it overrides that name, else the defaults (it replaces
    what it does not say, so no `upstream_changes()` read is exact in it; it needs no key;
    its statement runs even with no rows; its commit counts rows added and removed);
    then the traits the model declares."""
    base = built_in or Strategy(
        name=name,
        statement=None,
        fallback=None,
        uses_merge=False,
        across_specs=None,
        statement_settings={},
        keyed=False,
        deduplicates=False,
        trusts_declared_key=False,
        counts_keys=False,
        replaces=Replaces.UNDECLARED,
        skipped_when_empty=False,
        counted_as=Counting.ROWS_REPLACED,
        kept_column_values=CUSTOM_KEPT_COLUMN_VALUES,
        keeps_history=False,
        takes_delete_when=False,
        batched=False,
    )
    # The macro gets the model's rows as they are: the adapter's dedup, key counts and
    # `merge_delete_when` are the built-in statements', not a custom macro's.
    record = replace(
        base,
        statement=None,
        fallback=None,
        across_specs=None,
        deduplicates=False,
        trusts_declared_key=False,
        counts_keys=False,
        takes_delete_when=False,
        kept_column_values=CUSTOM_KEPT_COLUMN_VALUES,
        custom_macro=macro_name(name),
    )
    return _with_declared(model_name, record, declared)


def _with_declared(model_name: str, record: Strategy, declared: object) -> Strategy:
    """`record` with the traits its model declares in `incremental_strategy_traits`."""
    if declared is None:
        return record
    if not isinstance(declared, Mapping):
        raise ModelConfigError(
            model_name,
            TRAITS_CONFIG_KEY,
            f"`{declared}` is not a mapping of traits",
            f"write e.g. `{{replaces: rows_by_key, keyed: true}}`; traits: "
            f"{', '.join(DECLARABLE_TRAITS)}",
        )
    values: dict[str, Any] = {}
    for key, value in declared.items():
        allowed = DECLARABLE_TRAITS.get(str(key))
        if allowed is None:
            raise ModelConfigError(
                model_name,
                f"{TRAITS_CONFIG_KEY}.{key}",
                "is not a trait a custom strategy declares"
                + did_you_mean(str(key), DECLARABLE_TRAITS),
                f"use one of: {', '.join(DECLARABLE_TRAITS)}",
            )
        text = str(value).strip().lower()
        if text not in allowed:
            raise ModelConfigError.unknown_value(
                model_name, f"{TRAITS_CONFIG_KEY}.{key}", value, allowed
            )
        values[str(key)] = text
    if "replaces" in values:
        replaces = Replaces(values["replaces"])
        if replaces is Replaces.TIME_WINDOW and not record.batched:
            raise ModelConfigError(
                model_name,
                f"{TRAITS_CONFIG_KEY}.replaces",
                "is `time_window`, and dbt runs only `microbatch` batch by batch",
                "name the strategy's macro `get_incremental_microbatch_sql` (an override), "
                "or declare what else it replaces",
            )
        record = replace(record, replaces=replaces)
    if "keyed" in values:
        record = replace(record, keyed=values["keyed"] == "true")
    if "skipped_when_empty" in values:
        record = replace(record, skipped_when_empty=values["skipped_when_empty"] == "true")
    if "counted_as" in values:
        record = replace(record, counted_as=Counting(values["counted_as"]))
    return record


def undeclared_traits(strategy: Strategy) -> list[str]:
    """The fields of `strategy` left unset (None where a value is required): a registered
    strategy declares them all."""
    optional = {"statement", "fallback", "across_specs", "custom_macro"}
    return [
        f.name
        for f in fields(strategy)
        if f.name not in optional and getattr(strategy, f.name) is None
    ]


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _without_merge(strategy: Strategy) -> str:
    if strategy.custom_macro:
        return "its macro's SQL"
    if not strategy.uses_merge:
        return "the same INSERT"
    return "one whole-table INSERT OVERWRITE" if strategy.fallback else "refused"


def traits_table(strategies: Mapping[str, Strategy]) -> str:
    """The table of every strategy's traits, as docs/incremental.md shows it (a unit test
    checks the page holds exactly this)."""
    lines = [
        "| strategy | needs `unique_key` | deduplicates per key | replaces "
        "| empty run commits | counted as | `upstream_changes()` readings | without MERGE |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for strategy in strategies.values():
        readings = (
            ", ".join(
                "keyless" if r is Reading.KEYLESS else "keyed"
                for r in Reading
                if r in strategy.readings
            )
            or "refused"
        )
        lines.append(
            f"| `{strategy.name}` | {_yes(strategy.keyed)} | {_yes(strategy.deduplicates)} "
            f"| {strategy.replaces.value.replace('_', ' ')} "
            f"| {'nothing' if strategy.skipped_when_empty else 'its statement'} "
            f"| {strategy.counted_as.value.replace('_', ' ')} | {readings} "
            f"| {_without_merge(strategy)} |"
        )
    return "\n".join(lines)
