"""Indexes of commits: the complete key view of a commit, the index a child commit starts from,
loading reference indexes, and persisting spilled reference-index stripes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from persist_spi.errors import ObjNotFound
from persist_spi.ids import ObjId
from persist_spi.indexes.action import Action
from persist_spi.indexes.base import StoreIndex
from persist_spi.indexes.elements import IndexElement
from persist_spi.indexes.layered import LayeredIndex
from persist_spi.indexes.lazy import LazyIndex
from persist_spi.indexes.store_index import EMPTY_IMMUTABLE_INDEX, StoreIndexImpl, deserialize_index_cached
from persist_spi.indexes.striped import LazyStripes, StripedIndex
from persist_spi.logic.errors import IncompleteIndex, MissingReferenceIndex
from persist_spi.objs import (
    CommitObj,
    IndexObj,
    IndexSegmentsObj,
    IndexStripe,
    Obj,
    index_obj,
    index_segments,
)
from persist_spi.persist import Persist

#: How a child's index treats its parent's elements. ADD becomes INCREMENTAL_ADD; removals stay
#: (as INCREMENTAL_REMOVE) only as tombstones over a reference index, otherwise they are dropped.
_CARRY_OVER_WITH_REFERENCE: dict[Action, Action | None] = {
    Action.ADD: Action.INCREMENTAL_ADD,
    Action.REMOVE: Action.INCREMENTAL_REMOVE,
}
_CARRY_OVER_WITHOUT_REFERENCE: dict[Action, Action | None] = {
    Action.ADD: Action.INCREMENTAL_ADD,
    Action.REMOVE: None,
    Action.INCREMENTAL_REMOVE: None,
}


class IndexesLogic:
    def __init__(self, persist: Persist) -> None:
        self.persist = persist

    # --- reading ---------------------------------------------------------------------------------

    def incremental_index_from_commit(self, commit: CommitObj) -> StoreIndexImpl:
        return deserialize_index_cached(commit.incremental_index)

    def build_complete_index(self, commit: CommitObj, incremental: StoreIndex | None = None) -> StoreIndex:
        """Every key of the commit's tree: the incremental index over the reference index."""
        _check_complete(commit)
        incremental = incremental if incremental is not None else self.incremental_index_from_commit(commit)
        reference = self.build_reference_index_only(commit)
        return incremental if reference is None else LayeredIndex(reference, incremental)

    def build_complete_index_or_empty(self, commit: CommitObj | None) -> StoreIndex:
        return EMPTY_IMMUTABLE_INDEX if commit is None else self.build_complete_index(commit)

    def build_reference_index_only(self, commit: CommitObj) -> StoreIndex | None:
        if commit.reference_index_stripes:
            return self._index_from_stripes(commit.reference_index_stripes)
        if commit.reference_index is not None:
            return self._load_reference_index(commit.reference_index, commit.id)
        return None

    def incremental_index_for_update(
        self, commit: CommitObj, incremental: StoreIndexImpl | None = None
    ) -> StoreIndexImpl:
        """The index a child of ``commit`` starts from: this commit's own operations become
        "incremental"; removals are kept only as tombstones over a reference index."""
        _check_complete(commit)
        has_reference = commit.has_reference_index
        index = incremental if incremental is not None else self.incremental_index_from_commit(commit)

        index.rewrite_actions(_CARRY_OVER_WITH_REFERENCE if has_reference else _CARRY_OVER_WITHOUT_REFERENCE)
        return index

    def commit_operations(self, commit: CommitObj) -> list[IndexElement]:
        """The operations of this commit itself (ADD / REMOVE), in key order."""
        return [e for e in self.incremental_index_from_commit(commit) if e.op.action.current_commit]

    def _load_reference_index(self, index_id: ObjId, commit_id: ObjId) -> StoreIndex:
        found = self.persist.fetch_typed_objs_if_exist([index_id], None)[0]
        if isinstance(found, IndexSegmentsObj):
            return self._index_from_stripes(found.stripes)
        if isinstance(found, IndexObj):  # older layout: a single segment
            loaded = deserialize_index_cached(found.index)
            loaded.obj_id = found.id
            return loaded
        raise MissingReferenceIndex(
            f"Commit {commit_id} references a reference index, which does not exist: {index_id}"
        )

    def _index_from_stripes(self, stripes: Sequence[IndexStripe]) -> StoreIndex:
        if len(stripes) == 1:
            stripe = stripes[0]
            return LazyIndex(
                lambda: self.load_segments([stripe.segment])[0],
                stripe.first_key,
                stripe.last_key,
                stripe.segment,
            )

        def make(i: int) -> LazyIndex:
            s = stripes[i]
            return LazyIndex(self._single_loader(s.segment), s.first_key, s.last_key, s.segment)

        first_last = [k for s in stripes for k in (s.first_key, s.last_key)]
        return StripedIndex(LazyStripes(len(stripes), make), first_last, self._bulk_load)

    def _single_loader(self, segment: ObjId) -> Callable[[], StoreIndex]:
        return lambda: self.load_segments([segment])[0]

    def _bulk_load(self, stripes: Sequence[LazyIndex]) -> list[StoreIndex]:
        return list(self.load_segments([s.obj_id for s in stripes if s.obj_id is not None]))

    def load_segments(self, ids: Sequence[ObjId]) -> list[StoreIndexImpl]:
        """Fetch and decode index segments in one bulk read."""
        try:
            objs = self.persist.fetch_all_as(list(ids), IndexObj)
        except ObjNotFound as e:
            raise MissingReferenceIndex(
                f"A reference index segment does not exist: {', '.join(str(i) for i in e.obj_ids)}"
            ) from e
        result = []
        for obj in objs:
            assert obj is not None
            index = deserialize_index_cached(obj.index)
            index.obj_id = obj.id
            result.append(index)
        return result

    # --- writing ---------------------------------------------------------------------------------

    def stripes_to_persist(self, stripes: Sequence[StoreIndex]) -> tuple[list[IndexStripe], list[Obj]]:
        """Stripe descriptors for ``stripes``; modified ones become new IndexObjs (returned for
        storing), unmodified ones keep the segment they were loaded from."""
        descriptors: list[IndexStripe] = []
        to_store: list[Obj] = []
        for stripe in stripes:
            first, last = stripe.first(), stripe.last()
            if first is None or last is None:
                raise ValueError("Cannot persist an empty index stripe")
            if stripe.is_modified or stripe.obj_id is None:
                segment = index_obj(stripe.serialize())
                to_store.append(segment)
                segment_id = segment.id
            else:
                segment_id = stripe.obj_id
            descriptors.append(IndexStripe(first, last, segment_id))
        return descriptors, to_store

    def persist_index_stripes(self, stripes: Sequence[StoreIndex]) -> list[IndexStripe]:
        descriptors, to_store = self.stripes_to_persist(stripes)
        self.persist.store_objs(to_store)
        return descriptors

    def persist_striped_index(self, stripes: Sequence[StoreIndex]) -> ObjId:
        """Store the stripes and an IndexSegmentsObj listing them; returns the latter's id."""
        descriptors, to_store = self.stripes_to_persist(stripes)
        segments = index_segments(descriptors)
        self.persist.store_objs([*to_store, segments])
        return segments.id


def _check_complete(commit: CommitObj) -> None:
    if commit.incomplete_index:
        raise IncompleteIndex(f"Commit {commit.id} has no complete key index")
