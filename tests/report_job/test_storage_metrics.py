"""Storage tables from a real inventory (read the way the job reads it) and from hand-made tables
whose answers are known: attribution, spills, per-commit additions, the projection arithmetic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from persist_spi.config import StoreConfig
from persist_spi.versionstore.content import ContentKey, IcebergTable
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.store import VersionStore
from reports import storage_metrics as sm
from reports.inputs import HadoopFs, LocalFs, discover
from reports.inventory import write_inventory
from reports.loading import load_inventories
from reports.projection import parse_projection

from .test_inventory import SMALL_INDEX, make_repository


@pytest.fixture(scope="module")
def inventory_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    persist, adapter = make_repository("inmemory", None, commits=40, puts=4, config=SMALL_INDEX)
    out = tmp_path_factory.mktemp("storage") / "inv-a"
    try:
        write_inventory(persist, out, source={"backend": "inmemory"})
    finally:
        adapter.close()
    return out


@pytest.fixture(scope="module")
def loaded(spark: Any, inventory_dir: Path) -> tuple[Any, dict[str, Any]]:
    inputs = discover(LocalFs(), [str(inventory_dir.parent)])
    assert [f.name for f in inputs.inventories] == ["inv-a"]
    inventories, tables = load_inventories(spark, HadoopFs(spark), inputs.inventories)
    tables["commits"] = sm.with_landed(tables["commits"], tables["references"])
    return inventories, tables


def test_values_are_attributed_to_the_commits_that_added_them(loaded: tuple[Any, dict[str, Any]]) -> None:
    inventories, t = loaded
    additions = sm.commit_additions(
        sm.attributed_objects(t["objects"], t["commits"], t["links"]), t["commits"]
    )
    per = {r["obj_type"]: r for r in sm.per_commit_by_type(additions, t["commits"], inventories).collect()}
    assert per["VALUE"]["commits"] == 40
    assert per["VALUE"]["objects_per_commit"] == pytest.approx(4.0)
    assert per["COMMIT"]["objects_per_commit"] >= 1.0


def test_content_id_claims_count_per_commit_that_created_the_content(
    loaded: tuple[Any, dict[str, Any]],
) -> None:
    inventories, t = loaded
    additions = sm.commit_additions(
        sm.attributed_objects(t["objects"], t["commits"], t["links"]), t["commits"]
    )
    per = {r["obj_type"]: r for r in sm.per_commit_by_type(additions, t["commits"], inventories).collect()}
    assert per["UNIQUE"]["objects_per_commit"] == pytest.approx(4.0)  # 4 new tables per commit


def _commit_tables(store: VersionStore, first: int, count: int, puts: int) -> None:
    for i in range(first, first + count):
        ops = [
            Put(ContentKey.of(f"t_{i}_{p}"), IcebergTable(metadata_location=f"s3://w/{i}/{p}"))
            for p in range(puts)
        ]
        store.commit(branch("main"), None, CommitMeta(message=f"c{i}"), ops)


def test_the_projection_predicts_the_objects_of_the_same_repository_after_twice_the_commits(
    spark: Any, tmp_path: Path
) -> None:
    """Counted, not assumed: an inventory after 30 commits projects 60; a second inventory after 30
    more commits of the same kind has that many objects."""
    persist, adapter = make_repository("inmemory", None, commits=0, puts=0, config=StoreConfig())
    store = VersionStore(persist)
    try:
        _commit_tables(store, 0, 30, puts=4)
        write_inventory(persist, tmp_path / "after-30", source={"backend": "inmemory"})
        _commit_tables(store, 30, 30, puts=4)
        write_inventory(persist, tmp_path / "after-60", source={"backend": "inmemory"})
    finally:
        adapter.close()
    measured = pq.read_table(tmp_path / "after-60" / "objects.parquet").num_rows
    inventories, tables = load_inventories(
        spark, HadoopFs(spark), discover(LocalFs(), [str(tmp_path / "after-30")]).inventories
    )
    commits = sm.with_landed(tables["commits"], tables["references"])
    additions = sm.commit_additions(
        sm.attributed_objects(tables["objects"], commits, tables["links"]), commits
    )
    (row,) = sm.projection(
        spark, additions, tables["objects"], commits, inventories, [parse_projection("60/s:1s")]
    ).collect()
    assert row["measured_commits"] == 30
    assert row["projected_commits"] == 60
    assert row["projected_objects"] == pytest.approx(measured, rel=0.01)
    # Each commit: its commit object, 4 content values, 4 content-id claims.
    assert row["objects_per_commit"] == pytest.approx(9.0)


def test_spills_match_the_changes_of_reference_index_between_parent_and_child(
    loaded: tuple[Any, dict[str, Any]], inventory_dir: Path
) -> None:
    inventories, t = loaded
    (row,) = sm.index_spills(t["commits"], inventories).collect()
    commits = pq.read_table(inventory_dir / "commits.parquet").to_pylist()
    by_id = {c["commit_id"]: c for c in commits}
    expected = sum(
        1
        for c in commits
        if c["commit_type"] == "normal"
        and c["reference_index_key"] is not None
        and c["reference_index_key"] != by_id.get(c["parent"], {}).get("reference_index_key")
    )
    assert expected > 0
    assert (row["commits"], row["spills"]) == (40, expected)
    assert row["commits_per_spill"] == pytest.approx(40 / expected)


def test_growth_ends_at_the_total_of_attributed_objects(loaded: tuple[Any, dict[str, Any]]) -> None:
    _, t = loaded
    attributed = sm.attributed_objects(t["objects"], t["commits"], t["links"])
    additions = sm.commit_additions(attributed, t["commits"])
    rows = sm.growth(additions).collect()
    assert rows[-1]["commit_number"] == 40
    assert rows[-1]["objects"] == attributed.count()
    assert [r["bytes"] for r in rows] == sorted(r["bytes"] for r in rows)


INVENTORY = "inventory_id STRING, backend STRING"
OBJECTS = "inventory_id STRING, obj_id STRING, obj_type STRING, encoded_size LONG"
COMMITS = (
    "inventory_id STRING, commit_id STRING, parent STRING, seq LONG, created_us LONG, commit_type STRING, "
    "landed BOOLEAN"
)
LINKS = "inventory_id STRING, from_id STRING, to_id STRING, role STRING"


def test_an_object_shared_by_two_commits_belongs_to_the_earlier_one(spark: Any) -> None:
    objects = spark.createDataFrame(
        [("i", "c1", "COMMIT", 100), ("i", "c2", "COMMIT", 100), ("i", "v", "VALUE", 50)], OBJECTS
    )
    commits = spark.createDataFrame(
        [("i", "c1", "e", 1, 10, "normal", True), ("i", "c2", "c1", 2, 20, "normal", True)], COMMITS
    )
    links = spark.createDataFrame([("i", "c2", "v", "value"), ("i", "c1", "v", "value")], LINKS)
    owners = {r["obj_id"]: r["commit_id"] for r in sm.attributed_objects(objects, commits, links).collect()}
    assert owners == {"c1": "c1", "c2": "c2", "v": "c1"}


def test_segments_under_a_segments_object_belong_to_the_commit_that_points_to_it(spark: Any) -> None:
    objects = spark.createDataFrame(
        [
            ("i", "c1", "COMMIT", 10),
            ("i", "S", "INDEX_SEGMENTS", 20),
            ("i", "s1", "INDEX", 30),
            ("i", "s2", "INDEX", 40),
        ],
        OBJECTS,
    )
    commits = spark.createDataFrame([("i", "c1", "e", 1, 10, "normal", True)], COMMITS)
    links = spark.createDataFrame(
        [("i", "c1", "S", "reference-index"), ("i", "S", "s1", "segment"), ("i", "S", "s2", "segment")], LINKS
    )
    owners = {r["obj_id"]: r["commit_id"] for r in sm.attributed_objects(objects, commits, links).collect()}
    assert owners == {"c1": "c1", "S": "c1", "s1": "c1", "s2": "c1"}


def test_projection_is_overhead_plus_per_commit_additions_times_projected_commits(spark: Any) -> None:
    inventories = spark.createDataFrame([("i", "postgres")], INVENTORY)
    # 10 commits of 100 bytes each, each adding 1 value of 50 bytes; 5 reference objects of 20 bytes.
    objects_rows = [("i", f"c{n}", "COMMIT", 100) for n in range(10)]
    objects_rows += [("i", f"v{n}", "VALUE", 50) for n in range(10)]
    objects_rows += [("i", f"r{n}", "REF", 20) for n in range(5)]
    objects = spark.createDataFrame(objects_rows, OBJECTS)
    commits = spark.createDataFrame(
        [("i", f"c{n}", f"c{n - 1}", n + 1, n, "normal", True) for n in range(10)], COMMITS
    )
    links = spark.createDataFrame([("i", f"c{n}", f"v{n}", "value") for n in range(10)], LINKS)
    additions = sm.commit_additions(sm.attributed_objects(objects, commits, links), commits)
    (row,) = sm.projection(
        spark, additions, objects, commits, inventories, [parse_projection("10/s:30d")]
    ).collect()
    commits_kept = 10 * 30 * 86400
    assert row["projected_commits"] == pytest.approx(commits_kept)
    assert row["objects_per_commit"] == pytest.approx(2.0)
    assert row["bytes_per_commit"] == pytest.approx(150.0)
    assert row["projected_objects"] == pytest.approx(5 + 2 * commits_kept)
    assert row["projected_bytes"] == pytest.approx(5 * 20 + 150 * commits_kept)
    assert row["retention_days"] == pytest.approx(30.0)


def test_averages_per_commit_divide_by_the_landed_commits(spark: Any) -> None:
    """A lost-race attempt's objects are stored (they count) but it is no commit of history: three
    landed commits, four commit objects, four values, four content-id claims."""
    objects = spark.createDataFrame(
        [("i", c, "COMMIT", 100) for c in ("c1", "lost", "c2", "c3")]
        + [("i", f"v{n}", "VALUE", 50) for n in range(4)]
        + [("i", f"u{n}", "UNIQUE", 30) for n in range(4)]
        + [("i", "r", "REF", 20)],
        OBJECTS,
    )
    commits = spark.createDataFrame(
        [
            ("i", "c1", "e", 1, 10, "normal", True),
            ("i", "lost", "c1", 2, 15, "normal", False),
            ("i", "c2", "c1", 2, 20, "normal", True),
            ("i", "c3", "c2", 3, 30, "normal", True),
        ],
        COMMITS,
    )
    links = spark.createDataFrame(
        [("i", c, f"v{n}", "value") for n, c in enumerate(("c1", "lost", "c2", "c3"))]
        + [("i", f"v{n}", f"u{n}", "content-id") for n in range(4)],
        LINKS,
    )
    inventories = spark.createDataFrame([("i", "rocksdb")], INVENTORY)
    additions = sm.commit_additions(sm.attributed_objects(objects, commits, links), commits)
    per = {r["obj_type"]: r for r in sm.per_commit_by_type(additions, commits, inventories).collect()}
    assert {k: (v["commits"], v["objects_per_commit"]) for k, v in per.items()} == {
        "COMMIT": (3, pytest.approx(4 / 3)),
        "VALUE": (3, pytest.approx(4 / 3)),
        "UNIQUE": (3, pytest.approx(4 / 3)),
    }
    (row,) = sm.projection(
        spark, additions, objects, commits, inventories, [parse_projection("3/s:1s")]
    ).collect()
    assert row["measured_commits"] == 3
    assert row["objects_per_commit"] == pytest.approx(4.0)
    assert row["projected_objects"] == pytest.approx(13)  # the repository as measured: 3 commits kept
    assert sm.growth(additions).collect()[-1]["commit_number"] == 3


def test_an_inventory_without_content_id_links_is_named(spark: Any) -> None:
    objects = spark.createDataFrame(
        [("old", "u1", "UNIQUE", 31), ("old", "u2", "UNIQUE", 31), ("new", "u3", "UNIQUE", 31)], OBJECTS
    )
    links = spark.createDataFrame([("new", "v3", "u3", "content-id")], LINKS)
    assert [
        (r["inventory_id"], r["unique_objects"]) for r in sm.unlinked_claims(objects, links).collect()
    ] == [("old", 2)]


def test_a_commit_that_is_nobodys_parent_and_no_head_lost_its_race(spark: Any) -> None:
    commits = spark.createDataFrame(
        [
            ("i", "c1", "e", 1, 10, "normal", 100),
            ("i", "lost", "c1", 2, 15, "normal", 120),  # built on c1, then c2 won the race
            ("i", "c2", "c1", 2, 20, "normal", 100),
            ("i", "c3", "c2", 3, 30, "normal", 100),
        ],
        "inventory_id STRING, commit_id STRING, parent STRING, seq LONG, created_us LONG, "
        "commit_type STRING, encoded_size LONG",
    )
    references = spark.createDataFrame([("i", "c3")], "inventory_id STRING, pointer STRING")
    landed = {r["commit_id"]: r["landed"] for r in sm.with_landed(commits, references).collect()}
    assert landed == {"c1": True, "lost": False, "c2": True, "c3": True}
    inventories = spark.createDataFrame([("i", "rocksdb")], INVENTORY)
    (row,) = sm.commit_summary(sm.with_landed(commits, references), inventories).collect()
    assert (row["commits"], row["lost_race_commits"], row["lost_race_commit_bytes"]) == (3, 1, 120)
