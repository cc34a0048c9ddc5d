"""What Nessie clients use beyond plain reads and writes: relative commit specs (``~n``, ``^n``,
``*timestamp``), reference metadata (commits ahead of and behind the default branch, common
ancestor, the head's commit meta), the recorded history of a reference's head with consistency
checks, the message override of a single transplanted commit, multi-valued commit properties, and
every content type Nessie serves (Iceberg tables and views, Delta Lake tables, UDFs, namespaces).

The suite runs in-process, over ``lochkit serve`` and against a real Nessie server alike.
"""

from __future__ import annotations

import datetime

import pytest

from conformance.suites.versionstore_base import MAIN, VersionStoreSuite, key, table
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.versionstore import (
    UDF,
    CommitMeta,
    Content,
    DeltaLakeTable,
    IcebergTable,
    IcebergView,
    Namespace,
    Put,
    VersionStore,
)
from persist_spi.versionstore.commit_specs import Lookup, RelativeSpec
from persist_spi.versionstore.refs import branch, tag
from persist_spi.versionstore.results import CommitConsistency


def back(n: int) -> RelativeSpec:
    return RelativeSpec(Lookup.PREDECESSOR, n)


def parent(n: int) -> RelativeSpec:
    return RelativeSpec(Lookup.PARENT, n)


def at_or_before(instant: datetime.datetime) -> RelativeSpec:
    return RelativeSpec(Lookup.TIMESTAMP, instant=instant)


