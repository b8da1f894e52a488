import atexit
import gc

from dbt.adapters.base import AdapterPlugin

from dbt.adapters.s3tables.connections import S3TablesConnectionManager  # noqa: F401
from dbt.adapters.s3tables.credentials import S3TablesCredentials
from dbt.adapters.s3tables.impl import S3TablesAdapter
from dbt.include import s3tables

Plugin = AdapterPlugin(
    adapter=S3TablesAdapter,  # type: ignore[arg-type]  # dbt types it as its abstract base
    credentials=S3TablesCredentials,
    include_path=s3tables.PACKAGE_PATH,
    dependencies=["spark"],
)

# A dbt process with this adapter loaded exits holding millions of objects (dbt, pyspark,
# PyIceberg, pandas), and the interpreter's last garbage collection walks them all: 0.4-0.5 s
# of every command. Frozen, they are skipped by it; nothing relies on that collection (dbt's
# logs, connections and Spark are closed by their own exit handlers, which still run).
atexit.register(gc.freeze)
