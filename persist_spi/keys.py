"""Store keys: the sort keys of every index, and the one order they sort in.

A store key is one string whose elements are joined by U+0000. Keys sort as Nessie sorts them, by
Java's ``String.compareTo``: by UTF-16 code unit. Python compares ``str`` by code point instead; the
two orders differ only where a character above U+FFFF (two code units in UTF-16, the first from
D800..DBFF) meets one of U+E000..U+FFFF: Java puts the former first. Every comparison of keys
(sorting, binary search, stripe bounds, range ends, merges) goes through :func:`key_order` or the
helpers below, which keep plain ``str`` comparison wherever it gives the same answer.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Sequence
from typing import Final, NewType, TypeVar

from persist_spi.errors import InputError

StoreKey = NewType("StoreKey", str)

ELEMENT_SEPARATOR: Final = "\x00"
#: Serialised keys end with two zero bytes. Elements are non-empty, so a zero byte at the start of an
#: element marks the end of the key.
KEY_TERMINATOR: Final = b"\x00\x00"
#: Nessie's serialisation buffer size; longer serialised keys are rejected.
MAX_SERIALIZED_KEY_BYTES: Final = 4096

#: Characters UTF-16 writes as a surrogate pair.
_SUPPLEMENTARY: Final = re.compile("[\U00010000-\U0010ffff]")
#: From U+D800 on, a character's place in UTF-16 order can differ from its code point's.
#: (A lone surrogate is spelled ``chr(0xD800)``: mypyc compiles no surrogate in a literal.)
_FROM_D800: Final = re.compile(f"[{chr(0xD800)}-\U0010ffff]")

_S = TypeVar("_S", bound=str)


def key_order(text: str) -> str:
    """The sort key of Nessie's order: a string whose code-point order is ``text``'s UTF-16 order.

    That is ``text`` with every character above U+FFFF replaced by its surrogate pair (so the string
    holds UTF-16 code units). Strings without such characters, nearly all, are returned as they are.
    Use it as ``key=`` of ``sorted``, ``min``, ``bisect`` or ``heapq.merge``, or compare two results.
    """
    if text.isascii():
        return text
    return _SUPPLEMENTARY.sub(_surrogate_pair, text)


#: For binary searches, which ask again and again for the same few keys (their first pivots).
_cached_key_order: Final = functools.lru_cache(maxsize=4096)(key_order)


def _surrogate_pair(match: re.Match[str]) -> str:
    offset = ord(match.group()) - 0x10000
    return chr(0xD800 + (offset >> 10)) + chr(0xDC00 + (offset & 0x3FF))


def orders_by_code_point(text: str) -> bool:
    """True if plain ``str`` comparison of ``text`` with any string gives Nessie's order: ``text`` has
    no character from U+D800 on (the two orders first differ at a character both strings have there)."""
    return text.isascii() or _FROM_D800.search(text) is None


def key_less(a: str, b: str) -> bool:
    """``a`` sorts before ``b`` in Nessie's order."""
    if a.isascii() or b.isascii() or _SUPPLEMENTARY.search(a + b) is None:  # one scan, not two
        return a < b
    return key_order(a) < key_order(b)


def sort_keys(keys: Iterable[_S]) -> list[_S]:
    """``keys`` in Nessie's order (a plain sort when no key holds a character from U+D800 on)."""
    items = list(keys)
    if orders_by_code_point("".join(items)):
        items.sort()
    else:
        items.sort(key=key_order)
    return items


def bisect_keys(keys: Sequence[str], k: str, *, right: bool = False) -> int:
    """Where ``k`` goes in ``keys`` (sorted in Nessie's order), as ``bisect_left``/``bisect_right``."""
    find = bisect.bisect_right if right else bisect.bisect_left
    if orders_by_code_point(k):
        return find(keys, k)
    return find(keys, key_order(k), key=_cached_key_order)


def key(*elements: str) -> StoreKey:
    """Join non-empty elements into a store key."""
    if not elements:
        raise InputError("A store key needs at least one element")
    for i, element in enumerate(elements):
        if not element:
            raise InputError(
                f"Element #{i} of store key {list(elements)!r} is empty; elements must not be empty"
            )
        if ELEMENT_SEPARATOR in element:
            raise InputError(f"Element #{i} of store key {list(elements)!r} contains U+0000")
    return StoreKey(ELEMENT_SEPARATOR.join(elements))


def key_from_string(raw: str) -> StoreKey:
    """Wrap a raw key string (elements already joined by U+0000) without checks."""
    return StoreKey(raw)


def key_elements(k: str) -> list[str]:
    return k.split(ELEMENT_SEPARATOR)


def serialize_key(k: str) -> bytes:
    """UTF-8 bytes of the raw key, then the ``00 00`` terminator."""
    try:
        raw = k.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputError(f"Unmappable surrogate character in store key {k!r} at position {e.start}") from None
    if len(raw) + 2 > MAX_SERIALIZED_KEY_BYTES:
        raise InputError(
            f"Serialized key too big: {len(raw) + 2} bytes, the maximum is {MAX_SERIALIZED_KEY_BYTES}"
        )
    return raw + KEY_TERMINATOR


def starts_with_elements_or_parts(k: str, prefix: str) -> bool:
    """True if ``k`` equals ``prefix`` or continues it with an element (U+0000) or part (U+0001) break."""
    if not k.startswith(prefix):
        return False
    return len(k) == len(prefix) or k[len(prefix)] in "\x00\x01"


def ends_with_element(k: str, element: str) -> bool:
    return k == element or k.endswith(ELEMENT_SEPARATOR + element)
