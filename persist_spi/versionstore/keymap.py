"""How content keys map onto store keys: ``"M" \\0 e1 \\1 e2 ... en \\0 "C"``.

``M`` is the main universe and ``C`` the content variant; U+0001 joins the content key's elements,
so all of one content key's variants are contiguous and a key's children sort right after it.
"""

from __future__ import annotations

from typing import Final

from persist_spi.keys import StoreKey
from persist_spi.versionstore.content import ContentKey

_UNIVERSE: Final = "M\x00"
_CONTENT_SUFFIX: Final = "\x00C"


def to_store_key(key: ContentKey) -> StoreKey:
    return StoreKey(_UNIVERSE + "\x01".join(key.elements) + _CONTENT_SUFFIX)


def store_key_min(key: ContentKey) -> StoreKey:
    """Lowest store key of ``key`` (and, as a prefix, of its children)."""
    return StoreKey(_UNIVERSE + "\x01".join(key.elements))


def store_key_max(key: ContentKey) -> StoreKey:
    """Highest store key of ``key`` itself (not of its children)."""
    return StoreKey(store_key_min(key) + "\x00\xff")


def from_store_key(store_key: str) -> ContentKey | None:
    """The content key, or None for keys of other universes or variants."""
    if not store_key.startswith(_UNIVERSE) or not store_key.endswith(_CONTENT_SUFFIX):
        return None
    body = store_key[len(_UNIVERSE) : -len(_CONTENT_SUFFIX)]
    if not body or "\x00" in body:
        return None
    return ContentKey(tuple(body.split("\x01")))
