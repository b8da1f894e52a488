"""Amazon S3 Tables' rules for bucket ARNs and names, checked before any call is made
(pure functions). With the profile flag `s3tables_rules`, they also apply to any other
catalog, so a project can be proven against S3 Tables on a laptop.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from dbt.adapters.s3tables.errors import ModelConfigError, NamingRuleError

if TYPE_CHECKING:
    from dbt.adapters.s3tables.catalogs.base import CatalogType

_ARN_RE = re.compile(
    r"arn:(?P<partition>aws[a-z-]*):s3tables:(?P<region>[a-z]{2}(?:-[a-z]+)+-\d+):"
    r"(?P<account>\d{12}):bucket/(?P<bucket>[^/]+)"
)
_BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]")
_NAME_RE = re.compile(r"[a-z0-9](?:[a-z0-9_]*[a-z0-9])?")
NAME_MAX_LENGTH = 255
NAME_RULE = (
    "S3 Tables names are 1 to 255 lowercase letters, digits and underscores, beginning "
    "and ending with a letter or digit"
)


@dataclass(frozen=True)
class TableBucket:
    arn: str
    region: str
    account: str
    name: str


def parse_table_bucket_arn(arn: str) -> TableBucket:
    """The parts of a table bucket ARN, or ValueError saying what is wrong."""
    match = _ARN_RE.fullmatch(arn.strip())
    if not match:
        raise ValueError(
            f"`{arn}` is not a table bucket ARN: expected "
            "arn:aws:s3tables:<region>:<12-digit account>:bucket/<name>"
        )
    bucket = match["bucket"]
    if not _BUCKET_RE.fullmatch(bucket):
        raise ValueError(
            f"bucket name `{bucket}` must be 3 to 63 lowercase letters, digits and hyphens, "
            "beginning and ending with a letter or digit"
        )
    return TableBucket(arn.strip(), match["region"], match["account"], bucket)


def suggested_name(name: str, prefix: str = "") -> str:
    """The closest name the rules accept (after `prefix`)."""
    cleaned = re.sub(r"[^a-z0-9_]", "_", name.strip().lower())
    cleaned = (prefix + cleaned.strip("_"))[:NAME_MAX_LENGTH].rstrip("_")
    return cleaned or "t"


def name_problem(name: str, kind: str) -> str | None:
    """Why `name` breaks the rules for a `kind` (namespace, table, column), or None."""
    if not name:
        return f"the {kind} name is empty"
    if len(name) > NAME_MAX_LENGTH:
        return f"{kind} name `{name[:40]}...` is {len(name)} characters long"
    if not _NAME_RE.fullmatch(name):
        return f"{kind} name `{name}` breaks the S3 Tables rules ({NAME_RULE})"
    if kind == "namespace" and name.startswith("aws"):
        return f"namespace `{name}` starts with `aws`, which S3 Tables reserves"
    return None


def _suggestion(name: str, kind: str) -> str:
    suggestion = suggested_name(name)
    if kind == "namespace" and suggestion.startswith("aws"):
        suggestion = suggested_name(name, prefix="dbt_")
    return suggestion


def check_names(
    model_name: str,
    namespace: str,
    table: str,
    columns: Sequence[str] = (),
) -> None:
    """Raise naming the model, the offending name and a valid spelling."""
    subject = f"Model `{model_name}`"
    for name, kind, key in (
        (namespace, "namespace", "schema"),
        (table, "table", "alias"),
    ):
        problem = name_problem(name, kind)
        if problem:
            raise NamingRuleError(
                subject, problem, f"set `{key}` to `{_suggestion(name, kind)}`, for example"
            )
    bad_columns = [c for c in columns if name_problem(c, "column")]
    if bad_columns:
        renames = ", ".join(f"`{c}` as `{suggested_name(c)}`" for c in bad_columns)
        raise NamingRuleError(
            subject,
            f"column name(s) {', '.join(f'`{c}`' for c in bad_columns)} break the S3 Tables rules "
            f"({NAME_RULE})",
            f"alias them in the model's select: {renames}",
        )


def check_namespace(namespace: str) -> None:
    problem = name_problem(namespace, "namespace")
    if problem:
        raise NamingRuleError(
            f"Namespace `{namespace}`",
            problem,
            f"use `{_suggestion(namespace, 'namespace')}`, for example",
        )


class TargetCatalog(Protocol):
    """What `check_target` reads of the model's catalog (a `config.CatalogConfig`, which
    sits above the catalog types and so cannot be named here)."""

    @property
    def kind(self) -> CatalogType: ...

    @property
    def s3tables_rules(self) -> bool: ...


def check_target(
    model_name: str,
    catalog: TargetCatalog,
    schema: str,
    identifier: str,
    materialized: str,
    columns: Callable[[], list[str]],
) -> None:
    """Refuse, before any call, a target the catalog would refuse: on the embedded catalog,
    names longer than a folder name; with `s3tables_rules` on, what S3 Tables refuses:
    views, and namespace, table or column names (`columns()`, read only then) outside its
    rules."""
    for key, name in (("schema", schema), ("alias", identifier)):
        problem = catalog.kind.name_length_problem(name)
        if problem:
            raise ModelConfigError(model_name, key, problem, f"choose a shorter {key}")
    if not catalog.s3tables_rules:
        return
    check_materialization(model_name, materialized)
    check_names(model_name, schema, identifier, columns())


def check_latest_version_pointer(model_name: str, version: str, catalog: TargetCatalog) -> None:
    """dbt 1.12's latest version pointer is a view over a versioned model's latest version,
    created after the model is built: refused before, where S3 Tables' rules hold."""
    if catalog.s3tables_rules:
        raise NamingRuleError(
            f"Model `{model_name}` v{version}",
            "its `latest_version_pointer` is a view dbt would create over this latest "
            "version once it is built, and S3 Tables has no views",
            "set `latest_version_pointer: {enabled: false}` on the model (or leave the flag "
            "`latest_version_pointer_enabled_by_default` off) and read the version by its "
            "own name",
        )


def check_materialization(model_name: str, materialized: str) -> None:
    if materialized == "view":
        raise NamingRuleError(
            f"Model `{model_name}`",
            "S3 Tables has no views",
            "materialize it as `table`, or as `ephemeral` to inline it into its consumers",
        )
