"""Loading the inputs into DataFrames. Each input was checked when it was found (format versions,
files present: :mod:`reports.inputs`), so loading only reads.

Runs: ``run.json`` (run-directory format) and ``events.parquet`` (event schema); see
docs/run-format.md. Inventories: ``inventory.json`` and its tables (docs/reports.md). Conformance
reports: the JSON ``--lochkit-report`` writes (backend -> provisioning and per-area counts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from reports.inputs import EVENTS, INVENTORY_JSON, INVENTORY_TABLES, RUN_JSON, Found, HadoopFs

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

RUN_JSON_SCHEMA: Final = """
    schema_version INT, lochkit_version STRING, command STRING, command_line ARRAY<STRING>,
    target STRUCT<kind: STRING, backend: STRING, server_version: STRING, provisioning: STRING,
                  url: STRING>,
    parameters MAP<STRING, STRING>, seed LONG,
    machine STRUCT<cores: INT, memory_bytes: LONG, platform: STRING, hostname: STRING>,
    started_at STRING, ended_at STRING, status STRING
"""

INVENTORY_JSON_SCHEMA: Final = """
    schema_version INT, kind STRING, taken_at STRING, lochkit_version STRING, repository_id STRING,
    source STRUCT<backend: STRING, url: STRING, provisioning: STRING, server_version: STRING>
"""

#: backend -> {provisioning, areas: area -> {counts, not_passed: test -> {outcome, reason}}}
CONFORMANCE_SCHEMA: Final = """
    MAP<STRING, STRUCT<
        provisioning: MAP<STRING, STRING>,
        areas: MAP<STRING, STRUCT<
            counts: MAP<STRING, LONG>,
            not_passed: MAP<STRING, STRUCT<outcome: STRING, reason: STRING>>>>>>
"""


@dataclass
class Loaded:
    runs: DataFrame | None = None
    events: DataFrame | None = None
    inventories: DataFrame | None = None
    inventory_tables: dict[str, DataFrame] | None = None
    conformance: DataFrame | None = None
    not_passed: DataFrame | None = None


def unique_ids(found: Iterable[Found]) -> list[str]:
    """Display ids from directory or file names, made unique with ``#2``, ``#3``... in input order."""
    seen: Counter[str] = Counter()
    ids = []
    for f in found:
        base = f.name[:-5] if f.name.endswith(".json") else f.name
        seen[base] += 1
        ids.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return ids


def spark_file_path() -> Column:
    """The path of the file a row came from, in the form Hadoop's ``Path.toString`` gives (which
    :class:`~reports.inputs.Found` and :meth:`HadoopFs.qualified` use). Spark's ``_metadata.file_path``
    is URL-encoded (a space is ``%20``); decoding it as a URL would also turn a literal ``+`` into
    a space, so ``+`` is protected first."""
    from pyspark.sql import functions as F

    return F.url_decode(F.regexp_replace(F.col("_metadata.file_path"), r"\+", "%2B"))


def _tagged(spark: SparkSession, sources: dict[str, str], column: str) -> DataFrame:
    """A two-column DataFrame mapping each source file (as Spark names it in ``_metadata``) to its id."""
    return literal_table(spark, list(sources.items()), f"file_path STRING, {column} STRING")


def read_parquet_tagged(
    spark: SparkSession, files: dict[str, str], column: str, schema: str | None = None
) -> DataFrame:
    """Many Parquet files read in one scan, each row tagged with its file's id (``files`` maps id ->
    qualified file URI). One scan plans fast however many files there are; a union of one read per
    file would not."""
    from pyspark.sql import functions as F

    reader = spark.read.schema(schema) if schema else spark.read
    df = reader.parquet(*files.values()).withColumn("_file", spark_file_path())
    mapping = _tagged(spark, {uri: ident for ident, uri in files.items()}, column)
    return df.join(F.broadcast(mapping), F.col("_file") == F.col("file_path")).drop("_file", "file_path")


def load_runs(spark: SparkSession, hfs: HadoopFs, runs: list[Found]) -> tuple[DataFrame, DataFrame]:
    from pyspark.sql import functions as F

    ids = unique_ids(runs)
    run_json = {ident: hfs.qualified(f"{f.uri}/{RUN_JSON}") for ident, f in zip(ids, runs, strict=True)}
    meta = (
        spark.read.schema(RUN_JSON_SCHEMA)
        .option("multiLine", True)
        .option("mode", "PERMISSIVE")
        .json(list(run_json.values()))
        .withColumn("file_path", spark_file_path())
    )
    mapping = _tagged(spark, {uri: ident for ident, uri in run_json.items()}, "run_id")
    meta = meta.join(F.broadcast(mapping), "file_path").drop("file_path")
    events = {ident: hfs.qualified(f"{f.uri}/{EVENTS}") for ident, f in zip(ids, runs, strict=True)}
    runs_df = meta.select(
        "run_id",
        F.coalesce(F.col("target.backend"), F.lit("unknown")).alias("backend"),
        # lochkit in-process or a Nessie server (REST): the same backend measures differently.
        F.coalesce(F.col("target.kind"), F.lit("unknown")).alias("target"),
        F.coalesce(F.col("parameters")["scenario"], F.col("command"), F.lit("unknown")).alias("scenario"),
        F.coalesce(F.col("parameters")["policy"], F.lit("nessie")).alias("policy"),
        F.coalesce(F.col("lochkit_version"), F.lit("unknown")).alias("lochkit_version"),
        "command",
        F.col("target.server_version").alias("server_version"),
        F.col("target.provisioning").alias("provisioning"),
        "seed",
        F.col("machine.cores").alias("cores"),
        F.to_timestamp("started_at").alias("started_at"),
        F.to_timestamp("ended_at").alias("ended_at"),
        "status",
    )
    events_df = read_parquet_tagged(spark, events, "run_id").select(
        "run_id",
        F.col("start").cast("long").alias("start_ns"),
        "duration_ns",
        "worker",
        "action",
        "puts",
        "attempts",
        "outcome",
        "error_kind",
    )
    return runs_df, events_df


