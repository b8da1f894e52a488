"""dbt-tests-adapter's relations suite: a model switching between view, table and
incremental replaces its relation, and `drop_schema_named` drops the schema. No
adaptation needed."""

from dbt.tests.adapter.relations.test_changing_relation_type import (
    BaseChangeRelationTypeValidator,
)
from dbt.tests.adapter.relations.test_dropping_schema_named import BaseDropSchemaNamed


class TestChangeRelationTypeValidator(BaseChangeRelationTypeValidator):
    pass


class TestDropSchemaNamed(BaseDropSchemaNamed):
    pass
