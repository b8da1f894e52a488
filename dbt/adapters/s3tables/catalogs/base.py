"""`CatalogType`: what one kind of Iceberg catalog answers for itself.

Each answer that differs between catalog types (which profile keys it needs, how Spark and
PyIceberg reach it, the table properties it wants, what opening a connection to it
involves, which of its errors a retry clears, how its views are listed, read and dropped)
is a member here, answered in that type's own module. The rest of the adapter
asks the type; it never tests which type it is.
"""

from __future__ import annotations

import os
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from dbt.adapters.s3tables.catalogs.description import CatalogDescription
from dbt.adapters.s3tables.catalogs.jars import ICEBERG_AWS_BUNDLE, Artifact, iceberg_spark_runtime
from dbt.adapters.s3tables.catalogs.keys import CatalogKeys
from dbt.adapters.s3tables.errors import ProfileError

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table

# PyIceberg's property naming a catalog's FileIO class, and the two FileIOs it ships.
PY_IO_IMPL = "py-io-impl"
FSSPEC_FILE_IO = "pyiceberg.io.fsspec.FsspecFileIO"
PYARROW_FILE_IO = "pyiceberg.io.pyarrow.PyArrowFileIO"


def file_io_module(properties: Mapping[str, str]) -> str:
    """The module of the FileIO PyIceberg uses for a catalog with these properties: the one
    they name, else pyarrow's (what PyIceberg picks first for local and S3 paths)."""
    return properties.get(PY_IO_IMPL, PYARROW_FILE_IO).rpartition(".")[0]


class OpenedCatalog(Protocol):
    """What a catalog type uses of the adapter's PyIceberg access to its catalog, when a
    connection opens and after a failed write (`iceberg.IcebergCatalog`, which is built on
    the catalog types and so cannot be named here)."""

    @property
    def config(self) -> CatalogDescription: ...

    def ensure_initialized(self) -> None: ...

    def load_table(self, namespace: str, name: str) -> Table: ...

    # Columns of a table or view ([]: neither exists); read only for whether there are any.
    def find_columns(self, namespace: str, name: str) -> Sequence[object]: ...


@dataclass
class Leftovers:
    """What a failed write left: files removed, and files left (with why)."""

    removed: list[Path] = field(default_factory=list)
    removed_bytes: int = 0
    left: list[Path] = field(default_factory=list)
    reason: str = ""

    def describe(self) -> str | None:
        """One sentence for the person running dbt (None when nothing was left)."""
        if self.left:
            shown = ", ".join(str(p) for p in self.left[:5])
            more = f" and {len(self.left) - 5} more" if len(self.left) > 5 else ""
            return (
                f"The failed write left {len(self.left)} files no table references, not "
                f"removed because {self.reason}: {shown}{more}. The next dbt run that has "
                "the warehouse to itself removes them."
            )
        if self.removed:
            return (
                f"The {len(self.removed)} files the failed write left "
                f"({readable_size(self.removed_bytes)}) were removed."
            )
        return None


def readable_size(size: int) -> str:
    if size >= 1_000_000:
        return f"{size / 1e6:.1f} MB"
    return f"{size / 1e3:.1f} KB"


