"""The dbt package `s3tables_spark/`'s pure macros against the adapter's Python, without
Spark or dbt: each strategy's statement is the adapter's, character for character; the
config keys, the "did you mean", S3 Tables' naming rules and the schema diff agree.

The macros are rendered with Jinja as dbt renders them: `return()` ends a macro with a
value, `do` runs an expression, `modules.re` is Python's `re`.
"""

from __future__ import annotations

import datetime
import decimal
import functools
import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jinja2
import jinja2.ext
import pytest
from dbt.artifacts.resources.v1.model import ModelConfig
from dbt.artifacts.resources.v1.snapshot import SnapshotConfig

from dbt.adapters.s3tables.catalogs.s3tables.rules import name_problem, suggested_name
from dbt.adapters.s3tables.errors import ModelConfigError
from dbt.adapters.s3tables.incremental import chunked_refresh
from dbt.adapters.s3tables.incremental.config import normalize_predicates
from dbt.adapters.s3tables.incremental.partition_evolution import parse_partition_by
from dbt.adapters.s3tables.incremental.statement_parts import IncrementalWrite
from dbt.adapters.s3tables.incremental.strategies import STRATEGIES
from dbt.adapters.s3tables.keys.config_keys import (
    ADAPTER_CONFIG_KEYS,
    DBT_READ_KEYS,
    config_fields,
)
from dbt.adapters.s3tables.keys.spelling import nearest_key
from dbt.adapters.s3tables.model_config import INAPPLICABLE_CONFIGS
from dbt.adapters.s3tables.seeds.values import (
    SeedColumn,
    seed_select_sql,
    seed_value_as_text,
    text_rows_view_sql,
)
from dbt.adapters.s3tables.sql.text import expression_problem, split_statements
from dbt.adapters.s3tables.sql.types import iceberg_type, parse_spark_type, spark_type_name

PACKAGE = Path(__file__).resolve().parents[2] / "s3tables_spark"


