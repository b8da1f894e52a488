"""Pure SQL text helpers: quoting and literals, Spark types, LIKE patterns, the SQL of
dbt's cross-database macros and of contract checks."""
