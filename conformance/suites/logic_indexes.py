"""Indexes of commits on a real backend: complete views, incremental indexes, reference indexes
loaded from stored segments, and spilling into striped reference indexes as keys accumulate."""

from __future__ import annotations

import uuid

import pytest

from conformance.suites.base import ConformanceSuite
from persist_spi.ids import EMPTY_OBJ_ID, ObjId, random_obj_id
from persist_spi.indexes.action import Action
from persist_spi.indexes.elements import CommitOp, IndexElement
from persist_spi.indexes.store_index import index_from_elements, new_index
from persist_spi.indexes.striped import StripedIndex
from persist_spi.keys import StoreKey, key
from persist_spi.logic.commit_logic import CommitLogic
from persist_spi.logic.create_commit import Add, CreateCommit, Remove
from persist_spi.logic.errors import IncompleteIndex
from persist_spi.logic.indexes import IndexesLogic
from persist_spi.objs import CommitObj, IndexObj, IndexSegmentsObj, content_value
from persist_spi.persist import Persist


def _op(action: Action, i: int) -> CommitOp:
    return CommitOp(action, 1, content_value(f"c{i}", 1, str(i).encode()).id, uuid.UUID(int=i + 1))


def _store_commit(persist: Persist, index: bytes, **fields: object) -> CommitObj:
    commit = CommitObj(id=random_obj_id(), seq=1, tail=(EMPTY_OBJ_ID,), incremental_index=index, **fields)  # type: ignore[arg-type]
    persist.store_obj(commit, ignore_soft_size_restrictions=True)
    return commit


def _realistic_keys(n: int) -> list[StoreKey]:
    """Namespaces, folders and tables with long-ish element names, like a real catalog."""
    keys = []
    for i in range(n):
        keys.append(
            key(f"namespace_{i % 7:02}_warehouse", f"folder_{(i // 7) % 11:03}_data", f"table_{i:06}_events")
        )
    return sorted(keys)


