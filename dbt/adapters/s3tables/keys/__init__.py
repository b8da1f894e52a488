"""The configuration keys the adapter reads, nearest-key suggestions for misspelt ones, and
mappings of scalar settings read as string pairs."""