class CatalogType(ABC):
    """One value of the profile's `catalog_type`. Instances hold no profile values: every
    member that needs them is given the `CatalogKeys` or the resolved `CatalogDescription`
    (a `CatalogConfig`)."""

    # The profile's `catalog_type` value.
    name: ClassVar[str]
    # S3 Tables' naming rules are checked unless the profile sets `s3tables_rules`.
    follows_s3tables_rules: ClassVar[bool] = False
    # The catalog compacts, expires snapshots and removes unreferenced files by itself:
    # `s3tables_maintain` leaves its tables alone unless forced.
    maintains_its_tables: ClassVar[bool] = False
    # PyIceberg writes the table metadata files itself (a REST catalog's server does): it
    # cannot change a format-v3 table here (see `metadata_changes`).
    client_writes_metadata: ClassVar[bool] = False

    # --- the profile ---

    @abstractmethod
    def check_profile(self, credentials: CatalogKeys) -> None:
        """Raise ProfileError, naming the key and the fix, for a key this type cannot use;
        fill the keys it derives from the others."""

    def refuse_own_keys(self, credentials: CatalogKeys, catalog_type: str) -> None:
        """Raise ProfileError for a key only this type reads, set in a profile whose
        catalog type is `catalog_type`."""
        return None  # most types have no keys of their own

    def resolve_warehouse(self, warehouse: str, project_root: str | None) -> str:
        """The profile's `warehouse` once the dbt project folder is known."""
        return warehouse

    # --- Spark and PyIceberg settings ---

    def default_uri(self, config: CatalogDescription) -> str | None:
        """The catalog endpoint when the profile sets no `catalog_uri`."""
        return None

    def catalog_uri(self, config: CatalogDescription) -> str | None:
        """The catalog endpoint: the profile's `catalog_uri`, else this type's default."""
        if config.uri:
            return config.uri.rstrip("/")
        return self.default_uri(config)

    def signing_name(self, config: CatalogDescription) -> str | None:
        """The SigV4 service name requests are signed for (None: no SigV4)."""
        return None

    @abstractmethod
    def spark_settings(self, config: CatalogDescription, prefix: str) -> dict[str, str]:
        """This type's Spark settings of the catalog (`prefix`: `spark.sql.catalog.<name>`)."""

    @abstractmethod
    def pyiceberg_properties(self, config: CatalogDescription) -> dict[str, str]:
        """This type's PyIceberg catalog properties."""

    def jar_artifacts(self, config: CatalogDescription) -> tuple[Artifact, ...]:
        """The jars Spark needs for this catalog: Iceberg's runtime, and Iceberg's AWS
        bundle when requests are signed or data goes through S3FileIO."""
        io_impl = dict(config.extra_properties).get("io-impl", "")
        if self.signing_name(config) or io_impl.startswith("org.apache.iceberg.aws."):
            return (iceberg_spark_runtime(), ICEBERG_AWS_BUNDLE)
        return (iceberg_spark_runtime(),)

    def table_defaults(self) -> dict[str, str]:
        """Table properties every table of this catalog gets (a model's own win)."""
        return {}

    @abstractmethod
    def location(self, config: CatalogDescription) -> str:
        """Where the catalog lives, for `dbt debug` and error messages."""

    def scratch_dir(self, config: CatalogDescription) -> str:
        """A local folder for Spark's own session catalog, which holds nothing."""
        return os.path.join(tempfile.gettempdir(), "dbt-s3tables-spark-warehouse")

    # --- using the catalog ---

    def open_connection(self, iceberg: OpenedCatalog, *, spark_in_process: bool) -> None:
        """What a new dbt connection does before its first statement (`spark_in_process`:
        this process's own Spark will write). PyIceberg opens the catalog, creating a new
        one before the JVM starts, so the two never race to create it."""
        iceberg.ensure_initialized()

    def open_catalog(
        self, config: CatalogDescription, load: Callable[[], Catalog], *, recovering: bool
    ) -> Catalog:
        """PyIceberg's catalog, made by `load` (`recovering`: a new catalog is opened over
        a warehouse that holds tables, on purpose)."""
        return load()

    def explain_error(
        self, config: CatalogDescription, error: BaseException, what: str
    ) -> str | None:
        """One sentence, saying what to do, for a failure during `what` that only this type
        has (None: not one of these)."""
        return None

    def is_retryable(self, error: BaseException) -> bool:
        """Whether `error` is this type's catalog being busy (a lock) or two processes
        creating the same thing at once, which a retry clears."""
        return False

    def name_length_problem(self, name: str) -> str | None:
        """Why this catalog cannot hold a namespace or relation name this long (None: it
        can)."""
        return None

    def clean_up_failed_write(
        self, iceberg: OpenedCatalog, since: float, unsafe: str | None
    ) -> Leftovers:
        """Remove the files a write that failed after `since` left (only list them when
        `unsafe` says why removing them is not). Object stores: Iceberg aborts a failed
        write's uploads, so nothing stays half-written."""
        return Leftovers()

    # --- views: PyIceberg's view calls, unless this type's catalog lacks them ---

    def list_views(self, config: CatalogDescription, catalog: Catalog, namespace: str) -> list[str]:
        """The names of the views in `namespace`."""
        return [identifier[-1] for identifier in catalog.list_views(namespace)]

    def view_metadata(
        self, config: CatalogDescription, catalog: Catalog, namespace: str, name: str
    ) -> dict[str, Any]:
        """The view's Iceberg metadata document."""
        return catalog.load_view((namespace, name)).metadata.model_dump(by_alias=True)

    def drop_view(
        self, config: CatalogDescription, catalog: Catalog, identifier: tuple[str, str]
    ) -> None:
        """Drop the view from the catalog."""
        catalog.drop_view(identifier)


def emulator_location_error() -> ProfileError:
    """The test-only `emulator_table_location` set for a catalog that is not an emulator."""
    return ProfileError(
        "emulator_table_location",
        "is a test-only key for an emulated catalog (set with `catalog_uri`); real "
        "catalogs choose table locations themselves",
        "remove `emulator_table_location`",
    )


# The catalog types by the profile's `catalog_type` value; filled by the `catalogs` package
# (its `__init__`), which imports every type module, so nothing here imports one.
CATALOG_TYPES: dict[str, CatalogType] = {}