def load_inventories(
    spark: SparkSession, hfs: HadoopFs, inventories: list[Found]
) -> tuple[DataFrame, dict[str, DataFrame]]:
    from pyspark.sql import functions as F

    ids = unique_ids(inventories)
    docs = {
        ident: hfs.qualified(f"{f.uri}/{INVENTORY_JSON}") for ident, f in zip(ids, inventories, strict=True)
    }
    meta = (
        spark.read.schema(INVENTORY_JSON_SCHEMA)
        .option("multiLine", True)
        .json(list(docs.values()))
        .withColumn("file_path", spark_file_path())
    )
    mapping = _tagged(spark, {uri: ident for ident, uri in docs.items()}, "inventory_id")
    meta = meta.join(F.broadcast(mapping), "file_path").drop("file_path")
    tables = {}
    for table in INVENTORY_TABLES:
        files = {
            ident: hfs.qualified(f"{f.uri}/{table}.parquet")
            for ident, f in zip(ids, inventories, strict=True)
        }
        tables[table] = read_parquet_tagged(spark, files, "inventory_id")
    inventories_df = meta.select(
        "inventory_id",
        F.coalesce(F.col("source.backend"), F.lit("unknown")).alias("backend"),
        F.col("source.server_version").alias("server_version"),
        "repository_id",
        "lochkit_version",
        F.to_timestamp("taken_at").alias("taken_at"),
    )
    return inventories_df, tables


def load_conformance(spark: SparkSession, hfs: HadoopFs, reports: list[Found]) -> tuple[DataFrame, DataFrame]:
    """Per (report, backend, area) counts and per-test not-passed rows."""
    from pyspark.sql import functions as F

    ids = unique_ids(reports)
    files = {hfs.qualified(f.uri): (ident, f.modified) for ident, f in zip(ids, reports, strict=True)}
    raw = spark.read.text(list(files), wholetext=True)
    raw = raw.withColumn("file_path", spark_file_path())
    mapping = literal_table(
        spark,
        [(uri, ident, modified) for uri, (ident, modified) in files.items()],
        "file_path STRING, report_id STRING, modified_ms LONG",
    )
    parsed = raw.join(F.broadcast(mapping), "file_path").select(
        "report_id",
        F.timestamp_millis("modified_ms").alias("report_time"),
        F.from_json("value", CONFORMANCE_SCHEMA, {"mode": "PERMISSIVE"}).alias("doc"),
    )
    backends = parsed.select("report_id", "report_time", F.explode_outer("doc").alias("backend", "b"))
    areas = backends.select(
        "report_id", "report_time", "backend", F.explode_outer("b.areas").alias("area", "a")
    )
    valid = areas.where(F.col("area").isNotNull() & F.col("a.counts").isNotNull())
    counts = valid.select(
        "report_id",
        "report_time",
        "backend",
        "area",
        *[
            F.coalesce(F.col("a.counts")[o], F.lit(0)).alias(o)
            for o in ("passed", "failed", "skipped", "xfailed", "xpassed", "error")
        ],
    )
    not_passed = valid.select(
        "report_id", "report_time", "backend", "area", F.explode("a.not_passed").alias("test_id", "t")
    ).select("report_id", "report_time", "backend", "area", "test_id", "t.outcome", "t.reason")
    return counts, not_passed


def literal_table(spark: SparkSession, rows: list[tuple[object, ...]], schema: str) -> DataFrame:
    """A small DataFrame built from literals inside the JVM. ``spark.createDataFrame`` on Python
    rows would start Python workers on the executors, which a cluster without lochkit installed
    cannot run; literals need none."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    parsed = StructType.fromDDL(schema)
    assert isinstance(parsed, StructType)
    fields = parsed.fields
    if not rows:
        return spark.createDataFrame([], schema)
    structs = [
        F.struct(*[F.lit(value).cast(f.dataType).alias(f.name) for value, f in zip(row, fields, strict=True)])
        for row in rows
    ]
    return spark.range(1).select(F.inline(F.array(*structs)))
