"""The embedded catalog's views, read and written as rows of its SQLite file.

PyIceberg's SqlCatalog has no view support (list_views raises NotImplementedError), but
the JDBC catalog schema V1 Spark writes keeps views as rows with iceberg_type = 'VIEW':
they are listed, read, dropped and registered (by recovery) through those rows.
"""

from __future__ import annotations

import gzip
import json
from typing import TYPE_CHECKING, Any

from dbt.adapters.s3tables.catalogs.description import CatalogDescription

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from sqlalchemy.engine import Engine

_VIEW_ROWS = (
    "SELECT table_name, metadata_location FROM iceberg_tables "
    "WHERE catalog_name = :catalog AND table_namespace = :namespace "
    "AND iceberg_type = 'VIEW'"
)


def _engine(catalog: Catalog) -> Engine:
    """The SQLite engine of the embedded catalog (always PyIceberg's SqlCatalog)."""
    from pyiceberg.catalog.sql import SqlCatalog

    assert isinstance(catalog, SqlCatalog)
    return catalog.engine


def _view_rows(
    config: CatalogDescription, catalog: Catalog, namespace: str, name: str | None = None
) -> list[Any]:
    from sqlalchemy import text

    query = _VIEW_ROWS
    params = {"catalog": config.name, "namespace": namespace}
    if name is not None:
        query += " AND table_name = :name"
        params["name"] = name
    with _engine(catalog).connect() as connection:
        return list(connection.execute(text(query), params))


def list_views(config: CatalogDescription, catalog: Catalog, namespace: str) -> list[str]:
    return [row[0] for row in _view_rows(config, catalog, namespace)]


def view_metadata(
    config: CatalogDescription, catalog: Catalog, namespace: str, name: str
) -> dict[str, Any]:
    """The view's Iceberg metadata document, read from the file its row points at."""
    rows = _view_rows(config, catalog, namespace, name)
    if not rows:
        raise LookupError(f"view {namespace}.{name} not found in the catalog")
    from pyiceberg.io import load_file_io

    location = rows[0][1]
    io = load_file_io(catalog.properties, location)
    with io.new_input(location).open() as stream:
        raw = stream.read()
    if location.endswith(".gz.metadata.json"):
        raw = gzip.decompress(raw)
    document: dict[str, Any] = json.loads(raw)
    return document


def drop_view(config: CatalogDescription, catalog: Catalog, identifier: tuple[str, str]) -> None:
    from sqlalchemy import text

    with _engine(catalog).begin() as connection:
        connection.execute(
            text(
                "DELETE FROM iceberg_tables WHERE catalog_name = :catalog "
                "AND table_namespace = :namespace AND table_name = :name "
                "AND iceberg_type = 'VIEW'"
            ),
            {"catalog": config.name, "namespace": identifier[0], "name": identifier[1]},
        )


def register_view(
    catalog: Catalog, catalog_name: str, namespace: str, name: str, location: str
) -> None:
    """Add the view's row, pointing at its metadata file `location`."""
    from sqlalchemy import text

    with _engine(catalog).begin() as connection:
        connection.execute(
            text(
                "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                "metadata_location, previous_metadata_location, iceberg_type) "
                "VALUES (:catalog, :namespace, :name, :location, NULL, 'VIEW')"
            ),
            {"catalog": catalog_name, "namespace": namespace, "name": name, "location": location},
        )
