"""The rows a range of an Iceberg table's commits changed, read file by file (in-process
Spark only): what a keyed `upstream_changes()` nets into INSERT, UPDATE and DELETE,
without scanning the table at both ends of the range.

Between the range's start snapshot S and end snapshot E, a row can only differ in:
- a data file E has and S has not (added): its rows at E;
- a data file S has and E has not (removed: copy-on-write rewrites, overwrites): its rows
  at S;
- a data file both have whose deletes changed (merge-on-read: delete files, deletion
  vectors): its rows at S at the positions E deletes and S did not.
Those are the `before` rows (at S) and `after` rows (at E). Every other row of the table is
in both. The netting (incremental/upstream_changes.py's `row_changes_sql`) needs, per key
it reports, every row of the key, so the rows of the changed keys that no changed file
holds (a key repeated in the upstream) are added to both sides: found by a scan of the
key columns only, then read whole from the files that hold them. A file whose key bounds
(Iceberg's column metrics, for a one-column integer key) hold no changed key is not
scanned: keys that grow with time change in the newest files.

Each set of files is read through Iceberg's staged scan tasks (`ScanTaskSetManager`, as
Iceberg's own rewrite actions read), so deletes apply as at that snapshot: on Spark 3.5
through the table's `scan-task-set-id` read option, on Spark 4.1 (whose Iceberg runtime has
no such option) as a table of its own in Iceberg's `SparkTableCache`. Where this cannot be
exact, `fallback` says why and the caller compares the two snapshots whole: equality
deletes (written by Flink and others, not Spark), a deletion that the range undid (a
rollback), columns changed after the range, or a format v3 upstream on Spark 4.1.
"""

from __future__ import annotations

import bisect
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from dbt.adapters.s3tables.sql.text import quote

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Key column types whose file bounds leave files out of the probe for changed keys, and
# how many changed keys are compared one by one (above, the span of them).
_INTEGER_TYPES = ("INTEGER", "LONG")
_PRUNING_KEYS = 10_000
# The smallest split of a staged read (Iceberg's cost of opening a file, 4 MB, makes a
# smaller one pointless).
_MIN_SPLIT_BYTES = 4 * 1024 * 1024
# Iceberg's FileContent of an equality delete file.
_EQUALITY_DELETES = "EQUALITY_DELETES"
# Why a format v3 upstream is compared whole on Spark 4.1 (its Iceberg runtime reads a
# staged task set as a table of its own, which has no metadata columns for v3 tables).
V3_ON_SPARK_4 = (
    "Iceberg's Spark 4.1 runtime reads a format v3 table's files without their `_file` "
    "and `_pos` columns"
)


@dataclass(frozen=True)
class RangeFiles:
    """A range read file by file: temporary views of its `before` and `after` rows (see the
    module docstring), what was read (`described`), and the staged task sets and cached
    rows to release when the connection closes; or only `fallback`, why it cannot be
    exact."""

    before: str = ""
    after: str = ""
    described: str = ""
    fallback: str | None = None
    task_sets: tuple[str, ...] = ()
    cached: tuple[Any, ...] = ()


@dataclass(frozen=True)
class _FileAt:
    """A data file's scan task at one snapshot, and the identities of its deletes."""

    task: Any
    deletes: frozenset[tuple[str, int]]


@dataclass(frozen=True)
class _KeySummary:
    """The changed keys' count, non-NULL count and span (of the first key column), and how
    many deleted positions the range undid (a rollback: then the read cannot be exact)."""

    count: int
    non_null: int
    lowest: Any
    highest: Any
    undone: int


def _summarize(changed_keys: DataFrame, key: str, undone: DataFrame | None) -> _KeySummary:
    """`_KeySummary` in one Spark job: one aggregation over the changed keys and, when the
    range deleted rows, its undone positions."""
    from pyspark.sql import functions as f

    marked = changed_keys.select(f.col(key).alias("key"), f.lit(0).alias("undone"))
    if undone is not None:
        no_key = f.lit(None).cast(changed_keys.schema[key].dataType)
        marked = marked.unionAll(undone.select(no_key.alias("key"), f.lit(1).alias("undone")))
    row = marked.agg(
        f.count(f.when(f.col("undone") == 0, 1)),
        f.count("key"),
        f.min("key"),
        f.max("key"),
        f.sum("undone"),
    ).collect()[0]
    return _KeySummary(int(row[0]), int(row[1]), row[2], row[3], int(row[4] or 0))