class VersionStoreAddressingSuite(VersionStoreSuite):
    area = "versionstore.addressing"

    def _chain(self, vs: VersionStore, count: int) -> list[ObjId]:
        return [
            self.commit(vs, MAIN, Put(key(f"t{i}"), table(f"v{i}")), message=f"c{i}") for i in range(count)
        ]

    # --- relative commit specs -------------------------------------------------------------------

    def test_nth_predecessor_walks_first_parents(self, vs: VersionStore) -> None:
        """``~n`` is the n-th first-parent predecessor, from the head or from a given hash; lookups
        chain left to right; walking past the first commit lands on the empty commit."""
        c = self._chain(vs, 4)
        assert vs.hash_on_reference(MAIN, None, [back(1)]) == c[2]
        assert vs.hash_on_reference(MAIN, None, [back(3)]) == c[0]
        assert vs.hash_on_reference(MAIN, c[2], [back(2)]) == c[0]
        assert vs.hash_on_reference(None, c[3], [back(1), back(1)]) == c[1]
        assert vs.hash_on_reference(MAIN, None, [back(4)]) == EMPTY_OBJ_ID
        assert vs.hash_on_reference(MAIN, None, [back(9), back(1)]) == EMPTY_OBJ_ID

    def test_nth_parent_reaches_the_merge_parent(self, vs: VersionStore) -> None:
        """``^1`` is the direct parent, ``^2`` a merge commit's merged-in parent; a parent that does
        not exist is the empty commit."""
        base = self.commit(vs, MAIN, Put(key("a"), table("a")))
        feature = branch("feature")
        vs.create_reference(feature, base)
        merged_in = self.commit(vs, feature, Put(key("b"), table("b")))
        before_merge = self.commit(vs, MAIN, Put(key("c"), table("c")))
        merge = vs.merge(feature, MAIN)
        assert merge.resultant_target_hash is not None
        head = merge.resultant_target_hash
        assert vs.hash_on_reference(MAIN, None, [parent(1)]) == before_merge
        assert vs.hash_on_reference(MAIN, None, [parent(2)]) == merged_in
        assert vs.hash_on_reference(None, head, [parent(2), back(1)]) == base
        assert vs.hash_on_reference(MAIN, None, [parent(3)]) == EMPTY_OBJ_ID
        assert vs.hash_on_reference(None, before_merge, [parent(2)]) == EMPTY_OBJ_ID

    def test_timestamp_finds_the_newest_commit_made_at_or_before(self, vs: VersionStore) -> None:
        """``*T`` is the newest first-parent commit whose commit time is at or before T."""
        c = self._chain(vs, 3)
        times = [e.meta.commit_time for e in vs.get_commits(MAIN)][::-1]
        assert all(t is not None for t in times)
        first, second, third = (t for t in times if t is not None)
        # A commit time may carry nanoseconds (Nessie's do), more than an instant here holds.
        tick = datetime.timedelta(microseconds=1)
        assert vs.hash_on_reference(MAIN, None, [at_or_before(third + tick)]) == c[2]
        assert vs.hash_on_reference(MAIN, None, [at_or_before(second + tick)]) == c[1]
        between = first + (second - first) / 2 if second > first else first
        assert vs.hash_on_reference(MAIN, None, [at_or_before(between)]) in (c[0], c[1])
        long_ago = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
        assert vs.hash_on_reference(MAIN, None, [at_or_before(long_ago)]) == EMPTY_OBJ_ID
        later = third + datetime.timedelta(days=1)
        assert vs.hash_on_reference(MAIN, c[1], [at_or_before(later)]) == c[1]

    def test_reads_at_a_relative_spec(self, vs: VersionStore) -> None:
        """A resolved spec is a commit like any other: contents and the log read there."""
        self._chain(vs, 3)
        at = vs.hash_on_reference(MAIN, None, [back(1)])
        assert sorted(str(e.key) for e in vs.get_entries(at)) == ["t0", "t1"]
        assert [e.meta.message for e in vs.get_commits(at)] == ["c1", "c0"]

    # --- reference metadata ----------------------------------------------------------------------

    def test_metadata_of_diverged_branches(self, vs: VersionStore) -> None:
        """A branch is ahead by its own commits and behind by the default branch's since they
        forked; the common ancestor is the fork point; the head's commit meta comes along."""
        fork = self._chain(vs, 2)[-1]
        dev = branch("dev")
        vs.create_reference(dev, fork)
        for i in range(3):
            self.commit(vs, dev, Put(key(f"d{i}"), table("d")), message=f"dev {i}")
        self.commit(vs, MAIN, Put(key("m"), table("m")), message="main 2")
        metadata = vs.reference_metadata(dev)
        assert (metadata.commits_ahead, metadata.commits_behind, metadata.common_ancestor) == (3, 1, fork)
        assert metadata.total_commits == 5
        assert metadata.head_meta is not None
        assert metadata.head_meta.message == "dev 2"
        main = vs.reference_metadata(MAIN)
        assert (main.commits_ahead, main.commits_behind, main.common_ancestor) == (None, None, None)
        assert main.head_meta is not None
        assert main.head_meta.message == "main 2"

    def test_metadata_counts_commits_across_a_merge(self, vs: VersionStore) -> None:
        """After the default branch merged a branch, the branch is 0 ahead and behind by the merge
        commit (and anything else the default branch got), never a negative count."""
        fork = self._chain(vs, 1)[-1]
        dev = branch("dev")
        vs.create_reference(dev, fork)
        head = self.commit(vs, dev, Put(key("d"), table("d")))
        self.commit(vs, MAIN, Put(key("m"), table("m")))
        vs.merge(dev, MAIN)
        metadata = vs.reference_metadata(dev)
        assert (metadata.commits_ahead, metadata.commits_behind, metadata.common_ancestor) == (0, 2, head)

    def test_metadata_of_unrelated_and_tagged_references(self, vs: VersionStore) -> None:
        """A branch sharing nothing with the default branch has the empty commit as common ancestor;
        tags get their head's meta but no ahead/behind."""
        self._chain(vs, 2)
        alone = branch("alone")
        vs.create_reference(alone)
        self.commit(vs, alone, Put(key("x"), table("x")))
        metadata = vs.reference_metadata(alone)
        assert (metadata.commits_ahead, metadata.commits_behind, metadata.common_ancestor) == (
            1,
            2,
            EMPTY_OBJ_ID,
        )
        release = tag("release")
        vs.create_reference(release, vs.reference(MAIN).hash)
        tagged = vs.reference_metadata(release)
        assert (tagged.commits_ahead, tagged.commits_behind, tagged.common_ancestor) == (None, None, None)
        assert tagged.head_meta is not None
        assert tagged.head_meta.message == "c1"
        empty = branch("empty")
        vs.create_reference(empty)
        assert vs.reference_metadata(empty).head_meta is None

    # --- reference history -----------------------------------------------------------------------

    def test_reference_history_records_former_heads(self, vs: VersionStore) -> None:
        """Every move of a reference keeps its former head, newest first; each entry is checked and
        consistent here; the empty commit has no meta."""
        c = self._chain(vs, 3)
        history = vs.reference_history(MAIN)
        assert history.reference == MAIN
        assert history.current.hash == c[2]
        assert history.current.consistency is CommitConsistency.COMMIT_CONSISTENT
        assert history.current.meta is not None
        assert history.current.meta.message == "c2"
        # (a reused repository may remember heads from before the test: compare the newest ones)
        assert [e.hash for e in history.previous[:3]] == [c[1], c[0], EMPTY_OBJ_ID]
        assert {e.consistency for e in history.previous[:3]} == {CommitConsistency.COMMIT_CONSISTENT}
        assert history.previous[2].meta is None
        assert history.log_consistency is CommitConsistency.NOT_CHECKED
        vs.assign(MAIN, c[2], c[0])
        assert [e.hash for e in vs.reference_history(MAIN).previous][:2] == [c[2], c[1]]

    def test_reference_history_can_check_the_log_below_the_head(self, vs: VersionStore) -> None:
        self._chain(vs, 3)
        assert vs.reference_history(MAIN, 10).log_consistency is CommitConsistency.COMMIT_CONSISTENT

    # --- commits and transplants -----------------------------------------------------------------

    def test_multi_valued_commit_properties_round_trip(self, vs: VersionStore) -> None:
        meta = CommitMeta("props", all_properties={"reviewer": ("ann", "bob"), "ticket": ("T-1",)})
        self.commit_with(vs, meta)
        (entry, *_) = vs.get_commits(MAIN)
        assert dict(entry.meta.all_properties) == {"reviewer": ("ann", "bob"), "ticket": ("T-1",)}
        assert entry.meta.properties["reviewer"] == "ann"

    def commit_with(self, vs: VersionStore, meta: CommitMeta) -> ObjId:
        return vs.commit(MAIN, None, meta, [Put(key("p"), table("p"))]).hash

    def test_transplant_can_replace_the_message_of_one_commit(self, vs: VersionStore) -> None:
        """One transplanted commit may get a new message; for several it is refused."""
        base = self._chain(vs, 1)[-1]
        source = branch("source")
        vs.create_reference(source, base)
        first = self.commit(vs, source, Put(key("s1"), table("s1")), message="original")
        second = self.commit(vs, source, Put(key("s2"), table("s2")), message="second")
        self.commit(vs, MAIN, Put(key("m"), table("m")))
        vs.transplant(MAIN, None, [first], message="replayed with a new message")
        assert self.messages(vs, MAIN)[0] == "replayed with a new message"
        with pytest.raises(ValueError, match="message"):
            vs.transplant(MAIN, None, [first, second], message="one message for two commits")

    # --- content types ---------------------------------------------------------------------------

    def test_every_content_type_nessie_serves_round_trips(self, vs: VersionStore) -> None:
        """Iceberg tables and views, Delta Lake tables, UDFs and namespaces read back equal, ids
        included, and list with their type."""
        written: dict[str, Content] = {
            "ns": Namespace(elements=("ns",), properties={"owner": "me"}),
            "ns.iceberg": IcebergTable(metadata_location="s3://t", snapshot_id=4, schema_id=1, spec_id=2),
            "ns.view": IcebergView(metadata_location="s3://v", version_id=7, schema_id=1),
            "ns.delta": DeltaLakeTable(
                metadata_location_history=("s3://d/1", "s3://d/0"),
                checkpoint_location_history=("s3://d/c",),
                last_checkpoint="s3://d/c",
            ),
            "ns.udf": UDF(metadata_location="s3://u", version_id="v1", signature_id="sig"),
        }
        result = vs.commit(MAIN, None, CommitMeta("all"), [Put(key(k), v) for k, v in written.items()])
        read = vs.get_values(MAIN, [key(k) for k in written])
        assert read == {key(k): v.with_id(result.added_content_ids[key(k)]) for k, v in written.items()}
        listed = {str(e.key): e.payload for e in vs.get_entries(MAIN)}
        assert listed == {k: type(v).PAYLOAD for k, v in written.items()}
