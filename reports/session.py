"""The SparkSession the report job runs in: local Spark by default, any master URL otherwise.

Settings that the job relies on are set here, once:
- ``spark.sql.legacy.parquet.nanosAsLong``: events.parquet stores ``start`` as a nanosecond
  timestamp, which Spark cannot read as a timestamp; as a long it is exact and is all the job needs;
- a UTC session time zone, so 1-second windows and dates do not depend on the machine;
- few shuffle partitions: the job's grouped tables are small, and the default (200) costs more in
  task start-up than it saves;
- when this process starts the JVM (local Spark, or a driver for ``--master``): Spark's log at level
  ERROR (``log4j2.properties``) and the JVM's start-up warning left out of the console
  (:mod:`reports.jvm_console`), so a normal run prints only its result;
- no console progress bar;
- JVM options from ``LOCHKIT_SPARK_DRIVER_JVM_OPTIONS`` added to the driver's, when this process starts it.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import os
import shlex
import shutil
import sys
from typing import TYPE_CHECKING, Final

from persist_spi.errors import LochkitError
from provisioning.servers import jvm_startup

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER: Final = "local[*]"


class SparkUnavailable(LochkitError, RuntimeError):
    """PySpark or Java is missing; the message says how to install them."""


def _check_requirements() -> None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise SparkUnavailable(
            "PySpark is not installed: pip install 'lochkit[reports]' (Spark 4.1 needs Java 17 or 21)"
        ) from None
    java_home = os.environ.get("JAVA_HOME")
    if not (java_home and os.path.exists(os.path.join(java_home, "bin", "java"))) and not shutil.which(
        "java"
    ):
        raise SparkUnavailable(
            "No Java runtime found: Spark 4.1 needs Java 17 or 21 (apt-get install openjdk-17-jre-headless, "
            "or set JAVA_HOME)"
        )


def _log_config_option() -> str:
    """The JVM option that points log4j at the job's logging configuration."""
    path = str(importlib.resources.files("reports").joinpath("log4j2.properties"))
    return (
        f'-Dlog4j2.configurationFile="{path}"'
        if any(c.isspace() for c in path)
        else f"-Dlog4j2.configurationFile={path}"
    )


def driver_java_options(given: str | None) -> str:
    """The JVM options of a driver this process starts: ``given`` (else the job's logging
    configuration), then ``LOCHKIT_SPARK_DRIVER_JVM_OPTIONS`` (CI sets ``-XX:TieredStopAtLevel=1``: the
    quick compiler only, so the driver starts sooner; a long job on big tables runs slower)."""
    extra = " ".join(
        shlex.quote(o) for o in jvm_startup.java_options_from_env("LOCHKIT_SPARK_DRIVER_JVM_OPTIONS")
    )
    return " ".join(o for o in (_log_config_option() if given is None else given, extra) if o)


def spark_session(
    master: str | None = None,
    app_name: str = "lochkit-report",
    shuffle_partitions: int = 4,
    driver_memory: str | None = None,
    extra_conf: dict[str, str] | None = None,
) -> SparkSession:
    """A session for ``master`` (default: ``local[*]``, or what ``spark-submit`` configured)."""
    _check_requirements()
    # Spark binds to the machine's address by default; loopback keeps a local run off the network.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Executors run Python only for the few steps that need it; make them use this interpreter.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    from reports.jvm_console import filtered_stderr_for_children

    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    elif "PYSPARK_GATEWAY_PORT" not in os.environ:
        # Not under spark-submit (which starts this process with a gateway to its own JVM and the
        # master it was given), so default to local Spark.
        builder = builder.master(DEFAULT_MASTER)
    if driver_memory:
        # Only takes effect when this call starts the JVM (not under spark-submit, which sets it).
        builder = builder.config("spark.driver.memory", driver_memory)
    starts_jvm = "PYSPARK_GATEWAY_PORT" not in os.environ and SparkContext._active_spark_context is None
    conf = dict(extra_conf or {})
    if starts_jvm:
        builder = builder.config(
            "spark.driver.extraJavaOptions",
            driver_java_options(conf.pop("spark.driver.extraJavaOptions", None)),
        )
    for key, value in conf.items():
        builder = builder.config(key, value)
    builder = (
        builder.config("spark.sql.legacy.parquet.nanosAsLong", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.ui.showConsoleProgress", "false")
    )
    with filtered_stderr_for_children() if starts_jvm else contextlib.nullcontext():
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    # A session that already existed (tests share one) gets the job's settings too.
    session.conf.set("spark.sql.legacy.parquet.nanosAsLong", "true")
    session.conf.set("spark.sql.session.timeZone", "UTC")
    return session
