"""What the test session collected is frozen out of garbage collection (tests/conftest.py), so a
``gc.collect()`` in the code under test walks only what the tests made; cyclic garbage the tests
make is still collected."""

from __future__ import annotations

import gc
import weakref


def test_what_collection_built_is_left_out_of_garbage_collection() -> None:
    assert gc.get_freeze_count() > 10_000


def test_cycles_made_by_a_test_are_still_collected() -> None:
    class Node:
        other: object

    a, b = Node(), Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    del a, b
    gc.collect()
    assert gone() is None
