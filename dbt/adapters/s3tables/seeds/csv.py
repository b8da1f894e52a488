"""A seed's CSV read with Arrow: the column types dbt's agate loader would infer, and the
cells as text in a Parquet file for Spark to cast.

dbt's `load_agate_table()` parses every cell in Python. Here pyarrow parses the file in
batches (all cells as text, dbt's delimiter and quoting) and each column gets the type
agate's TypeTester would give it: the first of dbt's types (`build_type_tester`: Integer,
Number, Date, DateTime, ISODateTime, Boolean, Text) that every value passes. A value in the
plain form of a type (`12.5`, `2024-01-31`, `2024-01-31 10:00:00`, `true`) is recognised by
vectorised checks that accept nothing agate refuses; any other distinct value is tested with
agate's own type, so the decision is agate's by construction. A second pass writes each
value as the text of agate's value (a `$1,000` number as `1000`, `TRUE` as `true`, `null` as
NULL) to Parquet, one batch at a time: memory stays bounded by the batch, not the file.

A file pyarrow cannot read as a rectangle (a blank line, a short row) is read with agate's
own CSV reader instead, in batches too: it is exact, only slower.
"""

from __future__ import annotations

import decimal
import math
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import agate
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
from dbt_common.clients.agate_helper import (
    BOM,
    Integer,
    ISODateTime,
    Number,
    build_type_tester,
)
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.s3tables.seeds.values import ROW_COLUMN, seed_value_as_text

# Rows shown by `dbt seed --show` are sampled from this many first rows.
PREVIEW_ROWS = 1000
_FALLBACK_BATCH_ROWS = 65_536
_BLOCK_BYTES = 8 << 20
# Values tested with agate first in each batch, before any vectorised check.
_SAMPLE = 20

# The plain form of each type: every match passes agate's test (checked in `_plain`).
_PLAIN_NUMBER = r"^-?[0-9]+(\.[0-9]+)?$"
_PLAIN_FORMATS = {
    agate.data_types.Date: (r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "%Y-%m-%d"),
    agate.data_types.DateTime: (
        r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$",
        "%Y-%m-%d %H:%M:%S",
    ),
    ISODateTime: (
        r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$",
        "%Y-%m-%dT%H:%M:%S",
    ),
}
# Texts that may be one of a Text column's null spellings (`null`, blank), checked exactly.
_MAYBE_NULL_TEXT = r"^\s*([nN][uU][lL][lL])?\s*$"


@dataclass
class _Inference:
    """One column's surviving candidate types while the file is read."""

    candidates: list[agate.data_types.DataType]
    max_decimal_places: int = 0


@dataclass
class SeedText:
    """A seed's cells as text columns `c0..cN` and `dbt_row` in a Parquet file, with what
    dbt's seed node needs: column names, agate types, row count and a preview table."""

    column_names: list[str]
    column_types: list[agate.data_types.DataType]
    row_count: int
    preview: agate.Table
    # A Number column's most decimal places (agate's MaxPrecision), for `convert_type`.
    number_probe: list[decimal.Decimal | None]
    directory: tempfile.TemporaryDirectory[str] = field(repr=False)

    @property
    def width(self) -> int:
        return len(self.column_names)

    @property
    def parquet_path(self) -> str:
        return str(Path(self.directory.name) / "rows.parquet")

    def batches(self) -> Iterator[pa.RecordBatch]:
        yield from pq.ParquetFile(self.parquet_path).iter_batches()

    def type_probe(self) -> agate.Table:
        """One row with the column types and, for numbers, a value with the column's most
        decimal places: what an adapter's `convert_type` looks at."""
        return agate.Table([self.number_probe], self.column_names, self.column_types)

    def remove(self) -> None:
        self.directory.cleanup()


