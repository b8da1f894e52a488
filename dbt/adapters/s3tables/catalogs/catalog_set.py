"""The catalogs one dbt invocation uses: the profile's (Spark's default catalog) and those
`catalogs.yml` declares, each found by the name relations carry as their `database`."""

from __future__ import annotations

import threading

from dbt.adapters.s3tables.catalogs.config import CatalogConfig
from dbt.adapters.s3tables.errors import CatalogsYmlError, UnknownCatalogError


class CatalogSet:
    """The profile's catalog and the declared ones, by name."""

    def __init__(self, default: CatalogConfig) -> None:
        self.default = default
        self._declared: dict[str, CatalogConfig] = {}
        self._lock = threading.Lock()

    def declare(self, config: CatalogConfig) -> None:
        if config.name.casefold() == self.default.name.casefold():
            raise CatalogsYmlError(
                config.name,
                "name",
                "is the name of the profile's own catalog",
                "give the catalogs.yml catalog another name",
            )
        with self._lock:
            self._declared[config.name] = config

    @property
    def declared(self) -> tuple[CatalogConfig, ...]:
        with self._lock:
            return tuple(self._declared.values())

    def all(self) -> tuple[CatalogConfig, ...]:
        """Every catalog, the default first."""
        return (self.default, *self.declared)

    def is_default(self, database: object) -> bool:
        # Anything but a name is no database: macros pass Jinja's Undefined for a node
        # whose database is unset (dbt drops None values from node dictionaries).
        if not isinstance(database, str) or not database:
            return True
        return database.casefold() == self.default.name.casefold()

    def named(self, database: object, *, relation: object = None) -> CatalogConfig:
        """The catalog of a relation whose `database` is `database` (none: the default)."""
        if self.is_default(database):
            return self.default
        name = str(database)
        with self._lock:
            found = self._declared.get(name) or next(
                (c for c in self._declared.values() if c.name.casefold() == name.casefold()),
                None,
            )
            names = [self.default.name, *self._declared]
        if found is None:
            raise UnknownCatalogError(
                f"{relation if relation is not None else 'A relation'} is in catalog "
                f"`{name}`, which is neither the profile's catalog nor declared in "
                "catalogs.yml. Fix: set its `database` (`catalog_name` for models) to one of: "
                f"{', '.join(names)}, or declare `{name}` in catalogs.yml"
            )
        return found

    def debug_lines(self, engine_description: str) -> list[tuple[str, str]]:
        """What `dbt debug` logs of the catalogs, as (level, line): where each is (info) and
        its settings with every secret masked (debug)."""
        import pyiceberg

        config = self.default
        lines = [
            (
                "info",
                f"{engine_description}, PyIceberg {pyiceberg.__version__}, catalog "
                f"`{config.name}` ({config.catalog_type}) at {config.location}",
            ),
            ("debug", f"catalog settings (secrets masked): {config.describe()}"),
        ]
        for declared in self.declared:
            lines.append(
                (
                    "info",
                    f"catalogs.yml catalog `{declared.name}` ({declared.catalog_type}) at "
                    f"{declared.location}",
                )
            )
            lines.append(
                ("debug", f"`{declared.name}` settings (secrets masked): {declared.describe()}")
            )
        return lines
