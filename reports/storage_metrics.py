"""From inventories: objects and bytes by type, what each commit added (by object type), how often
the reference index spilled, growth over commits, and the projection for a commit rate and a
retention period.

Attribution: every object a commit points to (content values its operations added, reference-index
stripes, the segments object and the segments under it), the content-id claims (unique-id objects)
of the values it added, and the commit object itself belong to the *first* commit (by creation
time) that points to them; later commits that reuse an object add nothing. What normal commits add
is the per-commit cost; everything else (reference records, tags, strings, internal commits of the
reference bookkeeping and what they point to, claims no value refers to) is the repository's fixed
overhead.

Commit objects of attempts that lost a compare-and-swap race are stored but never become part of
history (the retry builds a new commit on the new head): a commit that is nobody's parent and no
reference's head is such a *lost-race* commit. Averages per commit divide by the commits that
landed; what lost-race attempts stored counts in the numerator (it takes space until a garbage
collection removes it), so the averages are the storage cost of one landed commit at the measured
contention.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reports.loading import literal_table
from reports.projection import Projection

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def with_landed(commits: DataFrame, references: DataFrame) -> DataFrame:
    """``commits`` with ``landed``: false for a lost-race commit (see the module docstring)."""
    from pyspark.sql import functions as F

    parents = commits.select("inventory_id", F.col("parent").alias("commit_id"))
    heads = references.select("inventory_id", F.col("pointer").alias("commit_id"))
    pointed = parents.unionByName(heads).distinct().withColumn("landed", F.lit(True))
    return commits.join(pointed, ["inventory_id", "commit_id"], "left").fillna(False, ["landed"])


def commit_summary(commits: DataFrame, inventories: DataFrame) -> DataFrame:
    """Per inventory: commits that landed, internal commits, lost-race commit objects and their bytes."""
    from pyspark.sql import functions as F

    normal = F.col("commit_type") == "normal"
    lost = normal & ~F.col("landed")
    return (
        commits.groupBy("inventory_id")
        .agg(
            F.sum((normal & F.col("landed")).cast("long")).alias("commits"),
            F.sum((~normal).cast("long")).alias("internal_commits"),
            F.sum(lost.cast("long")).alias("lost_race_commits"),
            F.sum(F.when(lost, F.col("encoded_size")).otherwise(0)).alias("lost_race_commit_bytes"),
        )
        .join(inventories.select("inventory_id", "backend"), "inventory_id")
        .orderBy("inventory_id")
    )


def _landed_normal(commits: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    return commits.where((F.col("commit_type") == "normal") & F.col("landed"))


def objects_by_type(objects: DataFrame, inventories: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    return (
        objects.groupBy("inventory_id", "obj_type")
        .agg(
            F.count(F.lit(1)).alias("objects"),
            F.sum("encoded_size").alias("bytes"),
            F.avg("encoded_size").alias("mean_bytes"),
            F.max("encoded_size").alias("max_bytes"),
        )
        .join(inventories.select("inventory_id", "backend"), "inventory_id")
        .select("inventory_id", "backend", "obj_type", "objects", "bytes", "mean_bytes", "max_bytes")
        .orderBy("inventory_id", "obj_type")
    )


def attributed_objects(objects: DataFrame, commits: DataFrame, links: DataFrame) -> DataFrame:
    """Each object a commit needs, with the first commit that needed it (see the module docstring)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    owners = commits.select("inventory_id", "commit_id", "created_us")
    direct = links.join(owners.withColumnRenamed("commit_id", "from_id"), ["inventory_id", "from_id"]).select(
        "inventory_id",
        F.col("from_id").alias("commit_id"),
        "created_us",
        F.col("to_id").alias("obj_id"),
        "role",
    )
    segments_objs = direct.where(F.col("role") == "reference-index").select(
        "inventory_id", "commit_id", "created_us", F.col("obj_id").alias("from_id")
    )
    under_segments = segments_objs.join(
        links.where(F.col("role") == "segment"), ["inventory_id", "from_id"]
    ).select("inventory_id", "commit_id", "created_us", F.col("to_id").alias("obj_id"))
    values = direct.where(F.col("role") == "value").select(
        "inventory_id", "commit_id", "created_us", F.col("obj_id").alias("from_id")
    )
    content_ids = values.join(links.where(F.col("role") == "content-id"), ["inventory_id", "from_id"]).select(
        "inventory_id", "commit_id", "created_us", F.col("to_id").alias("obj_id")
    )
    claims = (
        direct.drop("role")
        .unionByName(under_segments)
        .unionByName(content_ids)
        .unionByName(owners.withColumn("obj_id", F.col("commit_id")))
    )
    first = Window.partitionBy("inventory_id", "obj_id").orderBy("created_us", "commit_id")
    return (
        claims.withColumn("_n", F.row_number().over(first))
        .where(F.col("_n") == 1)
        .drop("_n")
        .join(
            objects.select("inventory_id", "obj_id", "obj_type", "encoded_size"), ["inventory_id", "obj_id"]
        )
    )


