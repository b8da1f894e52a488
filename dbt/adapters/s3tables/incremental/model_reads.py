"""What the macros ask about a model's upstream reads (`adapter.upstream_reads()`): the
SQL of `upstream_changes()` (in a unit test, the rows it gives), marking the model's data
write so its commit carries the reads, and recording them after the build. The planning
and pinning are `UpstreamChanges`' (upstream_changes.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from dbt.adapters.base.relation import BaseRelation
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.s3tables.errors import fixes_dbt_honours
from dbt.adapters.s3tables.incremental.commit_counts import with_upstream_reads
from dbt.adapters.s3tables.incremental.run_bases import run_key
from dbt.adapters.s3tables.incremental.upstream_changes import (
    Reader,
    UpstreamChanges,
    unit_test_rows,
)
from dbt.adapters.s3tables.incremental.upstream_reads import check_key_argument

if TYPE_CHECKING:
    from dbt.adapters.contracts.connection import AdapterResponse

    from dbt.adapters.s3tables.engines.base import Engine
    from dbt.adapters.s3tables.incremental.config import IncrementalConfig


class ModelReads:
    """The upstream reads of the models of one dbt invocation, as the macros use them."""

    def __init__(
        self,
        changes: UpstreamChanges,
        incremental_config: Callable[[Mapping[str, Any]], IncrementalConfig | None],
        get_relation: Callable[[Any, str, str], BaseRelation | None],
        engine: Callable[[], Engine],
    ) -> None:
        self._changes = changes
        self._incremental_config = incremental_config
        self._get_relation = get_relation
        self._engine = engine

    def changes_sql(
        self,
        model: Mapping[str, Any],
        target: BaseRelation,
        upstream: Any,
        incremental: bool,
        unique_key: str | list[str] | None = None,
        mode: str = "",
    ) -> str:
        """`upstream_changes(relation, unique_key=...)`: the rows of the upstream Iceberg
        table `upstream` this run of `model` reads (see upstream_changes.py), in dbt's run
        `mode` (`empty`, `sample` or none)."""
        if not isinstance(upstream, BaseRelation) or not upstream.schema:
            raise DbtRuntimeError(
                f"Model `{model['name']}`: upstream_changes() takes a relation, as ref() or "
                f"source() gives it, not `{upstream}`. Fix: pass ref('<model>') or "
                "source('<source>', '<table>')"
            )
        materialized = str((model.get("config") or {}).get("materialized") or "")
        settings = self._incremental_config(model) if materialized == "incremental" else None
        with fixes_dbt_honours(model):
            return self._changes.read_sql(
                Reader(
                    model["unique_id"],
                    model["name"],
                    target,
                    materialized,
                    settings.strategy if settings else None,
                    settings.on_schema_change if settings else None,
                    run_key(model),
                ),
                self._get_relation(
                    upstream.database, str(upstream.schema), str(upstream.identifier)
                ),
                upstream,
                incremental,
                unique_key,
                mode,
            )

    def unit_test_sql(self, upstream: Any, unique_key: object = None) -> str:
        """upstream_changes() in a dbt unit test: the rows the test gives the upstream."""
        return unit_test_rows(str(upstream), check_key_argument("unit test", upstream, unique_key))

    def tag_next_write(self) -> None:
        """The next statement on this thread's connection is the model's data write: its
        commit records what the build read of its upstreams (never a hook's commit)."""
        self._engine().tag_next_write()

    def record(
        self, model: Mapping[str, Any], target: BaseRelation, audit: Any
    ) -> list[dict[str, Any]]:
        """After a build: what it read of its upstreams, recorded as table properties too
        (bound to the snapshot it left; an audited build's, at its publish), and as its
        adapter response lists it ([]: it read none)."""
        return self._changes.record(
            model["unique_id"],
            target,
            audit.branch if audit else None,
            audit.keep_properties if audit else None,
        )

    def with_reads(
        self, response: AdapterResponse | None, reads: list[dict[str, Any]]
    ) -> AdapterResponse:
        """The build's response, listing what it read."""
        return with_upstream_reads(response, reads)
