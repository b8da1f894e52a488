"""The process-wide SparkSession: its settings (pure) and its creation.

A JVM holds one SparkSession per process; every dbt thread shares it, so it is created
once under a lock and reused. A start that fails becomes one sentence naming the cause and
the profile key (the JVM's output in `spark.log`, the trace in `dbt.log`), and every later
attempt of the process raises it again rather than starting another JVM.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.s3tables.catalogs.config import CatalogConfig, is_secret
from dbt.adapters.s3tables.catalogs.jars import (
    Artifact,
    JarPlan,
    JarSources,
    find_java,
    resolve_jars,
)
from dbt.adapters.s3tables.engines.class_archive import ArchiveStart, class_archive_for
from dbt.adapters.s3tables.engines.jvm_log import jvm_log_file, jvm_log_tail, mark_log_start
from dbt.adapters.s3tables.engines.jvm_process import (
    JvmExited,
    java_option_refusal,
    java_refusal,
    launch_gateway_logged,
)
from dbt.adapters.s3tables.engines.progress import START_TICK_SECONDS, Ticker
from dbt.adapters.s3tables.engines.session_pool import SESSIONS
from dbt.adapters.s3tables.engines.spark_errors import (
    JavaError,
    context_start_error,
    java_chain,
    jvm_crashed,
    jvm_exit_error,
)
from dbt.adapters.s3tables.errors import ProfileError
from dbt.adapters.s3tables.sql.text import quote

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

logger = AdapterLogger("s3tables")

# Package data of the adapter package, one level up.
LOG4J_CONFIG = os.path.join(os.path.dirname(os.path.dirname(__file__)), "log4j2.properties")

# Spark settings that both the adapter and the user may fill, with their separators.
LIST_SETTINGS = {"spark.jars": ",", "spark.jars.packages": ",", "spark.driver.extraClassPath": ":"}

_session_lock = threading.Lock()
_session: SparkSession | None = None
_session_catalog: CatalogConfig | None = None
# Every catalog the running session knows, by name, and the jars it started with.
_session_catalogs: dict[str, CatalogConfig] = {}
_session_jars: frozenset[Artifact] = frozenset()
# Why this process's Spark could not start: raised again by every later attempt.
_start_failure: DbtRuntimeError | None = None


class SparkContextFailed(Exception):
    """The driver JVM started, its SparkContext did not; `chain` is the Java exception's
    (or the Python one's, as a chain of one)."""

    def __init__(self, chain: list[JavaError]) -> None:
        super().__init__(chain)
        self.chain = chain


def session_settings(
    *,
    master: str,
    catalog: CatalogConfig,
    jars: JarPlan,
    user_settings: dict[str, str],
    log_file: str | None = None,
    other_catalogs: tuple[CatalogConfig, ...] = (),
    java_options: tuple[str, ...] = (),
    driver_class_path: tuple[str, ...] = (),
) -> dict[str, str]:
    """All Spark settings of the session (`catalog` is the default catalog), user settings
    last so they win. `java_options` go to the driver JVM; `driver_class_path` puts jars on
    its class path (where class-data sharing archives their classes) besides `spark.jars`."""
    # Quoted: Spark splits the options at blanks outside double quotes.
    driver_options = f'"-Dlog4j.configurationFile=file:{LOG4J_CONFIG}"'
    # Out of memory, the JVM stops at once (exit code 3) instead of every thread printing
    # its OutOfMemoryError to the console while Spark shuts down.
    driver_options += " -XX:+ExitOnOutOfMemoryError"
    if log_file:
        driver_options += f' "-Ddbt.s3tables.spark.log={log_file}"'
        # A JVM crash report goes beside the logs, not into the project folder.
        error_file = os.path.join(os.path.dirname(log_file), "hs_err_pid%p.log")
        driver_options += f' "-XX:ErrorFile={error_file}"'
    driver_options += "".join(f' "{option}"' for option in java_options)
    settings = {
        "spark.master": master,
        "spark.app.name": "dbt-s3tables",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        # dbt runs small statements one after another: few shuffle partitions are faster.
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.ansi.enabled": "false",
        # Seeds and Python data reach the JVM as Arrow batches instead of pickled rows.
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        # Spark's own session catalog is unused, but keep its folder out of the project.
        "spark.sql.warehouse.dir": catalog.scratch_dir,
        "spark.driver.extraJavaOptions": driver_options,
    }
    settings.update(jars.spark_settings())
    if driver_class_path:
        settings["spark.driver.extraClassPath"] = ":".join(driver_class_path)
    settings.update(catalog.spark_settings())
    for other in other_catalogs:
        settings.update(other.catalog_spark_settings())
    for key, value in user_settings.items():
        if key in LIST_SETTINGS and settings.get(key):
            # The user's jars come on top of the adapter's, never instead of them.
            value = f"{settings[key]}{LIST_SETTINGS[key]}{value}"
        settings[key] = value
    return settings


def split_secrets(settings: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(launch settings, secret settings). PySpark passes launch settings to the JVM as
    `--conf key=value` arguments, visible to every local user in `ps`: a setting whose key
    names a secret (token, credential, password, secret key) is applied to the running
    JVM instead (`apply_at_runtime`)."""
    launch = {k: v for k, v in settings.items() if not is_secret(k)}
    secrets = {k: v for k, v in settings.items() if is_secret(k)}
    return launch, secrets


def add_catalog(spark: SparkSession, catalog: CatalogConfig) -> None:
    """Make `catalog` known to the running session and every session made from it later:
    Spark loads a catalog from its settings on first use."""
    missing = [a for a in catalog.jar_artifacts if a not in _session_jars]
    if missing:
        raise DbtRuntimeError(
            f"Catalog `{catalog.name}` needs {', '.join(a.coordinates for a in missing)}, "
            "which this process's Spark did not start with. Run this project in its own "
            "process (a new dbt command)."
        )
    apply_at_runtime(spark, catalog.catalog_spark_settings())
    _session_catalogs[catalog.name] = catalog


def apply_at_runtime(spark: SparkSession, settings: dict[str, str]) -> None:
    """Give the running JVM settings (secrets, added catalogs) before anything reads them: the
    SparkContext's configuration (every new session's SQL settings start from it, and
    Iceberg catalogs load on first use), and the Hadoop configuration for `spark.hadoop.*`
    (which Spark copies only at start)."""
    context: Any = spark.sparkContext._jsc
    # Sessions lent before hold the earlier settings.
    SESSIONS.forget()
    for key, value in settings.items():
        context.sc().conf().set(key, value)
        if key.startswith("spark.hadoop."):
            context.hadoopConfiguration().set(key.removeprefix("spark.hadoop."), value)
        elif key.startswith("spark.sql."):
            spark.conf.set(key, value)


def get_or_create_session(
    catalog: CatalogConfig,
    master: str,
    user_settings: dict[str, str],
    jar_sources: JarSources,
    other_catalogs: tuple[CatalogConfig, ...] = (),
    class_data_sharing: bool = True,
) -> SparkSession:
    """Return the process's SparkSession, starting it with these catalogs (`catalog` the
    default) if none runs yet; a declared catalog it does not know yet is added to it."""
    global _session, _session_catalog, _session_jars, _start_failure
    with _session_lock:
        if _start_failure is not None:
            raise _start_failure
        if _session is not None and _session._jsc is not None:
            # Spark's default catalog is fixed when the session starts; a declared catalog
            # of another name can be added, one of the same name cannot change what Spark
            # reaches: silently reusing the session would send writes to another catalog.
            # (Settings of the adapter's own, such as `s3tables_rules`, may differ.)
            for wanted, known in [
                (catalog, _session_catalog),
                *((c, _session_catalogs.get(c.name)) for c in other_catalogs),
            ]:
                if known is None:
                    add_catalog(_session, wanted)
                elif known.catalog_spark_settings() != wanted.catalog_spark_settings():
                    raise DbtRuntimeError(
                        f"This process already runs Spark with catalog `{known.name}` at "
                        f"{known.location}; it cannot switch to `{wanted.name}` at "
                        f"{wanted.location}. Run each target in its own process."
                    )
            return _session
        import pyspark

        logger.info(
            f"Starting Spark {pyspark.__version__} (master {master}, catalog `{catalog.name}`)"
        )
        with Ticker(
            START_TICK_SECONDS,
            lambda elapsed: f"Spark still starting ({elapsed:.0f} s)",
            what="Spark's start",
        ):
            return _start_session(
                catalog, master, user_settings, jar_sources, other_catalogs, class_data_sharing
            )


def _start_session(
    catalog: CatalogConfig,
    master: str,
    user_settings: dict[str, str],
    jar_sources: JarSources,
    other_catalogs: tuple[CatalogConfig, ...],
    class_data_sharing: bool,
) -> SparkSession:
    """Start the process's SparkSession (`get_or_create_session`, under its lock)."""
    global _session, _session_catalog, _session_jars, _start_failure
    java = find_java()
    user_java_options = user_settings.get("spark.driver.extraJavaOptions")
    refusal = java_option_refusal(java, user_java_options) if user_java_options else None
    if refusal:
        _start_failure = ProfileError(
            "spark_conf.spark.driver.extraJavaOptions",
            f"Java refuses these options: {refusal}",
            "correct or remove the option",
        )
        raise _start_failure
    log_file = jvm_log_file()
    mark_log_start(log_file)
    artifacts = [a for c in (catalog, *other_catalogs) for a in c.jar_artifacts]
    jars = resolve_jars(artifacts, jar_sources)
    if catalog.aws_profile:
        # The driver JVM starts from this process: Java's AWS SDK reads the profile
        # from its environment.
        os.environ["AWS_PROFILE"] = catalog.aws_profile
    import pyspark

    # The adapter's jars go on the driver's class path too (class-data sharing archives
    # what the application class loader loads), unless the user brings jars of their
    # own: those load in Spark's child class loader, which Iceberg's classes, loaded
    # above it, could not see.
    own_jars = not (user_settings.get("spark.jars") or user_settings.get("spark.jars.packages"))
    driver_class_path = jars.jars if own_jars else ()
    archive = None
    # The user's own driver Java options replace the adapter's, archive options included.
    if class_data_sharing and "spark.driver.extraJavaOptions" not in user_settings:
        # Spark's own jars come from the pyspark installation: two virtualenvs with the
        # same version have different class paths, which Java checks, so their own
        # archives.
        spark_jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
        class_path = (
            spark_jars,
            *jars.jars,
            *(user_settings.get(k, "") for k in LIST_SETTINGS),
        )
        archive = class_archive_for(java, pyspark.__version__, class_path)

    def start(archive_start: ArchiveStart) -> SparkSession:
        settings = session_settings(
            master=master,
            catalog=catalog,
            jars=jars,
            user_settings=user_settings,
            log_file=log_file,
            other_catalogs=other_catalogs,
            java_options=archive_start.options,
            driver_class_path=driver_class_path,
        )
        return launched(settings, log_file, archive_start)

    started = time.monotonic()
    archive_start = archive.start() if archive else ArchiveStart()
    java_options_used = archive_start.options
    if archive_use(java_options_used) == "write":
        logger.info(
            "First start of this Spark with these jars: the JVM writes its class archive, "
            "which makes the next starts seconds faster"
        )
    try:
        try:
            _session = start(archive_start)
        except JvmExited:
            # A damaged archive crashes the JVM as it starts: start without it; the
            # next start writes a new one. Any other cause fails the start.
            if (
                archive is None
                or archive_use(java_options_used) != "map"
                or not jvm_crashed(jvm_log_tail(log_file))
            ):
                raise
            logger.debug(f"Spark's JVM crashed starting with its class archive in {archive.folder}")
            archive.discard()
            java_options_used = ()
            _session = start(ArchiveStart())
    except JvmExited as exited:
        output = jvm_log_tail(log_file)
        logger.debug(f"Spark's driver JVM did not start ({exited}); its output:\n{output}")
        _start_failure = jvm_exit_error(java_refusal(output), user_settings, log_file)
        raise _start_failure from None
    except SparkContextFailed as failed:
        _start_failure = context_start_error(failed.chain, user_settings)
        raise _start_failure from None
    _session_catalog = catalog
    _session_catalogs.clear()
    _session_catalogs.update({c.name: c for c in (catalog, *other_catalogs)})
    _session_jars = frozenset(artifacts)
    _session.sparkContext.setLogLevel("ERROR")
    # Open the Iceberg catalog and run one query now: their first use costs seconds
    # (class loading, catalog connection) that would otherwise land on the first model.
    _session.sql(f"SHOW NAMESPACES IN {quote(catalog.name)}").collect()
    _session.sql("SELECT 1").collect()
    logger.info(
        f"Spark {_session.version} started in {time.monotonic() - started:.1f} s "
        f"(master {master}, catalog `{catalog.name}`{archive_note(java_options_used)})"
    )
    if _session.conf.get("spark.ui.enabled", "true") == "true":
        logger.info(f"Spark UI at {_session.sparkContext.uiWebUrl}")
    return _session