def unlinked_claims(objects: DataFrame, links: DataFrame) -> DataFrame:
    """Per inventory that has unique-id objects but no ``content-id`` link at all (taken by a lochkit
    whose inventory did not record them yet): how many unique-id objects it holds. There, the
    content-id claims cannot be attributed and stay in the fixed overhead."""
    from pyspark.sql import functions as F

    linked = links.where(F.col("role") == "content-id").select("inventory_id").distinct()
    return (
        objects.where(F.col("obj_type") == "UNIQUE")
        .groupBy("inventory_id")
        .agg(F.count(F.lit(1)).alias("unique_objects"))
        .join(linked, "inventory_id", "left_anti")
        .orderBy("inventory_id")
    )


def commit_additions(attributed: DataFrame, commits: DataFrame) -> DataFrame:
    """Per commit and object type: objects and bytes that commit added."""
    from pyspark.sql import functions as F

    return (
        attributed.groupBy("inventory_id", "commit_id", "obj_type")
        .agg(F.count(F.lit(1)).alias("objects"), F.sum("encoded_size").alias("bytes"))
        .join(
            commits.select("inventory_id", "commit_id", "seq", "created_us", "commit_type", "landed"),
            ["inventory_id", "commit_id"],
        )
    )


def _landed_count(commits: DataFrame, name: str) -> DataFrame:
    """Per inventory: the normal commits that landed, as column ``name``."""
    return _landed_normal(commits).groupBy("inventory_id").count().withColumnRenamed("count", name)


def _normal_additions(additions: DataFrame) -> DataFrame:
    """What normal commits added, landed or not (see the module docstring)."""
    from pyspark.sql import functions as F

    return additions.where(F.col("commit_type") == "normal")


def per_commit_by_type(additions: DataFrame, commits: DataFrame, inventories: DataFrame) -> DataFrame:
    """Per inventory and object type: objects and bytes normal commits added, per landed commit."""
    from pyspark.sql import functions as F

    return (
        _normal_additions(additions)
        .groupBy("inventory_id", "obj_type")
        .agg(F.sum("objects").alias("objects"), F.sum("bytes").alias("bytes"))
        .join(_landed_count(commits, "commits"), "inventory_id")
        .join(inventories.select("inventory_id", "backend"), "inventory_id")
        .select(
            "inventory_id",
            "backend",
            "obj_type",
            "commits",
            (F.col("objects") / F.col("commits")).alias("objects_per_commit"),
            (F.col("bytes") / F.col("commits")).alias("bytes_per_commit"),
        )
        .orderBy("inventory_id", "obj_type")
    )