def read_seed_csv(path: str, delimiter: str, text_columns: list[str]) -> SeedText:
    """Read the seed at `path`: infer its types as dbt does (columns in `text_columns`,
    i.e. `column_types`, stay text), then write its cells as text to Parquet."""
    if len(delimiter) != 1:
        # dbt's own loader fails here too, as a compilation error.
        raise CompilationError(
            f"Seed {path}: delimiter {delimiter!r} is not one character. Fix: set the "
            "seed's `delimiter` config to one character, or remove it for ','"
        )
    header = _header(path, delimiter)
    names = list(agate.utils.deduplicate(header, column_names=True))
    tester = build_type_tester(text_columns=text_columns)
    forced = {names.index(name): kind for name, kind in tester._force.items() if name in names}
    inference = {
        i: _Inference(list(tester._possible_types)) for i in range(len(names)) if i not in forced
    }
    use_arrow = True
    try:
        for batch in _batches(path, delimiter, len(names), arrow=True):
            _infer(batch, inference)
    except pa.ArrowInvalid:
        use_arrow = False
        inference = {i: _Inference(list(tester._possible_types)) for i in inference}
        for batch in _batches(path, delimiter, len(names), arrow=False):
            _infer(batch, inference)
    types = [forced[i] if i in forced else inference[i].candidates[0] for i in range(len(names))]
    probe = [
        decimal.Decimal(1).scaleb(-inference[i].max_decimal_places)
        if i in inference and isinstance(types[i], Number)
        else None
        for i in range(len(names))
    ]
    directory = tempfile.TemporaryDirectory(prefix="dbt_seed_")
    text = SeedText(names, types, 0, agate.Table([], names, types), probe, directory)
    schema = pa.schema(
        [*(pa.field(f"c{i}", pa.string()) for i in range(len(names))), (ROW_COLUMN, pa.int64())]
    )
    preview_rows: list[list[str | None]] = []
    mappings: list[dict[str, str | None]] = [{} for _ in names]
    with pq.ParquetWriter(text.parquet_path, schema, compression="none") as writer:
        for batch in _batches(path, delimiter, len(names), arrow=use_arrow):
            if len(preview_rows) < PREVIEW_ROWS:
                wanted = PREVIEW_ROWS - len(preview_rows)
                preview_rows.extend(
                    list(row) for row in zip(*(a[:wanted].to_pylist() for a in batch), strict=True)
                )
            columns = [
                _as_text(array, kind, mapping)
                for array, kind, mapping in zip(batch, types, mappings, strict=True)
            ]
            count = len(batch[0]) if batch else 0
            numbers = pa.array(range(text.row_count + 1, text.row_count + count + 1), pa.int64())
            writer.write_batch(pa.record_batch([*columns, numbers], schema=schema))
            text.row_count += count
    text.preview = agate.Table(preview_rows, names, types)
    return text


def _header(path: str, delimiter: str) -> list[str]:
    with open(path, encoding="utf-8", newline="") as handle:
        if handle.read(1) != BOM:
            handle.seek(0)
        header = next(iter(agate.csv.reader(handle, delimiter=delimiter)), None)
    if not header:
        raise DbtRuntimeError(
            f"Seed {path} has no header row. Fix: put the column names on the CSV's first line"
        )
    return [str(name) for name in header]


def _batches(path: str, delimiter: str, width: int, arrow: bool) -> Iterator[list[pa.Array]]:
    """The data rows as text arrays, one list of `width` arrays per batch."""
    if not arrow:
        yield from _agate_reader_batches(path, delimiter, width)
        return
    names = [f"c{i}" for i in range(width)]
    reader = pa_csv.open_csv(
        path,
        read_options=pa_csv.ReadOptions(column_names=names, block_size=_BLOCK_BYTES),
        parse_options=pa_csv.ParseOptions(
            delimiter=delimiter,
            quote_char='"',
            double_quote=True,
            escape_char=False,
            newlines_in_values=True,
            ignore_empty_lines=False,
        ),
        convert_options=pa_csv.ConvertOptions(
            column_types={name: pa.string() for name in names},
            null_values=[],
            strings_can_be_null=False,
        ),
    )
    header_skipped = False
    for batch in reader:
        columns = list(batch.columns)
        if not header_skipped:
            header_skipped = True
            columns = [column[1:] for column in columns]
        yield columns


def _agate_reader_batches(path: str, delimiter: str, width: int) -> Iterator[list[pa.Array]]:
    """The rows as agate's CSV reader gives them: a short row (a blank line) padded with
    NULLs, a long row failing as agate's loader fails."""
    with open(path, encoding="utf-8", newline="") as handle:
        if handle.read(1) != BOM:
            handle.seek(0)
        rows = iter(agate.csv.reader(handle, delimiter=delimiter))
        next(rows)
        chunk: list[list[str | None]] = []
        for number, row in enumerate(rows, start=1):
            if len(row) > width:
                raise DbtRuntimeError(
                    f"Seed {path}, row {number} has {len(row)} values, but the header has "
                    f"{width} columns. Fix: quote values holding the delimiter, or add the "
                    "column to the header"
                )
            chunk.append([*row, *([None] * (width - len(row)))])
            if len(chunk) == _FALLBACK_BATCH_ROWS:
                yield _columns(chunk, width)
                chunk = []
        if chunk:
            yield _columns(chunk, width)


def _columns(rows: list[list[str | None]], width: int) -> list[pa.Array]:
    return [pa.array([row[i] for row in rows], pa.string()) for i in range(width)]


def _text(value: str) -> pa.Scalar:
    # A typed scalar: comparing with a bare Python string is far slower in pyarrow.
    return pa.scalar(value, pa.string())


