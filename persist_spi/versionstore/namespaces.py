"""Namespace validation: new content needs its parent namespaces, namespaces may only be dropped
when empty, and a non-namespace can never act as a namespace.

The checks and the conflicts they report are Nessie's, with one addition: a namespace deleted by a
commit that also puts new content under it is not empty (``NAMESPACE_NOT_EMPTY``). Nessie looks only
at the head for both checks, so it accepts such a commit and leaves the new content without its
namespace; that is the one deliberate difference (see ``docs/nessie-differences.md``).
"""

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
    ``added_namespaces`` and deletes ``deleted`` (key -> payload it had), against ``head``.

    Each conflict is reported once, in the order found: for each distinct parent of a created key,
    the missing namespaces from that parent upwards, or the non-namespace found there; then each
    deleted namespace that still has children."""
    found: dict[tuple[ConflictType, ContentKey], Conflict] = {}

    def report(conflict_type: ConflictType, key: ContentKey) -> None:
        found.setdefault((conflict_type, key), Conflict.of(conflict_type, key))

    namespaces_here = set(added_namespaces)
    parents = list(dict.fromkeys(k.parent for k in created if k.parent is not None))
    head.load_if_necessary(
        [to_store_key(p) for parent in parents for p in _self_and_parents(parent)]
        + [to_store_key(k) for k in deleted]
    )
    for parent in parents:
        if parent in namespaces_here:
            continue
        # Walk up while the namespace is missing at the head; the first one found must be a namespace.
        current: ContentKey | None = parent
        while current is not None:
            element = head.get(to_store_key(current))
            if element is not None and element.op.exists:
                if element.op.payload != NAMESPACE_PAYLOAD:
                    report(ConflictType.NOT_A_NAMESPACE, current)
                break
            report(ConflictType.NAMESPACE_ABSENT, current)
            current = current.parent
    for key, payload in deleted.items():
        if payload != NAMESPACE_PAYLOAD:
            continue
        # lochkit's addition: new content under a namespace this commit deletes (and does not put
        # back) would be left without its namespace.
        orphans = key not in namespaces_here and any(k.starts_with(key) and k != key for k in created)
        if orphans or _has_live_child(head, key, deleted):
            report(ConflictType.NAMESPACE_NOT_EMPTY, key)
    return list(found.values())


def _has_live_child(head: StoreIndex, namespace: ContentKey, deleted: Mapping[ContentKey, int]) -> bool:
    children = StoreKey(store_key_min(namespace) + "\x01")
    for element in head.iterate(children, children):
        if not element.op.exists:
            continue
        child = from_store_key(element.key)
        if child is not None and child not in deleted:
            return True
    return False


def _self_and_parents(key: ContentKey) -> list[ContentKey]:
    """``key`` and its parents, nearest first."""
    return [ContentKey(key.elements[:n]) for n in range(len(key.elements), 0, -1)]
