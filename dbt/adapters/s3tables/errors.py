"""The adapter's own error types. Each message names what is wrong, where (the profile
key, the model and its config key, the catalog, the table) and the fix."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import CompilationError, DbtDatabaseError, DbtRuntimeError

logger = AdapterLogger("s3tables")

# What a fix naming --full-refresh adds for a model whose config sets `full_refresh: false`
# (dbt then builds it incrementally whatever the flag says).
FULL_REFRESH_IGNORED = (
    " (its config sets `full_refresh: false`, for which dbt ignores --full-refresh: set "
    "`full_refresh: true` for that run, or remove it)"
)


@contextmanager
def fixes_dbt_honours(node: Mapping[str, Any] | None) -> Iterator[None]:
    """An error raised inside, for the model `node`, never names a fix dbt will ignore:
    one naming --full-refresh says how, when the model's config sets `full_refresh:
    false`."""
    try:
        yield
    except DbtRuntimeError as error:
        full_refresh = ((node or {}).get("config") or {}).get("full_refresh")
        ignored = full_refresh is False or str(full_refresh).lower() == "false"
        if ignored and "--full-refresh" in error.msg and FULL_REFRESH_IGNORED not in error.msg:
            error.msg += FULL_REFRESH_IGNORED
        raise


@contextmanager
def cleaned_up_after(cleanup: Callable[[], object], what: str) -> Iterator[None]:
    """The block, then `cleanup()` (`what` it does, for the log). A cleanup that fails
    after the block failed never replaces the block's error, the one that says what went
    wrong (a statement's, a dead JVM's): it goes on that error as a note and into the
    debug log. After a block that succeeded, a failed cleanup is the error."""
    try:
        yield
    except BaseException as error:
        try:
            cleanup()
        except Exception as cleanup_error:
            note = f"{what} failed after that error, too: {cleanup_error}"
            logger.debug(note)
            error.add_note(note)
        raise
    cleanup()


# --- Profile and connection ---


class ProfileError(DbtRuntimeError):
    """A profile key has a value the adapter cannot use."""

    def __init__(self, key: str, problem: str, fix: str) -> None:
        super().__init__(f"s3tables profile key `{key}`: {problem}. Fix: {fix}")
        self.key, self.problem, self.fix = key, problem, fix

    @classmethod
    def unknown_value(cls, key: str, value: object, allowed: Iterable[str]) -> ProfileError:
        return cls(key, f"unknown value `{value}`", f"use one of: {', '.join(allowed)}")


class CatalogsYmlError(DbtRuntimeError):
    """A catalog integration of `catalogs.yml` that this adapter cannot use."""

    def __init__(self, catalog: str, key: str, problem: str, fix: str) -> None:
        super().__init__(f"catalogs.yml catalog `{catalog}`, key `{key}`: {problem}. Fix: {fix}")


class FunctionNodeError(DbtRuntimeError):
    """A dbt function node (UDF) `dbt build` selected that Spark cannot keep here."""


class UnknownCatalogError(CompilationError):
    """A relation names a catalog that is neither the profile's nor declared."""


class MaintenanceError(CompilationError):
    """An argument of `s3tables_maintain` (or an option of a model's `maintenance` config)
    that cannot work; nothing was run."""

    def __init__(self, key: str, problem: str, fix: str) -> None:
        super().__init__(f"s3tables_maintain argument `{key}`: {problem}. Fix: {fix}")
        self.key, self.problem, self.fix = key, problem, fix


class MissingDependencyError(DbtRuntimeError):
    """A jar or the Java runtime is missing and cannot be fetched."""


class TableBucketError(DbtRuntimeError):
    """The profile's S3 Tables table bucket is missing or cannot be reached."""

    def __init__(self, arn: str, problem: str, fix: str) -> None:
        super().__init__(f"S3 Tables table bucket `{arn}`: {problem}. Fix: {fix}")


# --- Catalogs ---


class CatalogError(DbtRuntimeError):
    """The catalog could not be read or written (locked, unreachable, damaged)."""


class CatalogFileError(DbtRuntimeError):
    """The embedded catalog file is missing, emptied or unreadable in a warehouse that
    holds tables; nothing was read or written."""


class CatalogDdlError(DbtRuntimeError):
    """A catalog DDL call that cannot be carried out; nothing was changed."""


class AlreadyExists(CatalogDdlError):
    """The namespace, table or column to create exists."""


class NotFound(CatalogDdlError):
    """The namespace, table or column named does not exist."""


class SchemaNotEmpty(CatalogDdlError):
    """The namespace to drop still holds tables or views."""


class InvalidArgument(CatalogDdlError):
    """A DDL call's argument (a name, a type, a conflict mode) is not valid."""


# --- Models ---


class ModelConfigError(CompilationError):
    """A model's config (or its output columns) cannot work; raised before anything is
    written."""

    def __init__(self, model_name: str, key: str, problem: str, fix: str) -> None:
        super().__init__(f"Model `{model_name}`, config `{key}`: {problem}. Fix: {fix}")

    @classmethod
    def unknown_value(
        cls, model_name: str, key: str, value: object, allowed: Iterable[str]
    ) -> ModelConfigError:
        return cls(model_name, key, f"unknown value `{value}`", f"use one of: {', '.join(allowed)}")


class UnknownConfigKeysError(CompilationError):
    """Config keys nothing reads (see config_keys.py), with the project's flag making them
    errors; raised before anything is written, one sentence per key."""


class NamingRuleError(CompilationError):
    """A namespace, table or column name outside S3 Tables' naming rules."""

    def __init__(self, subject: str, problem: str, fix: str) -> None:
        super().__init__(f"{subject}: {problem}. Fix: {fix}")


class UnsupportedTypeError(ValueError):
    """A Spark type Iceberg cannot hold (turned into a ModelConfigError naming the model)."""


class PythonModelError(DbtRuntimeError):
    """A Python model failed or returned something other than a DataFrame."""


# --- Statements ---


class StatementRefused(DbtDatabaseError):
    """Spark refused the statement before running it (it could not parse or resolve it):
    it wrote nothing."""
