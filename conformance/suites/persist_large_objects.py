"""Large objects: stored and read back byte for byte at several sizes up to the database's declared
hard limit, exactly at it and just below it; one byte more is refused before anything is written.

A backend without a declared limit is taken up to :data:`UNLIMITED_CEILING`. Sizes are sizes of the
serialised object, which is what the hard limit counts.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Final

import pytest

from conformance.harness import BackendUnderTest
from conformance.suites.base import ConformanceSuite
from persist_spi.codec import ObjCodec
from persist_spi.errors import ObjTooLarge
from persist_spi.objs import ContentValueObj, content_value, tag_obj
from persist_spi.persist import Persist

#: How far objects go on a backend that declares no hard limit: a few MiB.
UNLIMITED_CEILING: Final = 4 * 1024 * 1024
_64_KIB: Final = 64 * 1024

#: Where each size sits relative to the ceiling (the declared limit, else UNLIMITED_CEILING).
SIZES: Final[dict[str, Callable[[int], int]]] = {
    "just-below-64KiB": lambda ceiling: _64_KIB - 1,
    "just-above-64KiB": lambda ceiling: _64_KIB + 1,
    "half-the-ceiling": lambda ceiling: ceiling // 2,
    "one-below-the-ceiling": lambda ceiling: ceiling - 1,
    "at-the-ceiling": lambda ceiling: ceiling,
}


def value_of_serialized_size(size: int, codec: ObjCodec, content_id: str = "large") -> ContentValueObj:
    """A content value of random bytes whose serialised form (by ``codec``) is exactly ``size`` bytes
    long."""
    overhead = len(codec.encode(content_value(content_id, 1, b"")).data)
    length = max(0, size - overhead)
    for _ in range(4):  # the length prefix of the bytes grows with them: converge on it
        probe = len(codec.encode(content_value(content_id, 1, bytes(length))).data)
        if probe == size:
            return content_value(content_id, 1, os.urandom(length))
        length += size - probe
    raise ValueError(f"no content value serialises to exactly {size} bytes")


def ceiling(backend: BackendUnderTest) -> int:
    limit = backend.capabilities.hard_object_size_limit
    return UNLIMITED_CEILING if limit is None else limit


def _assert_same_bytes(stored: object, expected: ContentValueObj) -> None:
    assert isinstance(stored, ContentValueObj), f"read back a {type(stored).__name__}"
    got, want = stored.data, expected.data
    if got != want:
        differ = next(
            (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want))
        )
        raise AssertionError(
            f"{len(want)} bytes stored, {len(got)} read back, the first difference at offset {differ}"
        )
    assert stored == expected


class PersistLargeObjectsSuite(ConformanceSuite):
    area = "persist.large-objects"

    @pytest.mark.parametrize("where", list(SIZES))
    def test_large_object_round_trips_byte_for_byte(
        self, persist: Persist, lochkit_backend: BackendUnderTest, where: str
    ) -> None:
        """Stored (insert-if-absent), read back by every read, replaced by an upsert of the same
        size, read back again."""
        size = SIZES[where](ceiling(lochkit_backend))
        codec = lochkit_backend.adapter.layout.codec
        obj = value_of_serialized_size(size, codec)
        assert len(codec.encode(obj).data) == size
        assert persist.store_obj(obj) is True, f"a new {size}-byte object was reported as already present"
        _assert_same_bytes(persist.fetch_obj(obj.id), obj)
        [bulk] = persist.fetch_objs_if_exist([obj.id])
        _assert_same_bytes(bulk, obj)
        assert persist.store_obj(obj) is False
        replacement = value_of_serialized_size(size, codec, content_id="replacement")
        replacement = ContentValueObj(id=obj.id, content_id="replacement", payload=1, data=replacement.data)
        persist.upsert_objs([replacement])
        _assert_same_bytes(persist.fetch_obj(obj.id), replacement)

    def test_objects_at_the_ceiling_are_stored_in_a_batch(
        self, persist: Persist, lochkit_backend: BackendUnderTest
    ) -> None:
        """Next to a small object, one exactly at the limit and one just below it."""
        top = ceiling(lochkit_backend)
        codec = lochkit_backend.adapter.layout.codec
        small = tag_obj("small")
        at, below = (
            value_of_serialized_size(top, codec, "at"),
            value_of_serialized_size(top - 1, codec, "below"),
        )
        assert persist.store_objs([small, at]) == [True, True]
        assert persist.store_objs([below]) == [True]
        for obj in (at, below):
            _assert_same_bytes(persist.fetch_obj(obj.id), obj)
        assert persist.fetch_obj(small.id) == small

    @pytest.mark.lochkit_requires("hard_object_size_limit")
    def test_one_byte_over_the_limit_is_refused_before_anything_is_written(
        self, persist: Persist, lochkit_backend: BackendUnderTest
    ) -> None:
        limit = ceiling(lochkit_backend)
        codec = lochkit_backend.adapter.layout.codec
        small = tag_obj("small")
        over = value_of_serialized_size(limit + 1, codec, "over")
        for write in (persist.store_objs, persist.upsert_objs):
            with pytest.raises(ObjTooLarge) as refused:
                write([small, over])
            assert (refused.value.size, refused.value.limit) == (limit + 1, limit)
            assert persist.fetch_objs_if_exist([small.id, over.id]) == [None, None]
        assert persist.store_objs([small, value_of_serialized_size(limit, codec, "fits")]) == [True, True]
