"""Store keys: the sort keys of every index.

A store key is one string whose elements are joined by U+0000. Python compares ``str`` by code
point, which is exactly UTF-8 byte order, so a plain ``str`` gives the one ordering used everywhere
(in-memory sorting, binary search, stripe boundaries and the prefix compression of serialised
indexes). Nessie's Java code orders by UTF-16 code units instead; the two differ only for
characters above U+FFFF.
"""

from __future__ import annotations

from typing import Final, NewType

from persist_spi.errors import InputError

StoreKey = NewType("StoreKey", str)

ELEMENT_SEPARATOR: Final = "\x00"
#: Serialised keys end with two zero bytes. Elements are non-empty, so a zero byte at the start of an
#: element marks the end of the key.
KEY_TERMINATOR: Final = b"\x00\x00"
#: Nessie's serialisation buffer size; longer serialised keys are rejected.
MAX_SERIALIZED_KEY_BYTES: Final = 4096


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
