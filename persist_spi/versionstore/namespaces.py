"""Namespace validation: new content needs its parent namespaces, namespaces may only be dropped
when empty, and a non-namespace can never act as a namespace."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from persist_spi.indexes.base import StoreIndex
from persist_spi.keys import StoreKey
from persist_spi.versionstore.content import NAMESPACE_PAYLOAD, ContentKey
from persist_spi.versionstore.errors import Conflict, ConflictType
from persist_spi.versionstore.keymap import from_store_key, store_key_min, to_store_key


def namespace_conflicts(
    head: StoreIndex,
    created: Collection[ContentKey],
    added_namespaces: Collection[ContentKey],
    deleted: Mapping[ContentKey, int],
) -> list[Conflict]:
    """Conflicts of a commit that creates ``created`` keys (new at their key), adds
    ``added_namespaces`` and deletes ``deleted`` (key -> payload it had), against ``head``."""
    conflicts: list[Conflict] = []
    namespaces_here = set(added_namespaces)
    head.load_if_necessary(
        [to_store_key(p) for k in created for p in _parents(k)] + [to_store_key(k) for k in deleted]
    )
    for key in created:
        for parent in _parents(key):
            if parent in namespaces_here:
                break
            element = None if parent in deleted else head.get(to_store_key(parent))
            if element is None or not element.op.exists:
                conflicts.append(Conflict.of(ConflictType.NAMESPACE_ABSENT, parent))
                continue
            if element.op.payload != NAMESPACE_PAYLOAD:
                conflicts.append(Conflict.of(ConflictType.NOT_A_NAMESPACE, parent))
            break
    for key, payload in deleted.items():
        if payload != NAMESPACE_PAYLOAD:
            continue
        children = StoreKey(store_key_min(key) + "\x01")
        for element in head.iterate(children, children):
            if not element.op.exists:
                continue
            child = from_store_key(element.key)
            if child is not None and child not in deleted:
                conflicts.append(Conflict.of(ConflictType.NAMESPACE_NOT_EMPTY, key))
                break
    return conflicts


def _parents(key: ContentKey) -> list[ContentKey]:
    """Parents, nearest first."""
    return [ContentKey(key.elements[:n]) for n in range(len(key.elements) - 1, 0, -1)]
