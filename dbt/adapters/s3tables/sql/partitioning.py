"""A table's partition fields as a model's `partition_by` spells them (`ts`, `day(ts)`,
`bucket(4, id)`, `truncate(8, s)`): in messages about partition evolution and in the docs
catalog (pure functions)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import Transform


def partition_field_text(transform: Transform[Any, Any], source: str) -> str:
    """One field: `ts`, `day(ts)`, `bucket(4, id)`, `truncate(8, s)`."""
    from pyiceberg.transforms import BucketTransform, IdentityTransform, TruncateTransform

    if isinstance(transform, IdentityTransform):
        return source
    if isinstance(transform, BucketTransform):
        return f"bucket({transform.num_buckets}, {source})"
    if isinstance(transform, TruncateTransform):
        return f"truncate({transform.width}, {source})"
    return f"{transform}({source})"


def live_partition_fields(spec: PartitionSpec, schema: Schema) -> list[tuple[str, str, Any]]:
    """The spec's fields as (field name, source column, transform); the void fields a
    format-1 table keeps in place of removed ones partition nothing and are left out."""
    from pyiceberg.transforms import VoidTransform

    return [
        (
            spec_field.name,
            schema.find_column_name(spec_field.source_id) or f"<field {spec_field.source_id}>",
            spec_field.transform,
        )
        for spec_field in spec.fields
        if not isinstance(spec_field.transform, VoidTransform)
    ]


def partition_spec_text(spec: PartitionSpec, schema: Schema) -> str:
    """The whole spec: `day(ts), bucket(4, id)`, or `unpartitioned`."""
    fields = live_partition_fields(spec, schema)
    return ", ".join(partition_field_text(t, s) for _, s, t in fields) or "unpartitioned"