def _commit_many(
    logic: CommitLogic, count: int, per_commit: int = 25, remove_every: int = 0
) -> tuple[CommitObj, set[StoreKey]]:
    """Commit ``count`` keys in batches (optionally removing an earlier key now and then)."""
    keys = _realistic_keys(count)
    live: dict[StoreKey, ObjId] = {}
    head = EMPTY_OBJ_ID
    commit: CommitObj | None = None
    for start in range(0, count, per_commit):
        adds = []
        for i, k in enumerate(keys[start : start + per_commit], start=start):
            value = content_value(f"cid-{i}", 1, f"v{i}".encode()).id
            adds.append(Add(k, 1, value))
            live[k] = value
        removes = []
        if remove_every and start and (start // per_commit) % remove_every == 0:
            victim = sorted(live)[len(live) // 3]
            removes.append(Remove(victim, 1, live.pop(victim)))
        stored = logic.store_commit(
            logic.build_commit_obj(CreateCommit(head, adds=tuple(adds), removes=tuple(removes)))
        )
        commit = stored.commit
        assert commit is not None
        head = commit.id
    assert commit is not None
    return commit, set(live)


class LogicIndexesSuite(ConformanceSuite):
    area = "logic.indexes"

    @pytest.fixture
    def indexes(self, persist: Persist) -> IndexesLogic:
        return IndexesLogic(persist)

    def test_incremental_index_alone_is_complete_without_reference_index(
        self, persist: Persist, indexes: IndexesLogic
    ) -> None:
        index = index_from_elements(
            [
                IndexElement(key("foo", "bar"), _op(Action.ADD, 1)),
                IndexElement(key("baz"), _op(Action.REMOVE, 2)),
                IndexElement(key("meep"), _op(Action.INCREMENTAL_REMOVE, 3)),
            ]
        )
        commit = _store_commit(persist, index.serialize())
        complete = indexes.build_complete_index(persist.fetch_as(commit.id, CommitObj))
        assert [e.key for e in complete] == [key("baz"), key("foo", "bar"), key("meep")]
        assert list(complete) == list(index)  # element by element: keys, actions, ids
        for_update = indexes.incremental_index_for_update(commit)
        assert list(for_update) == [IndexElement(key("foo", "bar"), _op(Action.INCREMENTAL_ADD, 1))]

    def test_complete_index_layers_incremental_over_reference_index(
        self, persist: Persist, indexes: IndexesLogic
    ) -> None:
        reference = index_from_elements(
            [IndexElement(key(f"r{i:03}"), _op(Action.NONE, i)) for i in range(40)]
            + [IndexElement(key("i_remove"), _op(Action.NONE, 90))]
        )
        stripes = indexes.persist_index_stripes(reference.divide(4))
        incremental = index_from_elements(
            [
                IndexElement(key("d_add"), _op(Action.ADD, 100)),
                IndexElement(key("d_remove"), _op(Action.REMOVE, 101)),
                IndexElement(key("i_add"), _op(Action.INCREMENTAL_ADD, 102)),
                IndexElement(key("i_remove"), _op(Action.INCREMENTAL_REMOVE, 103)),
            ]
        )
        commit = _store_commit(persist, incremental.serialize(), reference_index_stripes=tuple(stripes))
        complete = indexes.build_complete_index(persist.fetch_as(commit.id, CommitObj))
        assert list(indexes.incremental_index_from_commit(commit)) == list(incremental)  # all 4 raw ops
        assert complete.first() == key("d_add")
        assert complete.last() == key("r039")
        # 41 reference elements plus d_add, d_remove and i_add; i_remove shadows its reference entry.
        assert len(list(complete)) == 44
        live = [e.key for e in complete if e.op.exists]
        assert live == sorted([key(f"r{i:03}") for i in range(40)] + [key("d_add"), key("i_add")])
        assert complete.get(key("i_remove")) is not None  # the tombstone is returned as-is
        assert not complete.get(key("i_remove")).op.exists  # type: ignore[union-attr]
        assert [e.key for e in indexes.commit_operations(commit)] == [key("d_add"), key("d_remove")]
        for_update = {e.key: e.op.action for e in indexes.incremental_index_for_update(commit)}
        assert for_update == {
            key("d_add"): Action.INCREMENTAL_ADD,
            key("d_remove"): Action.INCREMENTAL_REMOVE,
            key("i_add"): Action.INCREMENTAL_ADD,
            key("i_remove"): Action.INCREMENTAL_REMOVE,
        }

    def test_reference_index_round_trips_through_stored_segments(
        self, persist: Persist, indexes: IndexesLogic
    ) -> None:
        source = index_from_elements(
            [IndexElement(k, _op(Action.NONE, i)) for i, k in enumerate(_realistic_keys(500))]
        )
        parts = source.divide(5)
        stripes = indexes.persist_index_stripes(parts)
        commit = _store_commit(persist, new_index().serialize(), reference_index_stripes=tuple(stripes))
        reference = indexes.build_reference_index_only(commit)
        assert isinstance(reference, StripedIndex)
        assert not reference.is_loaded
        assert reference.first() == source.first()
        assert reference.last() == source.last()
        assert not reference.is_loaded  # first/last come from the stripe descriptors
        assert len(reference.stripes()) == 5
        assert [list(s) for s in reference.stripes()] == [list(p) for p in parts]
        assert reference.keys() == source.keys()

    def test_lookups_load_only_the_stripes_they_need(self, persist: Persist, indexes: IndexesLogic) -> None:
        keys = _realistic_keys(300)
        source = index_from_elements([IndexElement(k, _op(Action.NONE, i)) for i, k in enumerate(keys)])
        stripes = indexes.persist_index_stripes(source.divide(6))
        reference = indexes.build_reference_index_only(
            _store_commit(persist, new_index().serialize(), reference_index_stripes=tuple(stripes))
        )
        assert reference is not None
        assert reference.get(key("aaa")) is None  # before the first stripe: nothing loaded
        assert not reference.is_loaded
        reference.load_if_necessary([keys[5], keys[6]])
        loaded = [s.is_loaded for s in reference.stripes()]
        assert loaded == [True, False, False, False, False, False]
        assert reference.get(keys[299]) is not None
        assert [s.is_loaded for s in reference.stripes()][-1]

    def test_a_missing_reference_index_segment_is_reported(
        self, persist: Persist, indexes: IndexesLogic
    ) -> None:
        source = index_from_elements([IndexElement(key(f"k{i}"), _op(Action.NONE, i)) for i in range(20)])
        stripes = indexes.persist_index_stripes(source.divide(2))
        persist.delete_obj(stripes[0].segment)
        commit = _store_commit(persist, new_index().serialize(), reference_index_stripes=tuple(stripes))
        reference = indexes.build_reference_index_only(commit)
        assert reference is not None
        with pytest.raises(RuntimeError, match="does not exist"):
            reference.keys()
        gone = random_obj_id()
        with pytest.raises(RuntimeError, match="references a reference index, which does not exist"):
            indexes.build_reference_index_only(
                _store_commit(persist, new_index().serialize(), reference_index=gone)
            )

    def test_commits_with_incomplete_indexes_cannot_be_built_upon(
        self, persist: Persist, indexes: IndexesLogic
    ) -> None:
        commit = _store_commit(persist, new_index().serialize(), incomplete_index=True)
        with pytest.raises(IncompleteIndex, match="has no complete key index"):
            indexes.build_complete_index(commit)
        with pytest.raises(IncompleteIndex, match="has no complete key index"):
            indexes.incremental_index_for_update(commit)

    @pytest.mark.store_config(max_incremental_index_size=2048, max_serialized_index_size=8192)
    def test_growing_key_set_spills_into_a_striped_reference_index(self, persist: Persist) -> None:
        logic = CommitLogic(persist)
        head, live = _commit_many(logic, 600, remove_every=3)
        assert len(head.incremental_index) <= persist.effective_incremental_index_size_limit
        assert len(head.reference_index_stripes) > 1
        assert len(head.reference_index_stripes) <= persist.config.max_reference_stripes_per_commit
        complete = logic.indexes.build_complete_index(head)
        assert {e.key for e in complete if e.op.exists} == live
        for stripe in head.reference_index_stripes:
            segment = persist.fetch_as(stripe.segment, IndexObj)
            assert len(segment.index) <= persist.effective_index_segment_size_limit

    @pytest.mark.store_config(
        max_incremental_index_size=1024, max_serialized_index_size=2048, max_reference_stripes_per_commit=5
    )
    def test_more_stripes_than_embeddable_go_to_an_index_segments_object(self, persist: Persist) -> None:
        logic = CommitLogic(persist)
        head, live = _commit_many(logic, 400, per_commit=10)
        assert head.reference_index is not None
        assert head.reference_index_stripes == ()
        segments = persist.fetch_as(head.reference_index, IndexSegmentsObj)
        assert len(segments.stripes) > 5
        assert {e.key for e in logic.indexes.build_complete_index(head) if e.op.exists} == live

    @pytest.mark.store_config(max_incremental_index_size=1024, max_serialized_index_size=4096)
    def test_deleting_every_key_empties_the_reference_index(self, persist: Persist) -> None:
        logic = CommitLogic(persist)
        head, live = _commit_many(logic, 120, per_commit=20)
        assert head.has_reference_index
        current = head
        values = {e.key: e.op for e in logic.indexes.build_complete_index(head) if e.op.exists}
        doomed = sorted(live)
        for start in range(0, len(doomed), 20):
            removes = tuple(Remove(k, 1, values[k].value) for k in doomed[start : start + 20])  # type: ignore[arg-type]
            stored = logic.store_commit(logic.build_commit_obj(CreateCommit(current.id, removes=removes)))
            assert stored.commit is not None
            current = stored.commit
        assert [e for e in logic.indexes.build_complete_index(current) if e.op.exists] == []

    @pytest.mark.store_config(max_incremental_index_size=2048, max_serialized_index_size=8192)
    def test_spilling_is_deterministic(self, persist: Persist) -> None:
        """Storing the same logical commit twice (a retry) yields an equal object."""
        logic = CommitLogic(persist)
        head, _ = _commit_many(logic, 200)
        adds = tuple(Add(key(f"zz-{i:04}"), 1, content_value(f"z{i}", 1, b"z").id) for i in range(60))
        commit = logic.build_commit_obj(CreateCommit(head.id, adds=adds))
        first = logic.spill(commit)
        second = logic.spill(commit)
        assert first == second
