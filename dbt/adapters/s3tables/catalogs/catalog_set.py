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

    def is_default(self, database: str | None) -> bool:
        return not database or str(database).casefold() == self.default.name.casefold()

    def named(self, database: str | None, *, relation: str = "") -> CatalogConfig:
        """The catalog of a relation whose `database` is `database` (none: the default)."""
        if self.is_default(database):
            return self.default
        with self._lock:
            found = self._declared.get(str(database)) or next(
                (c for c in self._declared.values() if c.name.casefold() == database.casefold()),
                None,
            )
            names = [self.default.name, *self._declared]
        if found is None:
            raise UnknownCatalogError(
                f"{relation or 'A relation'} is in catalog `{database}`, which is neither the "
                f"profile's catalog nor declared in catalogs.yml. Fix: set its `database` "
                f"(`catalog_name` for models) to one of: {', '.join(names)}, or declare "
                f"`{database}` in catalogs.yml"
            )
        return found
