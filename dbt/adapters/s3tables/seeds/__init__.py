"""Seed files: reading a CSV into typed text and Arrow, and seed values as SQL literals."""
