"""Iceberg-native safety features: write-audit-publish, audited builds, run-level undo and
table maintenance, each owning its config."""
