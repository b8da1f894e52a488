"""The catalog keys, declared once: the profile and catalogs.yml accept exactly them, with
the declared defaults, and a secret key's value stays out of every repr."""

from __future__ import annotations

from dataclasses import fields

import pytest

from dbt.adapters.s3tables.catalogs.config import catalog_config_for
from dbt.adapters.s3tables.catalogs.description import KEY, CatalogDescription
from dbt.adapters.s3tables.catalogs.keys import ENTRY_KEYS, PROPERTY_KEYS, CatalogKeys
from dbt.adapters.s3tables.credentials import S3TablesCredentials

SECRET = "s3cr3t-V4lue-that-must-never-be-printed"
DECLARED = {spec.name: spec for spec in fields(CatalogKeys)}


def test_the_profile_takes_every_catalog_key_as_declared() -> None:
    profile = {spec.name: spec for spec in fields(S3TablesCredentials)}
    assert set(DECLARED) <= set(S3TablesCredentials.profile_keys())
    # The declaration itself, not a redeclaration (dbt-spark's own `token` included).
    assert all(profile[name] is spec for name, spec in DECLARED.items())


def test_catalogs_yml_takes_every_catalog_key_but_those_its_entry_gives() -> None:
    assert set(ENTRY_KEYS) <= set(DECLARED)
    assert set(PROPERTY_KEYS) == set(DECLARED) - set(ENTRY_KEYS)


def test_every_field_of_the_description_reads_a_declared_key() -> None:
    read = {spec.metadata[KEY] for spec in fields(CatalogDescription)}
    assert read <= set(DECLARED)
    # The ARN only derives the warehouse and region; the others each have a field.
    assert set(DECLARED) - read == {"table_bucket_arn"}


def test_the_description_defaults_are_the_declared_ones() -> None:
    description = CatalogDescription(name="c", catalog_type="local", warehouse="/w")
    assert description.lock_timeout_seconds == DECLARED["catalog_lock_timeout"].default
    assert description.s3tables_client == DECLARED["s3tables_client"].default
    assert (description.s3tables_rules, description.extra_properties) == (False, ())


@pytest.mark.parametrize("key", ["token", "credential"])
def test_a_secret_key_stays_out_of_every_repr(key: str) -> None:
    profile = S3TablesCredentials.from_dict(
        {"schema": "s", "catalog_type": "rest", "catalog_uri": "https://c.example.com", key: SECRET}
    )
    assert getattr(profile, key) == SECRET
    assert SECRET not in repr(profile)
    assert SECRET not in repr(catalog_config_for(profile))
    assert SECRET not in repr(CatalogKeys(**{key: SECRET}))
