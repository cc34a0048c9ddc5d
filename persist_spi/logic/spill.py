"""Spilling: when a commit's incremental index is over its size limit, move everything that is not
this commit's own operation into the reference index (external, striped segments).

Deterministic: spilling the same commit twice gives equal objects, so a retried store is harmless.
"""

from __future__ import annotations

import dataclasses

from persist_spi.ids import ObjId
from persist_spi.indexes.action import Action
from persist_spi.indexes.base import StoreIndex
from persist_spi.indexes.elements import IndexElement
from persist_spi.indexes.lazy import LazyIndex
from persist_spi.indexes.store_index import StoreIndexImpl, new_index
from persist_spi.indexes.striped import StripedIndex
from persist_spi.logic.indexes import IndexesLogic
from persist_spi.objs import CommitObj, IndexStripe
from persist_spi.persist import Persist


def spill_incremental_index(persist: Persist, indexes: IndexesLogic, commit: CommitObj) -> CommitObj:
    new_incremental = new_index()
    if commit.has_reference_index:
        stripes = _update_reference_index(persist, indexes, commit, new_incremental)
    else:
        stripes = _new_reference_index(persist, indexes, commit, new_incremental)

    reference_index: ObjId | None = None
    reference_stripes: tuple[IndexStripe, ...] = ()
    if stripes:  # empty when every key was deleted
        if len(stripes) <= persist.config.max_reference_stripes_per_commit:
            reference_stripes = tuple(indexes.persist_index_stripes(stripes))
        else:
            reference_index = indexes.persist_striped_index(stripes)
    return dataclasses.replace(
        commit,
        incremental_index=new_incremental.serialize(),
        reference_index=reference_index,
        reference_index_stripes=reference_stripes,
    )


def _new_reference_index(
    persist: Persist, indexes: IndexesLogic, commit: CommitObj, new_incremental: StoreIndexImpl
) -> list[StoreIndex]:
    """No reference index yet: carried-over elements fill stripes of half the segment limit."""
    new_segment_size = persist.effective_index_segment_size_limit // 2
    stripes: list[StoreIndex] = []
    current = new_index()
    for element in indexes.incremental_index_from_commit(commit):
        op = element.op
        if op.action.current_commit:
            new_incremental.add(element)
        else:
            current.add(IndexElement(element.key, op.with_action(Action.NONE)))
        if current.estimated_serialized_size() > new_segment_size:
            stripes.append(current)
            current = new_index()
    if current.element_count() > 0:
        stripes.append(current)
    return stripes


def _update_reference_index(
    persist: Persist, indexes: IndexesLogic, commit: CommitObj, new_incremental: StoreIndexImpl
) -> list[StoreIndex]:
    """Fold carried-over elements into the existing stripes; split stripes that grew too big and
    drop stripes that became empty. Untouched stripes keep their segment."""
    max_size = persist.effective_index_segment_size_limit
    new_segment_size = max_size // 2
    reference = indexes.build_reference_index_only(commit)
    assert reference is not None
    incremental = indexes.incremental_index_from_commit(commit)
    carried = [e for e in incremental if not e.op.action.current_commit]
    if isinstance(reference, StripedIndex):
        reference.load_for_write([e.key for e in carried])
    for element in incremental:
        op = element.op
        if op.action.current_commit:
            new_incremental.add(element)
        elif op.action.exists:
            reference.add(IndexElement(element.key, op.with_action(Action.NONE)))
        else:
            reference.remove(element.key)

    stripes: list[StoreIndex] = []
    for stripe in reference.stripes():
        if not stripe.is_modified:
            stripes.append(stripe)
        elif stripe.estimated_serialized_size() > max_size:
            parts = max(stripe.estimated_serialized_size() // new_segment_size + 1, 2)
            loaded = stripe if isinstance(stripe, StoreIndexImpl) else _loaded(stripe)
            stripes.extend(loaded.divide(min(parts, max(1, loaded.element_count()))))
        elif stripe.element_count() > 0:
            stripes.append(stripe)
    return stripes


def _loaded(stripe: StoreIndex) -> StoreIndexImpl:
    if isinstance(stripe, LazyIndex):
        inner = stripe.loaded()
        if isinstance(inner, StoreIndexImpl):
            return inner
    raise TypeError(f"Cannot split a {type(stripe).__name__}")
