"""`dbt-s3tables-watch`: one long-lived process that runs `dbt run -s <selector>` (or `dbt
build`) through dbt's `dbtRunner` each time a selected node's file is saved, so dbt's
imports, its partial parse, the catalog libraries and an in-process Spark stay warm.

`arguments.py` (the command line, and the dbt commands it makes) and `files.py` (which files
are watched, and which changed) are pure; `lines.py` words what the watch prints;
`command.py` is the process: the loop, the signals, and Spark's end. The package face
imports nothing.
"""
