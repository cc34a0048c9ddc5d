"""The plain index and its binary format, and the lazy, layered and striped views."""

from __future__ import annotations

import random
import uuid

import pytest

from persist_spi.ids import ObjId
from persist_spi.indexes.action import Action
from persist_spi.indexes.base import StoreIndex
from persist_spi.indexes.elements import CommitOp, IndexElement
from persist_spi.indexes.layered import LayeredIndex
from persist_spi.indexes.lazy import LazyIndex
from persist_spi.indexes.store_index import (
    EMPTY_IMMUTABLE_INDEX,
    deserialize_index,
    index_from_elements,
    new_index,
)
from persist_spi.indexes.striped import LazyStripes, StripedIndex
from persist_spi.keys import StoreKey, key

V32 = ObjId(bytes(range(32)))


def op(
    action: Action = Action.ADD, payload: int = 1, value: ObjId | None = V32, cid: uuid.UUID | None = None
) -> CommitOp:
    return CommitOp(action, payload, value, cid)


def test_empty_indexes_serialise_to_their_markers() -> None:
    assert new_index().serialize() == bytes.fromhex("0200")
    assert EMPTY_IMMUTABLE_INDEX.serialize() == b"\x01"
    assert deserialize_index(bytes.fromhex("0200")).element_count() == 0
    assert deserialize_index(b"\x01").element_count() == 0


def test_worked_example_from_the_design() -> None:
    index = new_index()
    for k, action in (
        (key("a"), Action.ADD),
        (key("a", "b"), Action.ADD),
        (key("a", "c"), Action.INCREMENTAL_ADD),
        (key("b"), Action.REMOVE),
    ):
        index.add(IndexElement(k, op(action)))
    value = V32.hex() + "00" * 16
    expected = (
        "0204"
        "610000"
        "410120"
        + value
        + "01"
        + "620000"
        + "410120"
        + value
        + "03"
        + "630000"
        + "610120"
        + value
        + "05"
        + "620000"
        + "520120"
        + value
    )
    assert index.serialize().hex() == expected


def test_key_elements_and_id_lengths_in_the_format() -> None:
    index = new_index()
    index.add(IndexElement(key("a", "x", "A"), op(value=ObjId(b"\x01\x02\x03\x04"))))
    assert index.serialize().hex() == "0201" + "6100780041000" + "0" + "410104" + "01020304" + "00" * 16
    for length, prefix in ((4, "04"), (32, "20"), (256, "8002")):
        single = new_index()
        single.add(IndexElement(key("k"), op(value=ObjId(bytes(length)))))
        assert single.serialize().hex().startswith("0201" + "6b0000" + "4101" + prefix)


def test_content_ids_are_big_endian_and_none_is_zero() -> None:
    cid = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")
    index = new_index()
    index.add(IndexElement(key("k"), op(value=None, cid=cid)))
    assert index.serialize().hex().endswith("410100" + "00112233445566778899aabbccddeeff")
    assert next(iter(deserialize_index(index.serialize()))).op.content_id == cid


def test_version_one_is_read_without_a_count() -> None:
    v2 = index_from_elements([IndexElement(key(f"k{i}"), op()) for i in range(5)]).serialize()
    v1 = b"\x01" + v2[2:]
    assert deserialize_index(v1).keys() == deserialize_index(v2).keys()


def _sample(n: int, seed: int = 1) -> list[IndexElement]:
    rng = random.Random(seed)
    elements = {}
    for _ in range(n):
        parts = [
            f"{rng.choice(['ns', 'db', 'warehouse', 'ä', 'x'])}{rng.randrange(50)}"
            for _ in range(rng.randrange(1, 4))
        ]
        elements[key(*parts)] = op(
            rng.choice(list(Action)),
            rng.randrange(128),
            ObjId(rng.randbytes(rng.choice([0, 4, 32]))) or None,
            uuid.UUID(int=rng.getrandbits(128)) if rng.random() < 0.5 else None,
        )
    return [IndexElement(k, v) for k, v in elements.items()]


@pytest.mark.parametrize("n", [1, 2, 10, 500])
def test_round_trip_is_byte_identical(n: int) -> None:
    index = index_from_elements(_sample(n))
    data = index.serialize()
    back = deserialize_index(data)
    assert list(back) == list(index)
    assert back.serialize() == data
    assert not back.is_modified
    back.add(next(iter(back)))  # modified but equal content re-serialises identically
    assert back.serialize() == data


def test_tricky_common_prefixes_decode_correctly() -> None:
    keys = [
        key("a/ref-   1"),
        key("a/ref-  11"),
        key("a/ref- 111"),
        key("a/ref-1"),
        key("a", "b"),
        key("a", "b", "c"),
    ]
    index = index_from_elements([IndexElement(k, op()) for k in keys])
    assert deserialize_index(index.serialize()).keys() == sorted(keys)