class _Reader:
    """Staged reads of one Iceberg table (a three-part SQL name) in one session."""

    def __init__(self, spark: SparkSession, table: str) -> None:
        self.spark, self.table = spark, table
        # py4j's view of the JVM: Spark in this process only.
        jvm = spark._jvm
        assert jvm is not None
        self.jvm = jvm
        # Name resolution reads the thread's active session (SQL sets it per statement):
        # on a dbt thread's own JVM thread there is none, and `local` would not be a catalog.
        jvm.org.apache.spark.sql.SparkSession.setActiveSession(spark._jsparkSession)
        self.jtable = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
            spark._jsparkSession, table
        )
        self.task_sets: list[str] = []

    @cached_property
    def by_option(self) -> bool:
        """Whether this Iceberg reads a staged task set through the table's read option
        `scan-task-set-id` (its Spark 3.5 runtime; asked of the JVM once per reader). The
        Spark 4.1 runtime has no such option (a read that gives it reads the whole table): a
        task set is read as a table of its own, registered in Iceberg's `SparkTableCache`
        under the set's id, as Iceberg's own rewrites read it."""
        from py4j.protocol import Py4JError

        try:
            return bool(self.jvm.org.apache.iceberg.spark.SparkReadOptions.SCAN_TASK_SET_ID)
        except Py4JError:
            return False

    @cached_property
    def table_cache(self) -> Any:
        """Iceberg's `SparkTableCache` singleton (py4j cannot call its static `get()`,
        which an instance method shares the name of)."""
        gateway = self.spark.sparkContext._gateway
        assert gateway is not None
        cache_class = self.jvm.java.lang.Class.forName(
            "org.apache.iceberg.spark.SparkTableCache",
            True,
            self.jtable.getClass().getClassLoader(),
        )
        no_classes = gateway.new_array(self.jvm.java.lang.Class, 0)
        no_arguments = gateway.new_array(self.jvm.java.lang.Object, 0)
        return cache_class.getMethod("get", no_classes).invoke(None, no_arguments)

    def files_at(self, snapshot: int) -> tuple[dict[str, _FileAt], bool]:
        """Every data file live at `snapshot`, by location, and whether any of them has
        equality deletes."""
        files: dict[str, _FileAt] = {}
        equality = False
        # With the column bounds, which a scan leaves out unless asked (`may_hold`).
        planned = self.jtable.newScan().useSnapshot(snapshot).includeColumnStats().planFiles()
        try:
            tasks = planned.iterator()
            while tasks.hasNext():
                task = tasks.next()
                identities = set()
                # By index: py4j ends a Java list's iteration with a Java exception, which
                # PySpark converts at about 25 ms each (a second per 40 files).
                deletes = task.deletes()
                for index in range(deletes.size()):
                    delete = deletes.get(index)
                    equality = equality or delete.content().toString() == _EQUALITY_DELETES
                    offset = delete.contentOffset()
                    identities.add((str(delete.location()), -1 if offset is None else int(offset)))
                files[str(task.file().location())] = _FileAt(task, frozenset(identities))
        finally:
            planned.close()
        return files, equality

    def rows(self, files: Sequence[_FileAt], columns: Sequence[str]) -> DataFrame:
        """The rows of `files` as their tasks read them (each with its snapshot's deletes)."""
        if not files:
            return self.spark.read.table(self.table).select(*columns).where("false")
        tasks = self.jvm.java.util.ArrayList()
        for file in files:
            tasks.add(file.task)
        task_set = str(uuid.uuid4())
        self.jvm.org.apache.iceberg.spark.ScanTaskSetManager.get().stageTasks(
            self.jtable, task_set, tasks
        )
        self.task_sets.append(task_set)
        # A staged scan packs its files into splits of the table's target size (128 MB):
        # two 50 MB files would be one task on one core. Split to use every core.
        total = sum(int(file.task.length()) for file in files)
        cores = max(1, self.spark.sparkContext.defaultParallelism)
        split = max(_MIN_SPLIT_BYTES, -(-total // cores))
        reader = self.spark.read.option("split-size", str(split))
        if self.by_option:
            return reader.option("scan-task-set-id", task_set).table(self.table).select(*columns)
        self.table_cache.add(task_set, self.jtable)
        return reader.format("iceberg").load(task_set).select(*columns)

    def pruning_field(self, keys: Sequence[str]) -> Any | None:
        """The Iceberg field of a one-column integer key, whose file bounds can leave files
        out of the probe for changed keys (`may_hold`); None for other keys."""
        if len(keys) != 1:
            return None
        field = self.jtable.schema().caseInsensitiveFindField(keys[0])
        if field is None or str(field.type().typeId().toString()) not in _INTEGER_TYPES:
            return None
        return field

    def may_hold(
        self,
        files: Sequence[_FileAt],
        field: Any,
        changed_keys: DataFrame,
        summary: _KeySummary,
    ) -> list[_FileAt]:
        """The files whose bounds of the key column `field` (`pruning_field`) may hold a
        value of `changed_keys`: a file is left out when no changed key lies between its
        lower and upper bound (Iceberg's column metrics; a file without them is kept), or,
        above `_PRUNING_KEYS` changed keys, when its bounds and their span do not overlap.
        Every file when a changed key is NULL."""
        if summary.non_null < summary.count:
            return list(files)
        if summary.count > _PRUNING_KEYS:  # the span of many keys, not each

            def may_hold_one(lower: int, upper: int) -> bool:
                return bool(lower <= summary.highest and upper >= summary.lowest)

        else:
            values = sorted(row[0] for row in changed_keys.collect())

            def may_hold_one(lower: int, upper: int) -> bool:
                first = bisect.bisect_left(values, lower)
                return first < len(values) and values[first] <= upper

        conversions = self.jvm.org.apache.iceberg.types.Conversions
        field_id, field_type = field.fieldId(), field.type()

        def bound(bounds: Any) -> int | None:
            value = None if bounds is None else bounds.get(field_id)
            return None if value is None else int(conversions.fromByteBuffer(field_type, value))

        kept = []
        for file in files:
            data_file = file.task.file()
            lower, upper = bound(data_file.lowerBounds()), bound(data_file.upperBounds())
            if lower is None or upper is None or may_hold_one(lower, upper):
                kept.append(file)
        return kept

    def deleted_positions(self, snapshot: int, locations: Sequence[str]) -> DataFrame:
        """(file_path, pos) of the rows `snapshot`'s position deletes and deletion vectors
        remove from the data files at `locations`."""
        from pyspark.sql import functions as f

        deletes = self.spark.sql(
            f"SELECT file_path, pos FROM {self.table}.position_deletes VERSION AS OF {snapshot}"
        )
        return deletes.where(f.col("file_path").isin(list(locations)))


def changed_rows_views(
    spark: SparkSession,
    table: str,
    start: int,
    end: int,
    columns: Sequence[str],
    keys: Sequence[str],
) -> RangeFiles:
    """Temporary views of the rows the commits after snapshot `start` up to `end` of
    `table` changed (see the module docstring), or why they cannot be read file by file."""
    from pyspark.sql import functions as f

    reader = _Reader(spark, table)
    jtable = reader.jtable
    if not reader.by_option and int(jtable.operations().current().formatVersion()) >= 3:
        return RangeFiles(fallback=V3_ON_SPARK_4)
    if jtable.snapshot(end).schemaId() != jtable.schema().schemaId():
        return RangeFiles(fallback="the upstream's columns changed after the range")
    at_start, equality_at_start = reader.files_at(start)
    at_end, equality_at_end = reader.files_at(end)
    if equality_at_start or equality_at_end:
        return RangeFiles(fallback="the upstream has equality deletes (not written by Spark)")
    added = [at_end[path] for path in at_end.keys() - at_start.keys()]
    removed = [at_start[path] for path in at_start.keys() - at_end.keys()]
    touched = sorted(
        path
        for path in at_start.keys() & at_end.keys()
        if at_start[path].deletes != at_end[path].deletes
    )
    untouched = [at_end[path] for path in (at_start.keys() & at_end.keys()) - set(touched)]

    # What the range changed is small beside the table: each part is cached, so each file
    # is read once (the netting query refers to its rows twice), and released with the
    # connection.
    cached: list[DataFrame] = []

    def kept(frame: DataFrame) -> DataFrame:
        frame = frame.cache()
        cached.append(frame)
        return frame

    # No file's deletes changed (appends and copy-on-write only): no position is read.
    deleted = reader.rows([], columns)
    undone: DataFrame | None = None
    if touched:
        # Each deleted position of the touched files, whether deleted at each end: one
        # grouping gives those the range deleted and those it undid.
        position = ["file_path", "pos"]
        at_ends = (
            reader.deleted_positions(end, touched)
            .select(*position, f.lit(1).alias("at_end"), f.lit(0).alias("at_start"))
            .unionAll(
                reader.deleted_positions(start, touched).select(
                    *position, f.lit(0).alias("at_end"), f.lit(1).alias("at_start")
                )
            )
        )
        ends = kept(
            at_ends.groupBy(*position).agg(
                f.max("at_end").alias("at_end"), f.max("at_start").alias("at_start")
            )
        )
        # Checked with the changed keys' summary below, in the same Spark job.
        undone = ends.where("at_start > at_end")
        gone = ends.where("at_end > at_start").select(*position)
        at_gone = (f.col("_file") == f.col("file_path")) & (f.col("_pos") == f.col("pos"))
        # Read at the end with Iceberg's `_deleted` column, the rows the end's deletes remove
        # are marked, not dropped (their values are the file's, as at the start): only
        # those few reach the join that keeps the range's own.
        marked = [*columns, "_file", "_pos", "_deleted"]
        deleted = (
            reader.rows([at_end[path] for path in touched], marked)
            .where(f.col("_deleted"))
            .join(f.broadcast(gone), at_gone, "left_semi")
            .select(*columns)
        )
    before = kept(reader.rows(removed, columns).unionAll(deleted))
    after = kept(reader.rows(added, columns))

    # The changed keys' rows that no changed file holds: in the files both ends share (at
    # E, every deletion of the range applied), found by their key columns alone, then read
    # whole from the files holding any.
    changed_keys = kept(before.select(*keys).unionAll(after.select(*keys)).distinct())

    def of_changed_keys(rows: DataFrame) -> DataFrame:
        condition = None
        for key in keys:
            match = rows[key].eqNullSafe(changed_keys[key])
            condition = match if condition is None else condition & match
        return rows.join(changed_keys, condition, "left_semi")

    shared = [at_end[path] for path in touched] + untouched
    field = reader.pruning_field(keys) if shared else None
    probed = shared
    # One Spark job, only when there is something to check or to prune by.
    if field is not None or undone is not None:
        summary = _summarize(changed_keys, keys[0], undone)
        if summary.undone:
            return RangeFiles(
                fallback="a deletion in the upstream was undone within the range (a rollback)",
                task_sets=tuple(reader.task_sets),
                cached=tuple(cached),
            )
        if field is not None:
            probed = reader.may_hold(shared, field, changed_keys, summary)
    found = of_changed_keys(reader.rows(probed, [*keys, "_file"])).select("_file").distinct()
    holding = sorted(str(row[0]) for row in found.collect())
    if holding:
        elsewhere = kept(of_changed_keys(reader.rows([at_end[path] for path in holding], columns)))
        before, after = before.unionAll(elsewhere), after.unionAll(elsewhere)

    before_view = f"dbt_upstream_before_{uuid.uuid4().hex}"
    after_view = f"dbt_upstream_after_{uuid.uuid4().hex}"
    before.createOrReplaceTempView(before_view)
    after.createOrReplaceTempView(after_view)
    return RangeFiles(
        before=quote(before_view),
        after=quote(after_view),
        described=(
            f"{len(added)} data files added, {len(removed)} removed, {len(touched)} with rows "
            f"deleted, {len(holding)} other files holding rows of the changed keys (the "
            f"keys of {len(probed)} of the {len(shared)} files both ends share read to find "
            "them)"
        ),
        task_sets=tuple(reader.task_sets),
        cached=tuple(cached),
    )


def release(spark: SparkSession, table: str, read: RangeFiles) -> None:
    """Forget a read's staged scan tasks (file metadata in the JVM) and cached rows."""
    for frame in read.cached:
        frame.unpersist()
    if read.task_sets:
        reader = _Reader(spark, table)
        manager = reader.jvm.org.apache.iceberg.spark.ScanTaskSetManager.get()
        cache = None if reader.by_option else reader.table_cache
        for task_set in read.task_sets:
            manager.removeTasks(reader.jtable, task_set)
            if cache is not None:
                cache.remove(task_set)
