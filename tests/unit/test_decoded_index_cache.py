"""The cache of decoded indexes by their bytes: every caller gets an index of its own to change."""

from __future__ import annotations

from persist_spi.ids import ObjId
from persist_spi.indexes.action import Action
from persist_spi.indexes.elements import CommitOp, IndexElement
from persist_spi.indexes.store_index import DecodedIndexCache, StoreIndexImpl, deserialize_index, new_index
from persist_spi.keys import key


def _index(*names: str) -> StoreIndexImpl:
    index = new_index()
    for n, name in enumerate(names):
        index.add(IndexElement(key(name), CommitOp(Action.ADD, 0, ObjId(bytes([n]) * 32))))
    return index


def test_a_put_index_is_a_copy_the_caller_may_go_on_changing() -> None:
    cache = DecodedIndexCache()
    index = _index("a", "b")
    data = index.serialize()
    cache.put(data, index)
    index.add(IndexElement(key("c"), CommitOp(Action.ADD, 0, ObjId(b"\x09" * 32))))
    assert cache.get(data).keys() == [key("a"), key("b")]
    assert cache.hits == 1


def test_an_adopted_index_is_served_as_copies() -> None:
    cache = DecodedIndexCache()
    data = _index("a", "b").serialize()
    cache.adopt(data, _index("a", "b"))
    first = cache.get(data)
    first.add(IndexElement(key("z"), CommitOp(Action.ADD, 0, ObjId(b"\x07" * 32))))
    second = cache.get(data)
    assert second.keys() == [key("a"), key("b")]
    assert second.serialize() == data  # served as the bytes it was adopted for
    assert (cache.hits, cache.misses) == (2, 0)


def test_a_miss_decodes_once_and_serves_copies() -> None:
    cache = DecodedIndexCache()
    data = _index("a", "b", "c").serialize()
    first = cache.get(data)
    first.rewrite_actions({Action.ADD: Action.INCREMENTAL_ADD})
    second = cache.get(data)
    assert [e.op.action for e in second.iterate()] == [Action.ADD] * 3
    assert second.serialize() == deserialize_index(data).serialize() == data
    assert (cache.hits, cache.misses) == (1, 1)


def test_the_cache_keeps_at_most_its_number_of_indexes_newest_first() -> None:
    """Bounded by count as well as bytes: each index kept is walked by every full collection."""
    cache = DecodedIndexCache(max_entries=2)
    datas = [_index(f"k{n}").serialize() for n in range(3)]
    for data in datas:
        cache.adopt(data, deserialize_index(data))
    assert cache.get(datas[2]).keys() == [key("k2")]
    assert cache.get(datas[1]).keys() == [key("k1")]
    assert (cache.hits, cache.misses) == (2, 0)
    assert cache.get(datas[0]).keys() == [key("k0")]  # evicted: decoded again
    assert cache.misses == 1