def test_size_estimate_never_underestimates() -> None:
    index = new_index()
    for element in _sample(300, seed=3):
        index.add(element)
        assert index.estimated_serialized_size() >= len(index.serialize())
    for k in index.keys()[::3]:
        index.remove(k)
    assert index.estimated_serialized_size() >= len(index.serialize())


def test_add_replace_remove_and_modified_flag() -> None:
    index = new_index()
    assert not index.is_modified
    index.update_all(lambda e: None)
    assert not index.is_modified  # nothing to change
    assert index.add(IndexElement(key("k"), op())) is True
    assert index.is_modified
    assert index.add(IndexElement(key("k"), op(payload=5))) is False
    element = index.get(key("k"))
    assert element is not None
    assert element.op.payload == 5
    assert index.remove(key("missing")) is False
    size = len(index.serialize())
    assert index.remove(key("k")) is True
    assert len(index.serialize()) < size


def _grid() -> list[StoreKey]:
    return [key(a, b) for a in "abcdefghij" for b in "ABCDEFGHIJ"]


def test_first_last_and_ranges_follow_the_rules() -> None:
    index = index_from_elements([IndexElement(k, op()) for k in _grid()])
    assert (index.first(), index.last()) == (key("a", "A"), key("j", "J"))
    assert len(list(index.iterate(key("a"), key("j")))) == 90  # ("j") < ("j","A")
    assert len(list(index.iterate(key("b"), key("c")))) == 10
    assert len(list(index.iterate(key("b"), key("c", "A")))) == 11
    assert [e.key for e in index.iterate(key("c"), key("c"))] == [key("c", b) for b in "ABCDEFGHIJ"]
    assert len(list(index.iterate(None, key("b", "B")))) == 12
    with pytest.raises(ValueError, match="after"):
        list(index.iterate(key("d"), key("c")))


