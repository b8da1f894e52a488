"""The local embedded catalog: its SQLite file and warehouse, leftovers of failed writes,
and recovery of a lost catalog file."""