class Returned(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


def _return(value: Any) -> None:
    raise Returned(value)


class ConfigError(Exception):
    pass


def _raise(message: str) -> None:
    raise ConfigError(message)


@functools.cache
def load_macros(*files: str) -> Any:
    """The package's macros of `files`, callable as `s3tables_spark.<name>(...)` returning
    what their `return()` gives (for model `m`, with no config set)."""
    environment = jinja2.Environment(extensions=[jinja2.ext.do])
    namespace = SimpleNamespace()
    settings: dict[str, Any] = {}
    answers: dict[str, Any] = {}
    macros: dict[str, Any] = {}
    model_name = "m"
    context = {
        "return": _return,
        "modules": SimpleNamespace(re=re, datetime=datetime),
        "tojson": lambda value, sort_keys=False: json.dumps(value, sort_keys=sort_keys),
        "exceptions": SimpleNamespace(raise_compiler_error=_raise, warn=lambda m: None),
        "model": {"name": model_name, "config": settings},
        "config": SimpleNamespace(get=lambda k, default=None: settings.get(k, default)),
        "var": lambda name, default=None: default,
        "run_query": lambda sql: answers[sql],
        "s3tables_spark": namespace,
        "context": macros,
    }
    source = "\n".join((PACKAGE / "macros" / f).read_text() for f in files)
    module = environment.from_string(source).make_module(vars=context)

    def returning(macro: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return macro(*args, **kwargs)
            except Returned as returned:
                return returned.value

        return call

    for name in dir(module):
        macro = getattr(module, name)
        if isinstance(macro, jinja2.runtime.Macro):
            setattr(namespace, name, returning(macro))
    namespace.model_config = settings  # what `config.get` reads: a test sets it
    namespace.query_answers = answers  # what `run_query(sql)` gives: a test sets it
    namespace.context_macros = macros  # the macros dbt's `context` holds: a test sets them
    return namespace


@pytest.fixture(scope="module")
def sql() -> Any:
    return load_macros("strategies.sql")


def write(**overrides: Any) -> IncrementalWrite:
    values: dict[str, Any] = {
        "target": "analytics.orders",
        "source_sql": "select * from src",
        "target_columns": ["id", "label", "amount"],
        "source_columns": ["id", "label", "amount"],
        "unique_key": ["id"],
    }
    return IncrementalWrite(**{**values, **overrides})


def as_dict(w: IncrementalWrite) -> dict[str, Any]:
    return {
        "target": w.target,
        "source_sql": w.source_sql,
        "target_columns": list(w.target_columns),
        "source_columns": list(w.source_columns),
        "unique_key": list(w.unique_key),
        "predicates": list(w.predicates),
        "update_columns": None if w.update_columns is None else list(w.update_columns),
        "watermark_column": w.watermark_column,
        "source_unique": w.source_unique,
        "check_columns": None if w.check_columns is None else list(w.check_columns),
        "valid_from": w.valid_from,
        "valid_to": w.valid_to,
        "event_time": w.event_time,
        "window_start": w.window_start,
        "window_end": w.window_end,
    }


CASES = {
    "append": write(unique_key=()),
    "append, a column the model stopped returning": write(
        unique_key=(), source_columns=["id", "label"]
    ),
    "merge": write(),
    "merge, composite key, predicates": write(
        unique_key=["id", "label"], predicates=["DBT_INTERNAL_DEST.amount > 0"]
    ),
    "merge, bare names in predicates": write(
        predicates=[
            "amount > 0 and `label` != 'x' and upper(label) = t.label",
            "exists (select 1 from other where amount = 1)",
            "transform(arr, amount -> amount + 1) is not null and cast(id as int) > 0",
        ]
    ),
    "merge, watermark": write(watermark_column="amount"),
    "merge, update columns": write(update_columns=["label"]),
    "merge, unique source": write(source_unique=True),
    "merge, a column the model stopped returning": write(source_columns=["ID", "label"]),
    "delete+insert": write(),
    "delete+insert, unique source": write(source_unique=True),
    "insert_overwrite": write(unique_key=()),
    "scd2": write(
        target_columns=["id", "label", "amount", "valid_from", "valid_to"],
    ),
    "scd2, check columns and names": write(
        target_columns=["id", "label", "amount", "vf", "vt"],
        check_columns=["label"],
        valid_from="vf",
        valid_to="vt",
    ),
    "microbatch": write(
        unique_key=(),
        event_time="amount",
        window_start="2024-01-01 00:00:00",
        window_end="2024-01-02 00:00:00",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_each_statement_is_the_adapters(sql: Any, case: str) -> None:
    strategy = case.split(",")[0]
    w = CASES[case]
    statement = STRATEGIES[strategy].statement
    assert statement is not None
    assert sql.strategy_sql(strategy, as_dict(w)) == statement(w)


def test_the_known_config_keys_are_dbts_and_the_adapters() -> None:
    text = (PACKAGE / "macros" / "config.sql").read_text()
    listed = re.search(r"macro known_config_keys\(\).*?\[(.*?)\]", text, re.S)
    assert listed is not None
    keys = set(re.findall(r"'([^']+)'", listed.group(1)))
    # dbt-core 1.12's model config fields, listed for the package on dbt 1.11 too.
    newer_dbt = {"latest_version_pointer", "on_error"}
    assert keys == set(config_fields(ModelConfig)) | ADAPTER_CONFIG_KEYS | DBT_READ_KEYS | newer_dbt


def test_the_snapshot_keys_are_dbts() -> None:
    snapshot_keys = set(config_fields(SnapshotConfig)) - set(config_fields(ModelConfig))
    assert set(load_macros("config.sql").snapshot_config_keys()) == snapshot_keys


TYPOS = [
    "unique_ky",
    "Unique-Key",
    "incremental_stratgy",
    "on_schema_chnage",
    "partition",
    "partitionby",
    "tbl_properties",
    "watermark",
    "cluster_by",
    "materialised",
    "merge_update_cols",
    "xyz",
]


@pytest.mark.parametrize("typo", TYPOS)
def test_did_you_mean_names_the_adapters_key(typo: str) -> None:
    macros = load_macros("config.sql", "partitioning.sql")
    known = macros.known_config_keys()
    assert macros.nearest_key(typo, known) == nearest_key(typo, known)


NAMES = ["orders", "Orders", "my-table", "_x", "x_", "aws_stuff", "a" * 256, "", "ok_9"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", ["namespace", "table", "column"])
def test_s3tables_names_follow_the_adapters_rules(name: str, kind: str) -> None:
    macros = load_macros("names.sql")
    assert macros.name_problem(name, kind) == name_problem(name, kind)
    if name:
        assert macros.suggested_name(name) == suggested_name(name)


def column(name: str, data_type: str) -> SimpleNamespace:
    return SimpleNamespace(name=name, data_type=data_type)


def evolution(mode: str, table: list, model: list) -> Any:
    macros = load_macros("schema_change.sql", "config.sql", "strategies.sql")
    diff = macros.schema_diff(table, model, [])
    return diff, macros.plan_evolution(mode, diff)


def test_sync_all_columns_adds_columns_and_struct_fields_and_widens() -> None:
    table = [
        column("id", "int"),
        column("s", "struct<a:int,b:decimal(10,2)>"),
        column("x", "float"),
    ]
    model = [
        column("ID", "bigint"),
        column("s", "struct<a:int,b:decimal(12,2),c:string>"),
        column("x", "double"),
        column("new", "smallint"),
    ]
    diff, planned = evolution("sync_all_columns", table, model)
    assert planned == {
        "added": [(["s", "c"], "string"), (["new"], "int")],
        "removed": [],
        "changed": [
            (["id"], "int", "bigint"),
            (["s", "b"], "decimal(10,2)", "decimal(12,2)"),
            (["x"], "float", "double"),
        ],
    }
    assert evolution("append_new_columns", table, model)[1]["changed"] == []


def test_no_mode_drops_a_column_and_narrowing_is_refused() -> None:
    diff, planned = evolution(
        "sync_all_columns", [column("id", "int"), column("gone", "string")], [column("id", "int")]
    )
    assert diff["removed"] == ["gone"] and planned["removed"] == []
    with pytest.raises(
        ConfigError,
        match=r"`on_schema_change`: sync_all_columns only widens .* `id` from bigint to int",
    ):
        evolution("sync_all_columns", [column("id", "bigint")], [column("id", "int")])
    with pytest.raises(
        ConfigError,
        match=r"is `fail` and the model's columns differ from the table: new column `n` string",
    ):
        evolution("fail", [column("id", "int")], [column("id", "int"), column("n", "string")])


# --- on_schema_change: full_incremental_refresh ------------------------------------------

CHUNK_CONFIGS = [
    {"event_time": "order_ts", "begin": "2024-05-01", "chunk": "day"},
    {"event_time": "ts", "begin": "2024-05-01 06:30:00", "chunk": "WEEK"},
    {"event_time": "ts"},
    {"event_time": "ts", "chunk": "month", "begin": None},
    {"event_time": "ts", "chunk": "year"},
    {"event_time": "ts", "begin": "2024-13-01"},
    {"event_time": "ts", "begin": "May 1"},
    {"event_time": "", "chunk": "day"},
    {"chunk": "day"},
    {"event_time": "ts", "size": 3},
    "order_ts",
]


@pytest.mark.parametrize("raw", CHUNK_CONFIGS, ids=str)
def test_the_chunk_plan_and_its_refusals_are_the_adapters(raw: Any) -> None:
    macros = load_macros("chunked_refresh.sql", "config.sql", "state.sql")
    macros.model_config.clear()
    macros.model_config["full_incremental_refresh"] = raw
    try:
        expected: Any = chunked_refresh.chunk_plan("m", {"full_incremental_refresh": raw})
    except ModelConfigError as error:
        with pytest.raises(ConfigError) as refused:
            macros.chunk_plan()
        assert str(refused.value) == error.msg
        return
    plan = macros.chunk_plan()
    assert chunked_refresh.ChunkPlan(**plan) == expected
    [(key, value)] = macros.plan_property(plan).items()
    assert (key, value) == ("dbt.s3tables.full_incremental_refresh", expected.to_property())


@pytest.mark.parametrize("chunk", chunked_refresh.CHUNK_UNITS)
@pytest.mark.parametrize("start", ["2024-02-28 00:00:00", "2024-12-01 00:00:00"])
def test_the_next_chunk_is_the_adapters(chunk: str, start: str) -> None:
    macros = load_macros("chunked_refresh.sql", "config.sql", "state.sql")
    expected = chunked_refresh.next_chunk_start(chunked_refresh.parse_timestamp(start), chunk)
    assert macros.next_chunk_start(start, chunk) == expected.strftime("%Y-%m-%d %H:%M:%S")


WINDOW_CASES = {
    "fresh": ([], False, None),
    "fresh, rows": (["2024-05-02 00:00:00", "2024-05-01 00:00:00"], False, None),
    "resumed, nothing left": ([], True, "2024-05-03 00:00:00"),
    "resumed": (["2024-05-03 00:00:00", "2024-05-04 00:00:00"], True, "2024-05-03 00:00:00"),
    "resumed after the NULL rows": (["2024-05-01 00:00:00"], True, None),
}


@pytest.mark.parametrize("case", WINDOW_CASES)
def test_the_chunk_windows_and_their_predicates_are_the_adapters(case: str) -> None:
    macros = load_macros("chunked_refresh.sql", "config.sql", "state.sql")
    starts, started, resume_from = WINDOW_CASES[case]
    progress = chunked_refresh.Progress(started, resume_from)
    expected = chunked_refresh.chunk_windows(starts, progress)
    windows = macros.chunk_windows(starts, started, resume_from)
    assert [chunked_refresh.ChunkWindow(*w) for w in windows] == expected
    assert [macros.window_predicate("`ts`", w) for w in windows] == [
        w.predicate("ts") for w in expected
    ]


# --- enforced contracts on table models ---------------------------------------------------

# What Spark 3.5's SHOW CREATE TABLE prints for an Iceberg table (StructField.toDDL per
# column, the list closed on the last column's line).
SHOW_CREATE_TABLE = """CREATE TABLE local.analytics.summary (
  customer_id INT NOT NULL COMMENT 'Customer key, unique.',
  name STRING,
  `odd name` BIGINT NOT NULL,
  total_amount DECIMAL(20,2))
USING iceberg
LOCATION '/tmp/warehouse/analytics/summary'
TBLPROPERTIES (
  'format' = 'iceberg/parquet',
  'format-version' = '2')
"""


def test_the_declared_columns_are_read_from_show_create_table() -> None:
    macros = load_macros(
        "contracts.sql", "config.sql", "state.sql", "strategies.sql", "schema_change.sql"
    )
    macros.query_answers["SHOW CREATE TABLE analytics.summary"] = [[SHOW_CREATE_TABLE]]
    assert macros.declared_columns("analytics.summary") == [
        ("customer_id", "int", True),
        ("name", "string", False),
        ("odd name", "bigint", True),
        ("total_amount", "decimal(20,2)", False),
    ]


def test_a_contracted_rebuild_names_every_difference() -> None:
    macros = load_macros(
        "contracts.sql", "config.sql", "state.sql", "strategies.sql", "schema_change.sql"
    )
    table = [("id", "int", True), ("name", "string", False), ("gone", "int", False)]
    assert (
        macros.declared_differences(
            table, [("id", "int", True), ("name", "string", False), ("gone", "int", False)]
        )
        == []
    )
    assert macros.declared_differences(
        table, [("ID", "bigint", True), ("name", "string", True), ("new", "date", False)]
    ) == [
        "column `new` is new",
        "column `gone` is no longer returned",
        "column `ID` changes type to bigint",
        "column `name` becomes NOT NULL",
    ]
    assert macros.declared_differences(table, [table[1], table[0], table[2]]) == [
        "the columns are in another order"
    ]


@pytest.mark.parametrize("owner", ["my_project", "some_package"])
def test_an_override_of_a_strategys_macro_is_refused_not_ignored(owner: str) -> None:
    macros = load_macros("config.sql", "partitioning.sql")
    macros.model_config.clear()
    macros.model_config.update({"unique_key": "id", "incremental_strategy": "delete+insert"})
    generator = SimpleNamespace(macro=SimpleNamespace(package_name=owner))
    macros.context_macros["get_incremental_delete_insert_sql"] = generator
    try:
        with pytest.raises(ConfigError) as error:
            macros.incremental_settings()
    finally:
        macros.context_macros.clear()
        macros.model_config.clear()
    message = str(error.value)
    assert "config `incremental_strategy`" in message and f"of `{owner}` overrides" in message
    assert "Fix: remove the macro, or run the model on the adapter" in message


def test_dbts_own_strategy_macro_is_no_override() -> None:
    macros = load_macros("config.sql", "partitioning.sql")
    macros.model_config.update({"unique_key": "id", "incremental_strategy": "merge"})
    generator = SimpleNamespace(macro=SimpleNamespace(package_name="dbt"))
    macros.context_macros["get_incremental_merge_sql"] = generator
    try:
        settings = macros.incremental_settings()
    finally:
        macros.context_macros.clear()
        macros.model_config.clear()
    assert settings["strategy"] == "merge"


PREDICATES = [
    "id > 0",
    "a in (1, (2))",
    "name = 'x) or (1=1'",
    "`odd)name` = 1",
    "name = 'it\\'s'",
    "1=1) OR (1=1",
    "(a = 1",
    "a = 1; drop table t",
    "a = 1 --",
    "a = 1 /* x */",
    "a = 'open",
    "a = `open",
    "  ",
]


@pytest.mark.parametrize("predicate", PREDICATES)
def test_an_incremental_predicate_is_checked_as_the_adapter_checks_it(predicate: str) -> None:
    """A predicate that could break out of the statement's parentheses (under
    delete+insert, `x) OR (y` would delete rows it should not) is refused in the adapter's
    sentence; one expression passes, as on the adapter."""
    macros = load_macros("config.sql", "chunked_refresh.sql", "state.sql", "partitioning.sql")
    assert macros.expression_problem(predicate) == expression_problem(predicate)
    macros.model_config.clear()
    macros.model_config.update({"unique_key": "id", "incremental_predicates": [predicate]})
    try:
        expected = normalize_predicates("m", [predicate])
    except ModelConfigError as error:
        with pytest.raises(ConfigError) as refused:
            macros.incremental_settings()
        assert str(refused.value) == error.msg
        return
    assert macros.incremental_settings()["predicates"] == expected


@pytest.mark.parametrize("key", ["catalog_name", "catalog"])
def test_a_catalog_integration_is_refused_not_ignored(key: str) -> None:
    """The package builds in the server's catalog: a model naming another is refused in
    one sentence (it landed in the server's default catalog)."""
    macros = load_macros("config.sql", "partitioning.sql")
    macros.model_config.clear()
    macros.model_config[key] = "marts"
    with pytest.raises(ConfigError) as refused:
        macros.check_config_keys()
    assert str(refused.value) == (
        f"Model `m`, config `{key}`: not applicable: the package builds every model in the "
        "Thrift server's own catalog; a catalog integration (catalogs.yml) needs the "
        f"adapter. Fix: remove `{key}`"
    )


def test_only_changed_state_is_set() -> None:
    """A run whose state is the table's already sets no property (no metadata commit)."""
    macros = load_macros("state.sql")
    kept = {"dbt.s3tables.incremental_strategy": "merge", "dbt.s3tables.last_processed_value": "3"}
    assert macros.changed_properties(dict(kept), dict(kept)) == {}
    moved = {**kept, "dbt.s3tables.last_processed_value": "4"}
    assert macros.changed_properties(moved, kept) == {"dbt.s3tables.last_processed_value": "4"}
    assert macros.changed_properties(moved, {}) == moved


SPARK_TYPES = [
    "array<smallint>",
    "map<string,tinyint>",
    "array<struct<a:smallint>>",
    "MAP<STRING, INT>",
    "STRUCT<a: INT, `b c`: DECIMAL(10, 2)>",
    "struct<a:map<int,array<short>>,b:string>",
    "decimal",
    "dec(5)",
    "numeric(7,3)",
    "varchar(10)",
    "char(3)",
    "timestamp",
    "timestamp_ltz",
    "timestamp_ntz",
    "real",
    "long",
    "integer",
    "binary",
    "boolean",
    "date",
]


@pytest.mark.parametrize("spark_type", SPARK_TYPES)
def test_a_type_is_stored_as_the_adapter_stores_it(spark_type: str) -> None:
    """Nested types compare as the adapter compares them: `array<smallint>` is the
    `array<int>` Iceberg keeps, so a model returning it is no schema change (each run
    was one: `recreate_empty` replaced the table every run, `fail` refused every run)."""
    macros = load_macros("schema_change.sql")
    expected = spark_type_name(iceberg_type(parse_spark_type(spark_type), "c"))
    assert macros.stored_type(spark_type) == expected


def test_a_nested_type_the_table_stores_is_no_change() -> None:
    table = [column("a", "array<int>"), column("m", "map<string,int>")]
    model = [column("a", "array<smallint>"), column("m", "map<string,tinyint>")]
    assert evolution("fail", table, model)[0] == {"added": [], "removed": [], "changed": []}


PARTITION_ENTRIES = [
    ["grp"],
    ["day(ts)", "identity(c)", "truncate(s, 4)", "hour(t2)"],
    ["days(ts), bucket(16, id)"],
    ["DATE(ts)", "months(m)", "years(y)", "truncate(4, s)", "bucket(id, 8)"],
    ["`odd name`", "day(`ts`)"],
    ["day(ts)", "hours(ts)"],
    ["day(ts)", "days(TS)"],
    ["sum(x)"],
    ["bucket(0, id)"],
    ["bucket(id)"],
    ["a, b)"],
]


@pytest.mark.parametrize("entries", PARTITION_ENTRIES, ids=str)
def test_partition_by_is_read_as_the_adapter_reads_it(entries: list[str]) -> None:
    """Every alias the adapter accepts is one field (the table's `days(ts)` is the model's
    `day(ts)`), and an entry it refuses is refused in its sentence, before anything is
    written."""
    macros = load_macros("partitioning.sql", "config.sql")
    try:
        expected = [term.describe() for term in parse_partition_by("m", entries)]
    except ModelConfigError as error:
        with pytest.raises(ConfigError) as refused:
            macros.partition_terms(entries)
        assert str(refused.value) == error.msg
        return
    assert macros.partition_terms(entries) == expected


def test_the_tables_partition_fields_are_the_models() -> None:
    macros = load_macros("partitioning.sql", "config.sql")
    # What DESCRIBE TABLE lists for PARTITIONED BY (day(ts), identity(c), truncate(s, 4)).
    described = [
        ("id", "int", None),
        ("", "", ""),
        ("# Partitioning", "", ""),
        ("Part 0", "days(ts)", ""),
        ("Part 1", "c", ""),
        ("Part 2", "truncate(4, s)", ""),
    ]
    macros.query_answers["DESCRIBE TABLE analytics.t"] = described
    table = macros.table_partitioning("analytics.t")
    model = macros.partition_terms(["identity(C)", "truncate(s, 4)", "day(ts)"])
    assert macros.same_partitioning(table, model)
    assert not macros.same_partitioning(table, macros.partition_terms(["hour(ts)", "c", "s"]))


SCRIPTS = [
    "SET spark.sql.shuffle.partitions = 3; SET spark.sql.session.timeZone = UTC;",
    "SET a = 1",
    "-- a comment\nSET a = 1;\n/* only a comment */;",
    "create temporary function f as 'x;y'; select ';' as `a;b`",
    "",
]


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_sql_header_is_split_as_the_adapter_splits_it(script: str) -> None:
    """The Thrift server runs one statement a call: a `SET` header sent with the
    statement after it took the rest of the text as its value."""
    assert load_macros("tables.sql").split_statements(script) == split_statements(script)


SEED_VALUES = [
    None,
    True,
    False,
    decimal.Decimal("12345678.1234"),
    decimal.Decimal("1E+2"),
    decimal.Decimal("-0.5"),
    7,
    datetime.datetime(2024, 1, 15, 10, 30),
    datetime.datetime(2024, 1, 15, 10, 30, 0, 1500),
    datetime.date(2024, 2, 29),
    datetime.timedelta(hours=1, minutes=2),
    'Zoë "Zed" O\'Brien \\ x',
]


@pytest.mark.parametrize("value", SEED_VALUES, ids=repr)
def test_a_seed_cell_is_the_adapters_text(value: Any) -> None:
    """Every cell travels as the text the adapter sends (a decimal in plain notation,
    never through a float as dbt-spark's seeds send it)."""
    assert load_macros("seeds.sql", "state.sql").seed_text(value) == seed_value_as_text(value)


SEED_COLUMNS = [
    SeedColumn("id", "id", "bigint"),
    SeedColumn("note", "`note`", "string"),
    SeedColumn("code", "code", "varchar(3)"),
    SeedColumn("amount", "amount", "decimal(12,4)"),
    SeedColumn("odd's", "`odd's`", "date"),
]


@pytest.mark.parametrize(
    "rows", [[], [["1", None, "a", "1.5", "2024-01-01"], ["2", "x'y"] * 2 + ["z"]]]
)
@pytest.mark.parametrize("empty", [False, True])
def test_a_seed_loads_with_the_adapters_statements(rows: list, empty: bool) -> None:
    """The text view and the checked load query are the adapter's, character for
    character: a value that does not fit its type fails the load, naming the row."""
    macros = load_macros("seeds.sql", "state.sql", "strategies.sql")
    width = len(SEED_COLUMNS)
    assert macros.seed_text_view_sql("v", rows, width) == text_rows_view_sql(
        "v", [tuple(r) for r in rows], width
    )
    columns = [(c.name, c.sql_name, c.data_type) for c in SEED_COLUMNS]
    assert macros.seed_select_sql("v", columns, "seeds/s.csv", empty) == seed_select_sql(
        "v", SEED_COLUMNS, "seeds/s.csv", empty
    )


# --- the contract between the two targets: docs/dbt-cloud.md's table of every key -----

DOCS = Path(__file__).resolve().parents[2] / "docs" / "dbt-cloud.md"
# Where the package reads a key it honours other than as `config.get('<key>')`.
PACKAGE_READERS = {
    "persist_docs": "config.persist_relation_docs()",
    "materialized": "{% materialization table, adapter='spark'",
    "delimiter": "load_agate_table()",
}


def contract_rows() -> dict[str, tuple[str, str]]:
    """docs/dbt-cloud.md's `Every config key` table: {key: (adapter, package)}, each the
    first word of its cell (`honoured`, `dbt's`, `refused`)."""
    section = DOCS.read_text().split("## Every config key", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = (cells[1].split()[0], cells[2].split()[0])
    return rows


def package_source() -> str:
    return "\n".join(path.read_text() for path in sorted(PACKAGE.rglob("*.sql")))


def test_the_contract_lists_every_key_either_target_accepts() -> None:
    assert sorted(contract_rows()) == sorted(load_macros("config.sql").known_config_keys())


def test_the_contracts_adapter_column_is_the_adapters() -> None:
    refused = set(INAPPLICABLE_CONFIGS) | {"file_format", "grants"}
    for key, (adapter, _) in contract_rows().items():
        expected = (
            "refused" if key in refused else "honoured" if key in ADAPTER_CONFIG_KEYS else "dbt's"
        )
        assert adapter == expected, key


@pytest.mark.parametrize("key", sorted(contract_rows()))
def test_the_package_honours_or_refuses_every_key_the_adapter_acts_on(key: str) -> None:
    """A key the package says it refuses is refused (one sentence naming the model and
    the key) when set; one it honours is read by the package and not refused; the
    package leaves to dbt only what the adapter leaves to dbt: nothing is accepted and
    ignored."""
    adapter, package = contract_rows()[key]
    macros = load_macros("config.sql", "partitioning.sql")
    macros.model_config.clear()
    macros.model_config[key] = "parquet" if key == "file_format" else "x"
    try:
        if package == "refused":
            with pytest.raises(ConfigError) as refused:
                macros.check_config_keys()
            assert str(refused.value).startswith(f"Model `m`, config `{key}`: "), key
        elif package == "honoured":
            reader = PACKAGE_READERS.get(key, f"config.get('{key}')")
            assert reader in package_source(), key
            macros.check_config_keys()
        else:
            assert package == "dbt's" and adapter == "dbt's", key
    finally:
        macros.model_config.clear()