@pytest.mark.parametrize("parts", [1, 2, 3, 7, 100])
def test_divide_keeps_order_and_bounds(parts: int) -> None:
    index = index_from_elements([IndexElement(k, op()) for k in _grid()])
    divided = index.divide(parts)
    assert len(divided) == parts
    assert [e.key for d in divided for e in d] == index.keys()
    assert all(len(d.keys()) == 100 // parts for d in divided[:-1])


def test_impossible_divisions_are_rejected() -> None:
    index = index_from_elements([IndexElement(key("a"), op())])
    for parts in (0, -1, 2):
        with pytest.raises(ValueError, match="Number of parts"):
            index.divide(parts)
    with pytest.raises(ValueError, match="Number of parts"):
        new_index().divide(1)


def _first_last(index: StoreIndex) -> tuple[StoreKey, StoreKey]:
    first, last = index.first(), index.last()
    assert first is not None, "an empty part"
    assert last is not None, "an empty part"
    return first, last


@pytest.mark.parametrize("stripes", [2, 3, 5, 16])
def test_striped_index_answers_like_a_flat_index(stripes: int) -> None:
    elements = _sample(400, seed=stripes)
    flat = index_from_elements(elements)
    loads: list[int] = []
    parts = flat.divide(stripes)

    def lazy(i: int) -> LazyIndex:
        part = parts[i]

        def load() -> StoreIndex:
            loads.append(i)
            return index_from_elements(list(part))

        return LazyIndex(load, part.first(), part.last())

    striped = StripedIndex([lazy(i) for i in range(stripes)], [k for p in parts for k in _first_last(p)])
    assert striped.first() == flat.first()
    assert striped.last() == flat.last()
    assert loads == []
    probe = random.Random(9)
    for element in probe.sample(elements, 40):
        assert striped.get(element.key) == flat.get(element.key)
    assert striped.get(key("!")) is None  # sorts before every stripe
    assert list(striped) == list(flat)
    assert [e.key for e in striped.iterate(flat.keys()[50], flat.keys()[300])] == flat.keys()[50:301]
    assert striped.element_count() == flat.element_count()


def test_lazy_stripes_make_only_the_stripes_a_lookup_touches() -> None:
    flat = index_from_elements(_sample(400, seed=3))
    parts = flat.divide(8)
    made: list[int] = []

    def make(i: int) -> LazyIndex:
        made.append(i)
        part = parts[i]
        return LazyIndex(lambda: deserialize_index(part.serialize()), part.first(), part.last())

    stripes = LazyStripes(len(parts), make)
    striped = StripedIndex(stripes, [k for p in parts for k in _first_last(p)])
    assert made == []
    assert not striped.is_loaded
    wanted = flat.keys()[120]
    assert striped.get(wanted) == flat.get(wanted)
    assert len(made) == 1
    assert striped.is_loaded
    assert not striped.is_modified
    assert striped.get(wanted) is not None
    assert len(made) == 1  # made once, then reused
    assert stripes[-1] is stripes[7]
    assert len(stripes[2:5]) == 3
    with pytest.raises(IndexError):
        stripes[8]
    assert list(striped) == list(flat)  # a full scan makes every stripe
    assert sorted(made) == list(range(8))


def test_striped_index_routes_writes_to_stripes() -> None:
    parts = index_from_elements([IndexElement(k, op()) for k in _grid()]).divide(4)
    striped = StripedIndex(parts)
    striped.add(IndexElement(key("0"), op()))  # before everything: first stripe
    striped.add(IndexElement(key("z"), op()))  # after everything: last stripe
    striped.add(IndexElement(key("c", "E", "x"), op()))
    assert striped.stripes()[0].first() == key("0")
    assert striped.stripes()[-1].last() == key("z")
    assert striped.get(key("c", "E", "x")) is not None
    assert striped.remove(key("a", "A")) is True
    assert striped.get(key("a", "A")) is None
    assert striped.keys() == sorted([*_grid()[1:], key("0"), key("z"), key("c", "E", "x")])


def test_layered_index_prefers_updates_and_returns_tombstones() -> None:
    reference = index_from_elements([IndexElement(key(k), op(Action.NONE)) for k in "abcd"])
    updates = index_from_elements(
        [
            IndexElement(key("b"), op(Action.INCREMENTAL_REMOVE)),
            IndexElement(key("c"), op(Action.ADD, payload=9)),
            IndexElement(key("e"), op(Action.ADD)),
        ]
    )
    layered = LayeredIndex(reference, updates)
    assert [(e.key, e.op.action) for e in layered] == [
        (key("a"), Action.NONE),
        (key("b"), Action.INCREMENTAL_REMOVE),
        (key("c"), Action.ADD),
        (key("d"), Action.NONE),
        (key("e"), Action.ADD),
    ]
    removed = layered.get(key("b"))
    assert removed is not None
    assert not removed.op.exists
    assert (layered.first(), layered.last()) == (key("a"), key("e"))
    assert [e.key for e in layered.iterate(key("b"), key("c"))] == [key("b"), key("c")]


def test_lazy_index_knows_first_and_last_without_loading() -> None:
    loaded = []

    def load() -> StoreIndex:
        loaded.append(1)
        return index_from_elements([IndexElement(key(k), op()) for k in "abc"])

    lazy = LazyIndex(load, key("a"), key("c"))
    assert (lazy.first(), lazy.last(), lazy.contains(key("a")), lazy.contains(key("c"))) == (
        key("a"),
        key("c"),
        True,
        True,
    )
    assert loaded == []
    assert lazy.contains(key("b"))
    assert loaded == [1]
    assert lazy.keys() == [key("a"), key("b"), key("c")]
    assert loaded == [1]


@pytest.mark.parametrize("seed", range(8))
def test_reused_element_bytes_always_match_a_fresh_serialisation(seed: int) -> None:
    """Mutating a decoded index (which keeps its elements' original bytes) and serialising it gives
    exactly the bytes of a freshly built index with the same elements."""
    rng = random.Random(seed)
    pool = _sample(300, seed=100 + seed)
    index = deserialize_index(index_from_elements(rng.sample(pool, 150)).serialize())
    for _ in range(60):
        choice = rng.random()
        if choice < 0.4:
            index.add(rng.choice(pool))
        elif choice < 0.7 and index.keys():
            index.remove(rng.choice(index.keys()))
        elif choice < 0.85:
            index.update_all(
                lambda e: (
                    None if rng.random() < 0.1 else (e.op._replace(payload=7) if rng.random() < 0.1 else e.op)
                )
            )
        else:
            index = deserialize_index(index.serialize()).copy()
        fresh = index_from_elements(list(index))
        assert index.serialize() == fresh.serialize()
    parts = index.divide(3)
    for part in parts:
        assert part.serialize() == index_from_elements(list(part)).serialize()


@pytest.mark.parametrize("seed", range(4))
def test_rewriting_actions_equals_the_general_update(seed: int) -> None:
    mapping: dict[Action, Action | None] = {Action.ADD: Action.INCREMENTAL_ADD, Action.REMOVE: None}
    elements = _sample(200, seed=seed)
    fast = deserialize_index(index_from_elements(elements).serialize())
    slow = deserialize_index(index_from_elements(elements).serialize())
    fast.rewrite_actions(mapping)

    def rewrite(e: IndexElement) -> CommitOp | None:
        if e.op.action not in mapping:
            return e.op
        action = mapping[e.op.action]
        return None if action is None else e.op._replace(action=action)

    slow.update_all(rewrite)
    assert list(fast) == list(slow)
    assert fast.serialize() == slow.serialize() == index_from_elements(list(slow)).serialize()
