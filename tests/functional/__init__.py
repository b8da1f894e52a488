"""Functional tests (a package so test file names may repeat those of tests/unit)."""