def _plain(array: pa.Array, kind: agate.data_types.DataType) -> pa.Array:
    """Which values agate's `kind` certainly accepts (empty: NULL for every type), by
    vectorised checks; False means "ask agate"."""
    if isinstance(kind, Integer):  # agate's Integer takes no text, not even an empty one
        return pc.is_null(array)
    empty = pc.equal(array, _text(""))
    if isinstance(kind, Number):
        return pc.or_(empty, pc.match_substring_regex(array, _PLAIN_NUMBER))
    for agate_type, (pattern, format_) in _PLAIN_FORMATS.items():
        if type(kind) is agate_type:
            shaped = pc.match_substring_regex(array, pattern)
            candidates = pc.if_else(shaped, array, pa.scalar(None, pa.string()))
            parsed = pc.strptime(candidates, format_, "s", error_is_null=True)
            # Arrow rolls 2023-02-30 over to March 2 and 23:59:60 to the next minute:
            # a valid value keeps its day and second.
            valid = pc.and_(
                pc.equal(pc.day(parsed), _digits(candidates, 8)),
                pc.greater_equal(pc.year(parsed), 1),
            )
            if "%S" in format_:
                valid = pc.and_(valid, pc.equal(pc.second(parsed), _digits(candidates, 17)))
            return pc.or_(empty, pc.fill_null(valid, False))
    if isinstance(kind, agate.data_types.Boolean) and kind.true_values == ("true",):
        return pc.or_(
            empty, pc.or_(pc.equal(array, _text("true")), pc.equal(array, _text("false")))
        )
    return empty


def _digits(array: pa.Array, start: int) -> pa.Array:
    """The two-digit number at `start` of each value."""
    return pc.utf8_slice_codeunits(array, start, start + 2).cast(pa.int64())


def _infer(batch: list[pa.Array], inference: dict[int, _Inference]) -> None:
    """Drop each column's candidate types that a value of `batch` fails, as agate's
    TypeTester does (Text, last, never fails)."""
    for index, state in inference.items():
        array = batch[index]
        sample = [value for value in array[:_SAMPLE].to_pylist() if value is not None]
        for kind in list(state.candidates[:-1]):
            # Most types die on the first values (a name is no number): no vectorised pass.
            if not all(kind.test(value) for value in sample):
                state.candidates.remove(kind)
                continue
            plain = pc.fill_null(_plain(array, kind), True)
            others = pc.unique(array.filter(pc.invert(plain))).to_pylist()
            if not all(kind.test(value) for value in others):
                state.candidates.remove(kind)
                continue
            if isinstance(kind, Number):
                state.max_decimal_places = max(
                    state.max_decimal_places, _decimal_places(array, plain, others, kind)
                )


def _decimal_places(array: pa.Array, plain: pa.Array, others: list[str], kind: Number) -> int:
    """agate's MaxPrecision over these values: decimal places once trailing zeros go."""
    plain_values = array.filter(plain)
    fractions = pc.extract_regex(plain_values, r"\.(?P<digits>[0-9]*?)0*$")
    places = pc.max(pc.utf8_length(pc.struct_field(fractions, "digits"))).as_py() or 0
    for value in others:
        number = kind.cast(value)  # type: ignore[no-untyped-call]  # agate is untyped
        if number is None or math.isnan(number) or math.isinf(number):
            continue
        places = max(places, -number.normalize().as_tuple().exponent)
    return places


def _as_text(
    array: pa.Array, kind: agate.data_types.DataType, mapping: dict[str, str | None]
) -> pa.Array:
    """The values as the text of agate's value (NULL for agate's nulls)."""
    if isinstance(kind, agate.data_types.Text):
        maybe_null = pc.fill_null(pc.match_substring_regex(array, _MAYBE_NULL_TEXT), False)
        plain = pc.invert(maybe_null)
    else:
        plain = pc.and_(pc.fill_null(_plain(array, kind), True), pc.not_equal(array, _text("")))
    # As agate's value prints: `2024-01-31T10:00:00` as `2024-01-31 10:00:00`, `007` as `7`.
    shown = array
    if type(kind) is ISODateTime:
        shown = pc.replace_substring(array, "T", " ", max_replacements=1)
    elif isinstance(kind, Number):
        shown = pc.replace_substring_regex(array, "^(-?)0+([0-9])", "\\1\\2")
    others = pc.unique(array.filter(pc.invert(plain))).to_pylist()
    for value in others:
        if value not in mapping:
            mapping[value] = seed_value_as_text(kind.cast(value))
    if not others:
        return shown
    keys = pa.array(list(mapping), pa.string())
    replaced = pc.take(pa.array(list(mapping.values()), pa.string()), pc.index_in(array, keys))
    return pc.if_else(plain, shown, replaced)