def index_spills(commits: DataFrame, inventories: DataFrame) -> DataFrame:
    """Per inventory: how many normal commits changed the reference index (spilled the incremental
    index into stripes), commits per spill, and incremental index sizes."""
    from pyspark.sql import functions as F

    normal = _landed_normal(commits)
    parents = commits.select(
        "inventory_id", F.col("commit_id").alias("parent"), F.col("reference_index_key").alias("parent_key")
    )
    spilled = F.col("reference_index_key").isNotNull() & (
        F.col("parent_key").isNull() | (F.col("reference_index_key") != F.col("parent_key"))
    )
    return (
        normal.join(parents, ["inventory_id", "parent"], "left")
        .groupBy("inventory_id")
        .agg(
            F.count(F.lit(1)).alias("commits"),
            F.sum(spilled.cast("int")).alias("spills"),
            F.avg("incremental_index_bytes").alias("incremental_index_mean_bytes"),
            F.max("incremental_index_bytes").alias("incremental_index_max_bytes"),
            F.max("reference_index_stripes").alias("max_embedded_stripes"),
            F.sum(F.col("reference_index").isNotNull().cast("int")).alias("commits_with_segments_obj"),
        )
        .withColumn("commits_per_spill", F.when(F.col("spills") > 0, F.col("commits") / F.col("spills")))
        .join(inventories.select("inventory_id", "backend"), "inventory_id")
        .orderBy("inventory_id")
    )


def growth(additions: DataFrame) -> DataFrame:
    """Per inventory, commit after commit in creation order: landed (normal) commits so far and the
    objects and bytes the repository's commits have needed so far."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    per_commit = additions.groupBy(
        "inventory_id", "commit_id", "created_us", "seq", "commit_type", "landed"
    ).agg(F.sum("objects").alias("objects"), F.sum("bytes").alias("bytes"))
    so_far = (
        Window.partitionBy("inventory_id")
        .orderBy("created_us", "seq", "commit_id")
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    return per_commit.select(
        "inventory_id",
        "commit_id",
        "created_us",
        F.sum(((F.col("commit_type") == "normal") & F.col("landed")).cast("long"))
        .over(so_far)
        .alias("commit_number"),
        F.sum("objects").over(so_far).alias("objects"),
        F.sum("bytes").over(so_far).alias("bytes"),
    ).orderBy("inventory_id", "created_us", "commit_id")


def projection(
    spark: SparkSession,
    additions: DataFrame,
    objects: DataFrame,
    commits: DataFrame,
    inventories: DataFrame,
    projections: list[Projection],
) -> DataFrame:
    """Per inventory and ``--project``: commits kept over the retention, and the objects and bytes
    they need: the fixed overhead plus the measured additions per landed commit times those commits
    (at the measured number of commits, exactly the inventory's objects and bytes)."""
    from pyspark.sql import functions as F

    added = (
        _normal_additions(additions)
        .groupBy("inventory_id")
        .agg(F.sum("objects").alias("added_objects"), F.sum("bytes").alias("added_bytes"))
    )
    total = objects.groupBy("inventory_id").agg(
        F.count(F.lit(1)).alias("all_objects"), F.sum("encoded_size").alias("all_bytes")
    )
    rates = literal_table(
        spark,
        [(p.label, p.commits_per_s, p.retention_s) for p in projections],
        "projection STRING, commits_per_s DOUBLE, retention_s DOUBLE",
    )
    per_commit_objects = F.col("added_objects") / F.col("measured_commits")
    per_commit_bytes = F.col("added_bytes") / F.col("measured_commits")
    projected_commits = F.col("commits_per_s") * F.col("retention_s")
    fixed_objects = F.col("all_objects") - F.col("added_objects")
    fixed_bytes = F.col("all_bytes") - F.col("added_bytes")
    return (
        inventories.select("inventory_id", "backend")
        .join(_landed_count(commits, "measured_commits"), "inventory_id")
        .join(added, "inventory_id")
        .join(total, "inventory_id")
        .where(F.col("measured_commits") > 0)
        .crossJoin(F.broadcast(rates))
        .select(
            "inventory_id",
            "backend",
            "projection",
            "commits_per_s",
            (F.col("retention_s") / 86400).alias("retention_days"),
            "measured_commits",
            F.col("all_objects").alias("measured_objects"),
            F.col("all_bytes").alias("measured_bytes"),
            fixed_objects.alias("fixed_objects"),
            fixed_bytes.alias("fixed_bytes"),
            per_commit_objects.alias("objects_per_commit"),
            per_commit_bytes.alias("bytes_per_commit"),
            projected_commits.alias("projected_commits"),
            (fixed_objects + per_commit_objects * projected_commits).alias("projected_objects"),
            (fixed_bytes + per_commit_bytes * projected_commits).alias("projected_bytes"),
        )
        .orderBy("inventory_id", "projection")
    )
