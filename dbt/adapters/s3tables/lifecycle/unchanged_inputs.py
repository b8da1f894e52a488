"""`skip_when_unchanged`: a `table` model, or an incremental model whose strategy gives the
same table when run twice over the same rows (merge, delete+insert, insert_overwrite), is
not rebuilt when nothing it is built from changed since its table's data was written.

What it is built from: its compiled SQL, its config, the adapter's version, Spark's
analysed plan (views expanded, so a view's SQL counts) and the snapshot of every Iceberg
table the plan reads (engines/query_inputs.py). A build records them in its data commit's
snapshot summary (`dbt.inputs`), so an undo, which moves the table back to an older
commit, moves the record back with it; a compaction (`replace`) keeps rows and is passed
over. A model whose rows can differ over the same inputs (a clock, rand(), a UDF, a source
that is not an Iceberg table, its own table) is refused before anything is written, as is
an engine that cannot see the plan (Thrift, Connect).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.s3tables.__version__ import version
from dbt.adapters.s3tables.catalogs.snapshots import INPUTS_KEY
from dbt.adapters.s3tables.engines.query_inputs import QueryInputs
from dbt.adapters.s3tables.errors import ModelConfigError

if TYPE_CHECKING:
    from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
    from dbt.adapters.s3tables.engines.base import Engine

logger = AdapterLogger("s3tables")

CONFIG_KEY = "skip_when_unchanged"


@dataclass(frozen=True)
class BuildInputs:
    """What one build is built from: the digest of its SQL, config, the adapter's
    version and the plan; and each Iceberg table it reads, at its snapshot."""

    query: str
    tables: dict[str, int | None]

    def tag(self) -> str:
        return json.dumps({"query": self.query, "tables": self.tables}, sort_keys=True)

    @staticmethod
    def from_tag(text: str | None) -> BuildInputs | None:
        try:
            value = json.loads(text or "")
            return BuildInputs(str(value["query"]), dict(value["tables"]))
        except (ValueError, KeyError, TypeError):
            return None


def build_inputs(sql: str, config: Mapping[str, Any], query: QueryInputs) -> BuildInputs:
    text = json.dumps(
        [sql, dict(config), version, query.plan_digest],
        sort_keys=True,
        default=str,
        separators=(",", ":"),
    )
    return BuildInputs(hashlib.sha256(text.encode()).hexdigest(), dict(query.tables))


def what_changed(recorded: BuildInputs | None, now: BuildInputs) -> str | None:
    """What differs between the inputs the table's data was built from and this build's,
    in words; None when nothing does."""
    if recorded is None:
        return "its table's current data has no record of what it was built from"
    if recorded.query != now.query:
        return "its SQL, config, the views it reads or the adapter's version changed"
    changed = [
        f"{name} (snapshot {recorded.tables.get(name)} -> {snapshot})"
        for name, snapshot in sorted(now.tables.items())
        if recorded.tables.get(name) != snapshot
    ]
    if changed:
        return "changed since its last build: " + ", ".join(changed)
    return None


def is_target(read: str, target: BaseRelation) -> bool:
    """Whether a plan's table name (catalog.namespace.table, maybe @branch) is `target`."""
    parts = read.split("@", 1)[0].replace("`", "").lower().split(".")
    wanted = [str(p).replace("`", "").lower() for p in (target.schema, target.identifier)]
    return parts[-2:] == wanted


class UnchangedInputs:
    """The `skip_when_unchanged` check of one model's build on this thread's engine."""

    def __init__(
        self,
        model: Mapping[str, Any],
        target: BaseRelation,
        engine: Engine,
        iceberg: IcebergCatalog,
    ) -> None:
        self.model = model
        self.target = target
        self.engine = engine
        self.iceberg = iceberg

    def _refuse(self, problem: str) -> ModelConfigError:
        return ModelConfigError(
            str(self.model["name"]),
            CONFIG_KEY,
            f"cannot tell whether a rebuild would change its table: {problem}",
            f"remove `{CONFIG_KEY}` from this model",
        )

    @staticmethod
    def response() -> AdapterResponse:
        """A skipped build's adapter response (dbt shows its message on the result line)."""
        return AdapterResponse(_message="UNCHANGED", rows_affected=0)

    def skips(self, sql: str, table_exists: bool, full_refresh: bool) -> bool:
        """Whether this build is skipped (said in one line); otherwise its data commit
        will record what it is built from. Refuses, before anything is written, a model
        this cannot be exact for."""
        query = self.engine.query_inputs(sql)
        if query.unfixed:
            raise self._refuse(query.unfixed)
        itself = [name for name in query.tables if is_target(name, self.target)]
        if itself:
            raise self._refuse(f"its SQL reads its own table ({itself[0]})")
        now = build_inputs(sql, self.model.get("config") or {}, query)
        name = str(self.model["name"])
        if table_exists and not full_refresh:
            last = self.iceberg.last_data_tag(
                str(self.target.schema), str(self.target.identifier), INPUTS_KEY
            )
            reason = what_changed(BuildInputs.from_tag(last[1]) if last else None, now)
            if reason is None and last is not None:
                logger.info(
                    f"{name}: not rebuilt ({CONFIG_KEY}): its SQL, config and the "
                    f"{len(now.tables)} Iceberg table(s) it reads are those its current data "
                    f"(snapshot {last[0]}) was built from"
                )
                return True
            logger.info(f"{name}: rebuilt ({CONFIG_KEY}): {reason}")
        if not self.engine.tag_node_commits({INPUTS_KEY: now.tag()}):
            raise self._refuse("this engine cannot record what a build read in its commit")
        return False