def launched(
    settings: dict[str, str], log_file: str | None, archive_start: ArchiveStart
) -> SparkSession:
    """Start the JVM (`jvm_process`), its SparkContext and SparkSession; secret settings
    reach it after the start. Raises `JvmExited` when the JVM ends before Spark connects."""
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    launch, secrets = split_secrets(settings)
    try:
        jvm = launch_gateway_logged(
            launch,
            log_file,
            pass_fds=archive_start.pass_fds,
            writes_archive=archive_use(archive_start.options) == "write",
        )
    finally:
        archive_start.release()
    try:
        SparkContext(
            conf=SparkConf(loadDefaults=False).setAll(list(launch.items())), gateway=jvm.gateway
        )
        session = SparkSession.builder.getOrCreate()
    except Exception as error:
        logger.debug(f"Spark could not start:\n{traceback.format_exc()}")
        java_error = getattr(error, "java_exception", None)
        # Read while the JVM runs; then end it: every later start raises this failure.
        if java_error is not None:
            chain = java_chain(java_error)
        else:
            chain = [JavaError(type(error).__name__, str(error))]
        jvm.kill()
        raise SparkContextFailed(chain) from None
    apply_at_runtime(session, secrets)
    return session


def archive_use(java_options: tuple[str, ...]) -> str | None:
    """What the start does with class-data sharing: "map" an archive, "write" one, or None."""
    for option in java_options:
        if option.startswith("-XX:SharedArchiveFile="):
            return "map"
        if option.startswith("-XX:ArchiveClassesAtExit="):
            return "write"
    return None


def archive_note(java_options: tuple[str, ...]) -> str:
    """How the start used class-data sharing, for the start-up line."""
    return {
        "map": ", classes mapped from the JVM class archive",
        "write": ", writing the JVM class archive for the next start",
    }.get(archive_use(java_options) or "", "")
