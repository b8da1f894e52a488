"""The `bench` profile the comparison benchmarks share: this adapter and dbt-spark
(`method: session`) on the same catalog, with this adapter's Spark settings."""

from __future__ import annotations

import json
from pathlib import Path

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.catalogs.jars import JarSources, resolve_jars
from dbt.adapters.s3tables.engines.spark_session import session_settings


def write_profiles(
    root: Path, catalog: CatalogConfig, master: str, schema: str, threads: int
) -> None:
    """Writes `profiles.yml` with the targets `s3tables` (the default) and `spark`."""
    spark_parameters = session_settings(
        master=master,
        catalog=catalog,
        jars=resolve_jars(catalog.jar_artifacts, JarSources()),
        user_settings={},
    )
    common = {"schema": schema, "threads": threads}
    outputs = {
        "s3tables": {
            "type": "s3tables",
            "warehouse": catalog.warehouse,
            "master": master,
            **common,
        },
        "spark": {
            "type": "spark",
            "method": "session",
            "host": "localhost",
            "server_side_parameters": spark_parameters,
            **common,
        },
    }
    (root / "profiles.yml").write_text(
        json.dumps({"bench": {"target": "s3tables", "outputs": outputs}})
    )


def project_arguments(root: Path, target: str) -> list[str]:
    """A dbt command's options for the project in `root` on `target`, each target with its
    own target folder (so partial parsing stays on across runs of one target)."""
    return [
        "--target",
        target,
        "--profiles-dir",
        str(root),
        "--project-dir",
        str(root),
        "--target-path",
        str(root / f"target-{target}"),
    ]
