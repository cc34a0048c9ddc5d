"""Writing the computed tables beside the page: ``tables/NAME.parquet`` and ``tables/NAME.csv``, one
file each (the tables are small), through Hadoop's FileSystem so any output URI works."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reports.inputs import HadoopFs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def _single_file(hfs: HadoopFs, staging: str, target: str, suffix: str) -> None:
    path = hfs.path(staging)
    parts = [s.getPath() for s in hfs.children(path) if str(s.getPath().getName()).endswith(suffix)]
    if len(parts) != 1:
        raise OSError(f"Expected one {suffix} file in {staging}, found {len(parts)}")
    hfs.rename(str(parts[0].toString()), target)
    hfs.delete(staging)


def write_table(spark: SparkSession, hfs: HadoopFs, df: DataFrame, tables_uri: str, name: str) -> DataFrame:
    """Computes ``df`` once into ``NAME.parquet``, derives ``NAME.csv`` from that file, and returns
    the written table, so the page reads the result instead of computing it again."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, MapType, StructType

    parquet = f"{tables_uri}/{name}.parquet"
    df.coalesce(1).write.mode("overwrite").parquet(f"{tables_uri}/_staging_{name}_parquet")
    _single_file(hfs, f"{tables_uri}/_staging_{name}_parquet", parquet, ".parquet")
    one = spark.read.parquet(parquet)
    # CSV has no nested types: those columns go out as JSON text.
    flat = one.select(
        *[
            F.to_json(F.col(f.name)).alias(f.name)
            if isinstance(f.dataType, ArrayType | MapType | StructType)
            else F.col(f.name)
            for f in one.schema.fields
        ]
    )
    flat.write.mode("overwrite").option("header", True).csv(f"{tables_uri}/_staging_{name}_csv")
    _single_file(hfs, f"{tables_uri}/_staging_{name}_csv", f"{tables_uri}/{name}.csv", ".csv")
    return one
