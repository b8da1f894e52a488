"""The configuration keys the adapter reads, and nearest-key suggestions for misspelt ones."""
