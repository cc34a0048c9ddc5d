"""Version-store diff: the keys whose content differs between two references or commits, in key
order, each with its "from" and "to" content (None where absent), restricted by key range, prefix
or filter, and resumable with paging tokens.

A rename shows as a removal of the old key and an addition of the new one (same content id); a
drop-and-create under one key shows as one entry whose two sides have different content ids.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.suites.versionstore_base import (
    MAIN,
    VersionStoreSuite,
    exactly,
    key,
    table,
    without_id,
)
from persist_spi.ids import ObjId
from persist_spi.versionstore import Content, ContentKey, Delete, Put, VersionStore
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.results import Diff

Row = tuple[str, Content | None, Content | None]


def rows(diffs: Iterator[Diff]) -> list[Row]:
    """(key, from content, to content) with contents without ids."""
    return [(str(d.key), without_id(d.from_content), without_id(d.to_content)) for d in diffs]


def keys_of(diffs: Iterator[Diff]) -> list[str]:
    return [str(d.key) for d in diffs]


class VersionStoreDiffSuite(VersionStoreSuite):
    area = "versionstore.diff"

    @pytest.fixture
    def history(self, vs: VersionStore) -> tuple[ObjId, ObjId, ObjId]:
        """initial (empty) -> first (k1, k2) -> second (k2 updated, k3 and k1a added)."""
        b = branch("checkDiff")
        initial = vs.create_reference(b).hash
        first = self.commit(vs, b, Put(key("k1"), table("v1")), Put(key("k2"), table("v2")))
        k2 = self.content_id(vs, b, "k2")
        second = self.commit(
            vs,
            b,
            Put(key("k2"), table("v2a", k2)),
            Put(key("k3"), table("v3")),
            Put(key("k1a"), table("v1a")),
        )
        return initial, first, second

    def test_diff_adds_removes_and_changes(
        self, vs: VersionStore, history: tuple[ObjId, ObjId, ObjId]
    ) -> None:
        """From the empty commit everything is added, the reverse removes everything; between two
        commits only added and changed keys appear; a commit against itself has no diff."""
        initial, first, second = history
        assert rows(vs.get_diffs(initial, second)) == [
            ("k1", None, table("v1")),
            ("k1a", None, table("v1a")),
            ("k2", None, table("v2a")),
            ("k3", None, table("v3")),
        ]
        assert rows(vs.get_diffs(second, initial)) == [
            ("k1", table("v1"), None),
            ("k1a", table("v1a"), None),
            ("k2", table("v2a"), None),
            ("k3", table("v3"), None),
        ]
        assert rows(vs.get_diffs(first, second)) == [
            ("k1a", None, table("v1a")),
            ("k2", table("v2"), table("v2a")),
            ("k3", None, table("v3")),
        ]
        assert rows(vs.get_diffs(second, first)) == [
            ("k1a", table("v1a"), None),
            ("k2", table("v2a"), table("v2")),
            ("k3", table("v3"), None),
        ]
        assert rows(vs.get_diffs(first, first)) == []

    def test_diff_key_ranges(self, vs: VersionStore, history: tuple[ObjId, ObjId, ObjId]) -> None:
        """min/max keys are inclusive, alone or combined; a range holding no key is empty."""
        initial, _, second = history

        def diff_keys(min_key: ContentKey | None = None, max_key: ContentKey | None = None) -> list[str]:
            return keys_of(vs.get_diffs(initial, second, min_key=min_key, max_key=max_key))

        assert diff_keys(min_key=key("k"), max_key=key("l")) == ["k1", "k1a", "k2", "k3"]
        assert diff_keys(min_key=key("k")) == ["k1", "k1a", "k2", "k3"]
        assert diff_keys(max_key=key("k2")) == ["k1", "k1a", "k2"]
        assert diff_keys(min_key=key("k1a"), max_key=key("k2")) == ["k1a", "k2"]
        assert diff_keys(min_key=key("k2"), max_key=key("k2")) == ["k2"]
        assert diff_keys(min_key=key("k4"), max_key=key("l")) == []

    def test_diff_prefix_and_filter(self, vs: VersionStore, history: tuple[ObjId, ObjId, ObjId]) -> None:
        """A prefix matches whole elements ("k1" is not a prefix of "k1a", "k" matches nothing); a key
        filter keeps the keys it accepts; prefix and min/max do not combine."""
        initial, _, second = history
        assert keys_of(vs.get_diffs(initial, second, prefix_key=key("k1"))) == ["k1"]
        assert keys_of(vs.get_diffs(initial, second, prefix_key=key("k"))) == []
        assert keys_of(vs.get_diffs(initial, second, prefix_key=key("x"))) == []
        wanted = {"k1", "k3"}
        assert keys_of(vs.get_diffs(initial, second, key_filter=lambda k: str(k) in wanted)) == ["k1", "k3"]
        assert keys_of(vs.get_diffs(initial, second, key_filter=lambda k: False)) == []
        with pytest.raises(
            ValueError, match=exactly("Combining prefixKey with either minKey or maxKey is not supported.")
        ):
            list(vs.get_diffs(initial, second, prefix_key=key("k1"), min_key=key("k1")))

    def test_diff_paging(self, vs: VersionStore, history: tuple[ObjId, ObjId, ObjId]) -> None:
        """A diff entry's paging token resumes the diff at that entry."""
        initial, _, second = history
        diffs = list(vs.get_diffs(initial, second))
        assert keys_of(vs.get_diffs(initial, second, paging_token=diffs[2].paging_token)) == ["k2", "k3"]
        assert keys_of(vs.get_diffs(initial, second, paging_token=diffs[0].paging_token)) == keys_of(
            iter(diffs)
        )

    def test_diff_between_branches_with_different_contents(self, vs: VersionStore) -> None:
        """Two unrelated branches holding the same keys with other contents: both keys, with both
        sides."""
        b1, b2 = branch("checkDiffOtherContent1"), branch("checkDiffOtherContent2")
        vs.create_reference(b1)
        vs.create_reference(b2)
        c1 = self.commit(vs, b1, Put(key("k1"), table("v1")), Put(key("k2"), table("v2")))
        c2 = self.commit(
            vs, b2, Put(key("k1"), table("foo", snapshot=42)), Put(key("k2"), table("bar", snapshot=42))
        )
        assert rows(vs.get_diffs(c1, c2)) == [
            ("k1", table("v1"), table("foo", snapshot=42)),
            ("k2", table("v2"), table("bar", snapshot=42)),
        ]
        assert rows(vs.get_diffs(b1, b2)) == rows(vs.get_diffs(c1, c2))

    def test_diff_shows_a_rename_as_removal_and_addition_with_one_content_id(self, vs: VersionStore) -> None:
        """k1 renamed to k2: k1 removed, k2 added, both sides carrying the same content id."""
        c1 = self.commit(vs, MAIN, Put(key("k1"), table("v1")))
        content = vs.get_value(c1, key("k1"))
        assert content is not None
        c2 = self.commit(vs, MAIN, Delete(key("k1")), Put(key("k2"), content))
        diffs = list(vs.get_diffs(c1, c2))
        assert rows(iter(diffs)) == [("k1", table("v1"), None), ("k2", None, table("v1"))]
        assert diffs[0].from_content is not None
        assert diffs[1].to_content is not None
        assert diffs[0].from_content.id == diffs[1].to_content.id == content.id

    def test_diff_of_drop_and_create_shows_two_contents(self, vs: VersionStore) -> None:
        """Dropping k1 and creating k2 in one commit: two entries with distinct content ids."""
        c1 = self.commit(vs, MAIN, Put(key("k1"), table("v1")))
        c2 = self.commit(vs, MAIN, Delete(key("k1")), Put(key("k2"), table("v2")))
        diffs = list(vs.get_diffs(c1, c2))
        assert rows(iter(diffs)) == [("k1", table("v1"), None), ("k2", None, table("v2"))]
        assert diffs[0].from_content is not None
        assert diffs[1].to_content is not None
        assert diffs[0].from_content.id != diffs[1].to_content.id

    def test_diff_of_a_readded_key_is_one_entry_with_two_content_ids(self, vs: VersionStore) -> None:
        """k deleted and re-created in later commits: one entry for k, old and new content, whose
        content ids differ."""
        c1 = self.commit(vs, MAIN, Put(key("k"), table("v1")))
        self.commit(vs, MAIN, Delete(key("k")))
        c3 = self.commit(vs, MAIN, Put(key("k"), table("v2")))
        diffs = list(vs.get_diffs(c1, c3))
        assert rows(iter(diffs)) == [("k", table("v1"), table("v2"))]
        assert diffs[0].from_content is not None
        assert diffs[0].to_content is not None
        assert diffs[0].from_content.id != diffs[0].to_content.id

    def test_diff_ignores_keys_with_identical_content(self, vs: VersionStore) -> None:
        """An update that writes the same content again changes nothing: no diff entry."""
        c1 = self.commit(vs, MAIN, Put(key("k"), table("v1")), Put(key("other"), table("o")))
        cid = self.content_id(vs, MAIN, "k")
        c2 = self.commit(vs, MAIN, Put(key("k"), table("v1", cid)))
        assert c2 != c1
        assert rows(vs.get_diffs(c1, c2)) == []
