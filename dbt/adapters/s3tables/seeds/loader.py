"""A seed's load as the seed materialization drives it: the CSV read with Arrow (csv.py),
its cells as text in a temporary view of the engine, and the query casting them to the
seed's types (values.py). The engine is reached through the two view callables only."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from dbt.adapters.s3tables.seeds.values import SeedColumn, seed_select_sql

if TYPE_CHECKING:
    from dbt.adapters.s3tables.seeds.csv import SeedText


class SeedLoader:
    """Loads seeds through one engine's temporary views."""

    def __init__(
        self,
        create_text_view: Callable[[str, SeedText], None],
        drop_temp_view: Callable[[str], None],
    ) -> None:
        self.create_text_view = create_text_view
        self.drop_temp_view = drop_temp_view

    def read(self, model: Mapping[str, Any]) -> SeedText:
        """Read the seed's CSV with Arrow: its columns, the types dbt's agate loader would
        infer, its cells as text in a temporary Parquet file, and a preview of its first
        rows for `dbt seed --show`."""
        # pyarrow: imported by the first seed, not when dbt loads the plugin.
        from dbt.adapters.s3tables.seeds.csv import read_seed_csv

        config = model["config"]
        return read_seed_csv(
            os.path.join(model["root_path"], model["original_file_path"]),
            config.get("delimiter", ","),
            list(config.get("column_types") or {}),
        )

    def register_view(self, seed: SeedText) -> str:
        """A temporary view of the seed's cells as text, returned by name.

        Every value travels as text and is cast in SQL, so decimals, dates and strings
        arrive exactly as written in the CSV, with no float rounding on the way. The view
        gets a generated name: a seed's own name may hold dots or spaces.
        """
        view_name = f"dbt_seed_rows_{uuid.uuid4().hex}"
        self.create_text_view(view_name, seed)
        return view_name

    def select_sql(
        self, view_name: str, columns: list[list[str]], seed_path: str, empty: object = False
    ) -> str:
        """The seed's load query: each `[header, SQL name, type]` column cast from text, a
        value that does not fit its type failing the load (`empty`: dbt's --empty flag,
        which is None when unset)."""
        seed_columns = [
            SeedColumn(name, sql_name, data_type) for name, sql_name, data_type in columns
        ]
        return seed_select_sql(view_name, seed_columns, seed_path, bool(empty))

    def drop_view(self, view_name: str) -> None:
        self.drop_temp_view(view_name)
