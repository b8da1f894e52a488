"""AWS S3 Tables: the catalog type, its naming and DDL rules, and the table bucket check."""
