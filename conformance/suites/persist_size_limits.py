"""Size limits: soft limits on index bytes (which drive index spilling) and the database's hard limit.
Both are checked before anything of the request is written."""

from __future__ import annotations

import os

import pytest

from conformance.harness import BackendUnderTest, PersistFactory
from conformance.suites.base import ConformanceSuite
from persist_spi.errors import ObjNotFound, ObjTooLarge
from persist_spi.ids import EMPTY_OBJ_ID, random_obj_id
from persist_spi.objs import CommitObj, content_value, index_obj, tag_obj
from persist_spi.persist import Persist

#: What 25 index entries of about 80 bytes serialise to: above the 1 KiB limits used below.
OVERSIZED_INDEX = os.urandom(25 * 80)


def _commit_with_index(index: bytes) -> CommitObj:
    return CommitObj(id=random_obj_id(), seq=1, tail=(EMPTY_OBJ_ID,), incremental_index=index)


@pytest.mark.store_config(max_incremental_index_size=1024, max_serialized_index_size=1024)
class PersistSizeLimitsSuite(ConformanceSuite):
    area = "persist.size-limits"

    def test_index_segment_above_soft_limit_is_rejected(self, persist: Persist) -> None:
        segment = index_obj(OVERSIZED_INDEX)
        with pytest.raises(ObjTooLarge) as e:
            persist.store_obj(segment)
        assert (e.value.size, e.value.limit) == (len(OVERSIZED_INDEX), 1024)
        with pytest.raises(ObjTooLarge):
            persist.store_objs([segment])
        with pytest.raises(ObjNotFound):
            persist.fetch_obj(segment.id)

    def test_commit_with_incremental_index_above_soft_limit_is_rejected(self, persist: Persist) -> None:
        commit = _commit_with_index(OVERSIZED_INDEX)
        with pytest.raises(ObjTooLarge):
            persist.store_obj(commit)
        with pytest.raises(ObjTooLarge):
            persist.store_objs([commit])
        with pytest.raises(ObjTooLarge):
            persist.upsert_obj(commit)
        with pytest.raises(ObjTooLarge):
            persist.upsert_objs([commit])
        with pytest.raises(ObjNotFound):
            persist.fetch_obj(commit.id)

    def test_soft_limit_can_be_ignored_on_request(self, persist: Persist) -> None:
        """The commit logic re-stores a commit this way after spilling its index."""
        commit = _commit_with_index(OVERSIZED_INDEX)
        assert persist.store_obj(commit, ignore_soft_size_restrictions=True) is True
        assert persist.fetch_obj(commit.id) == commit

    def test_objects_at_the_soft_limit_are_accepted(self, persist: Persist) -> None:
        commit = _commit_with_index(os.urandom(1024))
        segment = index_obj(os.urandom(1024))
        assert persist.store_objs([commit, segment]) == [True, True]

    def test_soft_limits_do_not_apply_to_other_types(self, persist: Persist) -> None:
        value = content_value("cid", 1, OVERSIZED_INDEX * 4)
        assert persist.store_obj(value) is True

    def test_a_too_large_object_in_a_batch_means_nothing_is_written(self, persist: Persist) -> None:
        small = tag_obj("small")
        big = index_obj(OVERSIZED_INDEX)
        with pytest.raises(ObjTooLarge):
            persist.store_objs([small, big])
        assert persist.fetch_objs_if_exist([small.id, big.id]) == [None, None]

    @pytest.mark.lochkit_requires("hard_object_size_limit")
    def test_object_above_the_database_limit_is_rejected(
        self, persist: Persist, lochkit_backend: BackendUnderTest
    ) -> None:
        limit = lochkit_backend.capabilities.hard_object_size_limit
        assert limit is not None
        fits = content_value("fits", 1, os.urandom(int(limit * 0.85)))
        assert persist.store_obj(fits) is True
        assert persist.store_objs([content_value("fits-too", 1, os.urandom(int(limit * 0.85)))]) == [True]
        too_big = content_value("too-big", 1, os.urandom(limit + 1))
        with pytest.raises(ObjTooLarge):
            persist.store_obj(too_big)
        with pytest.raises(ObjTooLarge):
            persist.store_objs([too_big])
        with pytest.raises(ObjNotFound):
            persist.fetch_obj(too_big.id)

    @pytest.mark.lochkit_requires("hard_object_size_limit")
    def test_index_limits_are_half_the_database_limit(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        limit = lochkit_backend.capabilities.hard_object_size_limit
        assert limit is not None
        persist = persist_factory(max_incremental_index_size=10 * limit, max_serialized_index_size=10 * limit)
        assert persist.effective_incremental_index_size_limit == limit // 2
        assert persist.effective_index_segment_size_limit == limit // 2
