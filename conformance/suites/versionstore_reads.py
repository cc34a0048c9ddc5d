"""Version-store reads: the commit log (first parents, newest first, resumable with paging tokens),
key listings (ranges, prefixes, filters, paging, with or without content) and content reads.

Key order is element-wise, then by the UTF-8 bytes of each element; ranges are inclusive; a prefix
matches whole elements (``k2`` matches ``k2`` and ``k2.x``, not ``k2a``). Paging tokens resume a
listing at (and including) the entry that carried them.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest

from conformance.suites.versionstore_base import (
    MAIN,
    VersionStoreSuite,
    exactly,
    key,
    namespace,
    table,
    without_id,
)
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.objs import CommitObj
from persist_spi.persist import Persist
from persist_spi.versionstore import (
    CommitMeta,
    Content,
    ContentKey,
    Delete,
    IcebergTable,
    IcebergView,
    Namespace,
    Put,
    VersionStore,
)
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.results import KeyEntry, LogEntry

T = TypeVar("T")

#: Keys of Nessie's ``entriesRanges`` (k2 and k2.k3 are namespaces).
RANGE_KEYS = ["k1", "k2", "k2.a", "k2.aπ", "k2.πa", "k2.aa", "k2.k3", "k2.k3.a", "k2.k3.b", "k3"]


def pages(
    fetch: Callable[[str | None], Iterator[T]], token_of: Callable[[T], str], size: int
) -> list[list[T]]:
    """Read a listing page by page: each page is ``size`` entries, the next page starts at the token
    of the entry after the last one (tokens are inclusive)."""
    result: list[list[T]] = []
    token: str | None = None
    while True:
        chunk = list(itertools.islice(fetch(token), size + 1))
        result.append(chunk[:size])
        if len(chunk) <= size:
            return result
        token = token_of(chunk[size])


class VersionStoreReadsSuite(VersionStoreSuite):
    area = "versionstore.reads"

    # --- commit log ------------------------------------------------------------------------------

    def test_commit_log_paging(self, vs: VersionStore) -> None:
        """95 commits on one key. The log lists them newest first with hash and parent filled in; read
        in pages of 10 through paging tokens it yields exactly the same sequence; restarting the log
        at the last hash of each page (overlapping by one) yields the right slices, and the page after
        the last is just the first commit."""
        b = branch("commitLogPaging")
        parent = vs.create_reference(b).hash
        expected: list[tuple[ObjId, str, ObjId]] = []
        for i in range(95):
            message = f"commit#{i:05d}"
            existing = vs.get_value(parent, key("table"))
            content = table(message, existing.id if existing is not None else None)
            head = vs.commit(b, parent, CommitMeta(message), [Put(key("table"), content)]).hash
            expected.append((head, message, parent))
            parent = head
        expected.reverse()

        def summary(entries: list[LogEntry]) -> list[tuple[ObjId, str, ObjId]]:
            return [(e.hash, e.meta.message, e.parent) for e in entries]

        assert summary(list(itertools.islice(vs.get_commits(b), 2))) == expected[:2]
        assert summary(list(vs.get_commits(b))) == expected
        for e in itertools.islice(vs.get_commits(b), 3):
            assert e.meta.hash == str(e.hash)
            assert e.meta.parent_hashes == (str(e.parent),)

        paged = pages(lambda token: vs.get_commits(b, paging_token=token), lambda e: e.paging_token, 10)
        assert [len(p) for p in paged] == [10] * 9 + [5]
        assert summary([e for p in paged for e in p]) == expected

        offset, start = 0, None
        while True:
            where = b if start is None else start
            page = summary(list(itertools.islice(vs.get_commits(where), 10)))
            assert page == expected[offset : offset + 10]
            start = page[-1][0]
            offset += 9
            if offset >= len(expected):
                break
        assert summary(list(vs.get_commits(start))) == [expected[-1]]

    def test_commit_log_with_operations(self, vs: VersionStore) -> None:
        """Without operations the log carries none; with them each commit lists its Puts (with
        content) and Deletes in key order, Unchanged not included."""
        b = branch("commitLogExtended")
        first_parent = vs.create_reference(b).hash
        hashes = [self.commit(vs, b, *(Put(key(f"delete{i}"), table(f"to delete {i}")) for i in range(1, 6)))]
        for i in range(1, 6):
            hashes.append(
                self.commit(
                    vs,
                    b,
                    Put(key(f"k{i}"), table(f"v{i}")),
                    Put(key(f"key{i}"), table(f"value{i}")),
                    Delete(key(f"delete{i}")),
                    message=f"Commit #{i}",
                )
            )
        plain = list(reversed(list(vs.get_commits(b))))
        assert [e.hash for e in plain] == hashes
        assert all(e.operations is None for e in plain)
        assert [e.parent for e in plain] == [first_parent, *hashes[:-1]]

        detailed = list(reversed(list(vs.get_commits(b, with_operations=True))))
        for i in range(1, 6):
            ops = detailed[i].operations
            assert ops is not None
            summary = [
                (type(op).__name__, str(op.key), without_id(op.content) if isinstance(op, Put) else None)
                for op in ops
            ]
            assert summary == [
                ("Delete", f"delete{i}", None),
                ("Put", f"k{i}", table(f"v{i}")),
                ("Put", f"key{i}", table(f"value{i}")),
            ]
            puts = [op for op in ops if isinstance(op, Put)]
            assert all(op.content.id is not None for op in puts)

    def test_commit_log_of_the_empty_commit_is_empty(self, vs: VersionStore) -> None:
        """The empty commit is never listed."""
        assert list(vs.get_commits(MAIN)) == []
        assert list(vs.get_commits(EMPTY_OBJ_ID)) == []

    def test_commit_log_follows_first_parents_only(self, vs: VersionStore) -> None:
        """After a merge the target's log shows the merge commit and the target's own history, not the
        merged branch's commits; the merge commit names both parents."""
        base = self.commit(vs, MAIN, Put(key("a"), table("a")), message="base")
        feature = branch("feature")
        vs.create_reference(feature, base)
        on_feature = self.commit(vs, feature, Put(key("f"), table("f")), message="feature")
        on_main = self.commit(vs, MAIN, Put(key("m"), table("m")), message="main")
        merged = vs.merge(feature, MAIN).resultant_target_hash
        log = list(vs.get_commits(MAIN))
        assert [e.hash for e in log] == [merged, on_main, base]
        assert log[0].meta.parent_hashes == (str(on_main), str(on_feature))

    # --- key listings ----------------------------------------------------------------------------

    @pytest.fixture
    def ranges(self, vs: VersionStore) -> ObjId:
        b = branch("foo")
        vs.create_reference(b)
        ops = [Put(key(k), namespace(k) if k in ("k2", "k2.k3") else table(f"v{k}")) for k in RANGE_KEYS]
        return self.commit(vs, b, *ops)

    @staticmethod
    def listed(entries: Iterator[KeyEntry]) -> list[str]:
        return [str(e.key) for e in entries]

    def test_entries_in_key_order_with_unicode(self, vs: VersionStore, ranges: ObjId) -> None:
        """All keys, element-wise in UTF-8 byte order: k2.πa sorts after k2.k3 and its children."""
        assert self.listed(vs.get_entries(ranges)) == [
            "k1",
            "k2",
            "k2.a",
            "k2.aa",
            "k2.aπ",
            "k2.k3",
            "k2.k3.a",
            "k2.k3.b",
            "k2.πa",
            "k3",
        ]

    def test_entries_key_ranges(self, vs: VersionStore, ranges: ObjId) -> None:
        """min/max keys are inclusive and combine; a range that starts after it ends is empty."""
        k23 = key("k2.k3")
        assert self.listed(vs.get_entries(ranges, min_key=k23)) == [
            "k2.k3",
            "k2.k3.a",
            "k2.k3.b",
            "k2.πa",
            "k3",
        ]
        assert self.listed(vs.get_entries(ranges, max_key=k23)) == [
            "k1",
            "k2",
            "k2.a",
            "k2.aa",
            "k2.aπ",
            "k2.k3",
        ]
        assert self.listed(vs.get_entries(ranges, min_key=k23, max_key=key("k2.k3.a"))) == [
            "k2.k3",
            "k2.k3.a",
        ]
        assert self.listed(vs.get_entries(ranges, min_key=k23, max_key=k23)) == ["k2.k3"]
        with pytest.raises(ValueError, match=r"^'to' must be greater than 'from'"):
            list(vs.get_entries(ranges, min_key=key("k3"), max_key=key("k2")))
        assert self.listed(vs.get_entries(ranges, max_key=key("k"))) == []

    def test_entries_prefix_matches_whole_elements(self, vs: VersionStore, ranges: ObjId) -> None:
        """A prefix key lists itself and its descendants; "k" is no element prefix of "k1"."""
        assert self.listed(vs.get_entries(ranges, prefix_key=key("k2.k3"))) == ["k2.k3", "k2.k3.a", "k2.k3.b"]
        assert self.listed(vs.get_entries(ranges, prefix_key=key("k2"))) == [
            "k2",
            "k2.a",
            "k2.aa",
            "k2.aπ",
            "k2.k3",
            "k2.k3.a",
            "k2.k3.b",
            "k2.πa",
        ]
        assert self.listed(vs.get_entries(ranges, prefix_key=key("k"))) == []
        assert self.listed(vs.get_entries(ranges, prefix_key=key("x"))) == []

    def test_entries_filter(self, vs: VersionStore, ranges: ObjId) -> None:
        """A key filter keeps only the keys it accepts."""
        accepted = self.listed(vs.get_entries(ranges, key_filter=lambda k: str(k).startswith("k2")))
        assert accepted == ["k2", "k2.a", "k2.aa", "k2.aπ", "k2.k3", "k2.k3.a", "k2.k3.b", "k2.πa"]
        assert self.listed(vs.get_entries(ranges, key_filter=lambda k: False)) == []

    def test_entries_report_type_and_content_id(self, vs: VersionStore, ranges: ObjId) -> None:
        """Each entry names its content type (payload) and content id; content only when asked for."""
        by_key = {str(e.key): e for e in vs.get_entries(ranges)}
        assert by_key["k2"].payload == namespace("k2").PAYLOAD
        assert by_key["k1"].payload == table("x").PAYLOAD
        assert by_key["k1"].content is None
        assert by_key["k1"].content_id == self.content_id(vs, ranges, "k1")
        with_content = {str(e.key): e.content for e in vs.get_entries(ranges, with_content=True)}
        assert with_content == {k: vs.get_value(ranges, key(k)) for k in RANGE_KEYS}

    def test_combining_prefix_with_min_or_max_is_rejected(self, vs: VersionStore) -> None:
        """prefix_key excludes min_key and max_key."""
        foo = key("foo")
        message = exactly("Combining prefixKey with either minKey or maxKey is not supported.")
        for low, high in ((foo, foo), (None, foo), (foo, None)):
            with pytest.raises(ValueError, match=message):
                list(vs.get_entries(EMPTY_OBJ_ID, prefix_key=foo, min_key=low, max_key=high))

    def test_entries_paging(self, vs: VersionStore) -> None:
        """25 keys read in pages of 10 through paging tokens: 10, 10, 5, the same keys in the same
        order; a token also resumes a restricted listing; a token that is not hex is rejected."""
        self.commit(vs, MAIN, *(Put(key(f"key{i:02d}"), table(str(i))) for i in range(25)))
        paged = pages(lambda token: vs.get_entries(MAIN, paging_token=token), lambda e: e.paging_token, 10)
        assert [len(p) for p in paged] == [10, 10, 5]
        assert [str(e.key) for p in paged for e in p] == [f"key{i:02d}" for i in range(25)]
        entries = list(vs.get_entries(MAIN))
        resumed = vs.get_entries(MAIN, max_key=key("key14"), paging_token=entries[12].paging_token)
        assert self.listed(resumed) == ["key12", "key13", "key14"]
        with pytest.raises(ValueError, match="Invalid paging token 'zz'"):
            list(vs.get_entries(MAIN, paging_token="zz"))

    @pytest.mark.parametrize("count", [0, 1, 49, 50, 51, 100, 101])
    def test_entries_with_content_around_batch_sizes(self, vs: VersionStore, count: int) -> None:
        """Listing with content returns exactly the N keys and values (content is fetched in batches
        of 50, hence the counts around 50 and 100)."""
        b = branch("foo")
        head = vs.create_reference(b).hash
        expected = {f"key{i}": table(f"key{i}") for i in range(count)}
        if count:
            head = self.commit(vs, b, *(Put(key(k), v) for k, v in expected.items()))
        listed = {str(e.key): without_id(e.content) for e in vs.get_entries(head, with_content=True)}
        assert listed == expected

    def test_entries_after_a_delete(self, vs: VersionStore) -> None:
        """A deleted key disappears from listings at later commits and stays at earlier ones."""
        before = self.commit(
            vs,
            MAIN,
            Put(key("k2"), namespace("k2")),
            Put(key("k2.k3"), namespace("k2.k3")),
            Put(key("k2.a"), table("v2a")),
            Put(key("k2.k3.a"), table("v23a")),
        )
        after = self.commit(vs, MAIN, Delete(key("k2.a")))
        assert self.listed(vs.get_entries(before)) == ["k2", "k2.a", "k2.k3", "k2.k3.a"]
        assert self.listed(vs.get_entries(after)) == ["k2", "k2.k3", "k2.k3.a"]

    @pytest.mark.lochkit_requires("storage_access")
    def test_large_commit_spills_into_a_reference_index_and_reads_back(
        self, vs: VersionStore, persist: Persist
    ) -> None:
        """200 long keys in one commit make an incremental index beyond its size limit; the next
        commit moves them into an external reference index. Listings, reads, updates, deletes and
        diffs see every key either way."""
        # Distinct from their first character on, so the index cannot share key prefixes.
        names = [hashlib.sha256(str(i).encode()).hexdigest() * 4 for i in range(200)]
        big = self.commit(vs, MAIN, *(Put(key(n), table(f"s3://warehouse/{n}/metadata.json")) for n in names))
        assert (
            len(persist.fetch_as(big, CommitObj).incremental_index)
            > persist.effective_incremental_index_size_limit
        )
        small = self.commit(vs, MAIN, Put(key("x"), table("x")))
        assert persist.fetch_as(small, CommitObj).has_reference_index
        assert len(list(vs.get_entries(MAIN))) == 201
        sample = [key(n) for n in names[::7]]
        assert len(vs.get_values(MAIN, sample)) == len(sample)
        updated, deleted = names[42], names[43]
        cid = self.content_id(vs, MAIN, updated)
        last = self.commit(vs, MAIN, Put(key(updated), table("updated", cid)), Delete(key(deleted)))
        assert self.values(vs, MAIN, [updated, deleted]) == {updated: table("updated")}
        assert [str(d.key) for d in vs.get_diffs(big, last)] == sorted(["x", updated, deleted])
        assert len(list(vs.get_entries(big, with_content=True))) == 200

    # --- content reads ---------------------------------------------------------------------------

    def test_reading_absent_keys(self, vs: VersionStore) -> None:
        """Absent keys read as None / are left out of get_values, at the empty commit and at a real
        commit."""
        empty = vs.hash_on_reference(MAIN, None)
        assert vs.get_value(empty, key("key1")) is None
        assert vs.get_values(empty, [key("key1"), key("ns.key2")]) == {}
        head = self.commit(vs, MAIN, Put(key("ns"), namespace("ns")))
        assert vs.get_value(head, key("key1")) is None
        assert vs.get_values(head, [key("key1"), key("ns.key2")]) == {}
        assert vs.get_values(head, [key("ns"), key("key1")]) == {key("ns"): vs.get_value(head, key("ns"))}

    def test_values_read_at_a_commit_in_a_branch_history(self, vs: VersionStore) -> None:
        """hash_on_reference accepts a commit in the branch's history; reads there see that commit."""
        first = self.commit(vs, MAIN, Put(key("t"), table("v1")))
        cid = self.content_id(vs, MAIN, "t")
        self.commit(vs, MAIN, Put(key("t"), table("v2", cid)))
        assert vs.hash_on_reference(MAIN, first) == first
        assert without_id(vs.get_value(vs.hash_on_reference(MAIN, first), key("t"))) == table("v1")
        assert without_id(vs.get_value(MAIN, key("t"))) == table("v2")

    def test_all_content_types_round_trip(self, vs: VersionStore) -> None:
        """Tables, views and namespaces (with properties) read back equal, ids included."""
        written: dict[str, Content] = {
            "ns": Namespace(elements=("ns",), properties={"owner": "me", "π": "3.14"}),
            "ns.tbl": IcebergTable(
                metadata_location="s3://t", snapshot_id=42, schema_id=1, spec_id=2, sort_order_id=3
            ),
            "ns.view": IcebergView(
                metadata_location="s3://v", version_id=7, schema_id=1, sql_text="SELECT 1", dialect="spark"
            ),
        }
        result = vs.commit(MAIN, None, CommitMeta("c"), [Put(key(k), v) for k, v in written.items()])
        read = vs.get_values(MAIN, [key(k) for k in written])
        for k, content in written.items():
            ck: ContentKey = key(k)
            assert read[ck] == content.with_id(result.added_content_ids[ck])
